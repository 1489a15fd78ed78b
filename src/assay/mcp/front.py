"""`assay mcp` as it starts: `initialize` answered at once, the SDK loaded meanwhile.

An MCP host waits for the answer to `initialize` before its agent can call a tool, and
importing the SDK takes ~2 s. So the process's stdin and stdout are moved behind two
pipes before the SDK loads: fd 0 and fd 1 become the pipes' SDK ends, on which the SDK's
own stdio transport then runs unchanged. Two threads stand between the pipes and the
client:

- client to SDK: every byte is passed on as it came; when the very first line is an
  `initialize` request that `assay.mcp.early` can answer, the answer goes out before the
  line is passed on. Whatever arrives before the SDK is ready waits in the pipe.
- SDK to client: every line is passed on, except the SDK's own answer to that
  `initialize`, which is dropped once compared with the early one. Should they differ,
  the client holds an answer the server does not stand by: the server stops, saying why.

Without the checked SDK release, or for any other first line, nothing is answered early
and the two threads only relay.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading

TYPE_CHECKING = False  # not `typing`: the host waits for this module
if TYPE_CHECKING:
    from typing import Any

from assay.mcp.early import checked_sdk_installed, early_answer, encode

#: Written on fd 1 once the SDK's transport has let it go: the SDK-to-client relay has
#: passed on everything before it (no JSON line starts with NUL).
_END = b"\0assay-mcp-end\n"
#: Exit status when the SDK's answer to `initialize` differs from the early one.
MISMATCH_EXIT = 70
#: Environment variable: say on stderr when `initialize` was answered early, and whether
#: the SDK had been imported by then.
DEBUG_ENV = "ASSAY_MCP_DEBUG_STARTUP"
#: Seconds to wait, after the SDK ends, for its last lines to be relayed.
_DRAIN_S = 5.0
#: Longest the SDK's import waits for the first line to be answered: the import holds
#: the interpreter lock most of the time, and the answer would queue for it.
_FIRST_LINE_HEAD_START_S = 0.05


class Relay:
    """The two directions between the client's pipes and the SDK's."""

    def __init__(self, to_client: int) -> None:
        self._to_client = to_client
        self._lock = threading.Lock()
        #: The early answer to `initialize` while the SDK's own is still to come.
        self._pending: dict[str, Any] | None = None
        #: Set once the first line from the client has been dealt with.
        self.first_line_done = threading.Event()

    def client_to_sdk(self, from_client: int, to_sdk: int, may_answer: bool) -> None:
        try:
            with open(from_client, "rb", closefd=False) as client:
                first = client.readline()
                answer = early_answer(first) if may_answer and first else None
                if answer is not None:
                    self._pending = answer
                    sdk_loaded = "mcp_types" in sys.modules
                    self.send(encode(answer))
                    if os.environ.get(DEBUG_ENV):
                        sys.stderr.write(
                            f"assay mcp: initialize answered early (SDK imported: {sdk_loaded})\n"
                        )
                        sys.stderr.flush()
                self.first_line_done.set()
                data = first
                while data:
                    _write_all(to_sdk, data)
                    data = client.read1(65536)
        except OSError:  # the SDK is gone (EPIPE) or the client's pipe broke
            pass
        finally:
            self.first_line_done.set()
            os.close(to_sdk)  # the SDK's end of input

    def sdk_to_client(self, from_sdk: int) -> None:
        with open(from_sdk, "rb") as sdk:
            for line in sdk:
                if line == _END:
                    return
                if self._pending is not None and self._is_duplicate(line):
                    continue
                self.send(line)

    def send(self, line: bytes) -> None:
        with self._lock:
            _write_all(self._to_client, line)

    def _is_duplicate(self, line: bytes) -> bool:
        """Whether `line` is the SDK's answer to the `initialize` answered early; stops the
        server when it is and says something else."""
        assert self._pending is not None
        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not (isinstance(message, dict) and message.get("id") == self._pending["id"]):
            return False
        if "result" not in message and "error" not in message:
            return False
        early, self._pending = self._pending, None
        if message != early:
            said = line.decode(errors="replace")
            sys.stderr.write(
                "assay mcp: the MCP SDK answered initialize otherwise than the early answer "
                f"(assay.mcp.early); stopping.\nearly: {json.dumps(early)}\nSDK:   {said}"
            )
            sys.stderr.flush()
            os._exit(MISMATCH_EXIT)
        return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _interrupted() -> int:
    from assay.cli_run import interrupted

    return interrupted()


def _private_copy(fd: int) -> int:
    """A copy of `fd` above the standard range that no child inherits."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


def main(allow_sandbox: str = "auto") -> int:
    """Serve `assay mcp` over stdio, clients allowed sandboxes down to `allow_sandbox`;
    the exit status."""
    client_in, client_out = _private_copy(0), _private_copy(1)
    sdk_in, to_sdk = os.pipe()
    from_sdk, sdk_out = os.pipe()
    os.dup2(sdk_in, 0)
    os.dup2(sdk_out, 1)
    os.close(sdk_in)
    os.close(sdk_out)
    relay = Relay(client_out)
    may_answer = checked_sdk_installed()
    threading.Thread(
        target=relay.client_to_sdk, args=(client_in, to_sdk, may_answer), daemon=True
    ).start()
    outgoing = threading.Thread(target=relay.sdk_to_client, args=(from_sdk,), daemon=True)
    outgoing.start()
    relay.first_line_done.wait(_FIRST_LINE_HEAD_START_S)
    try:
        from assay.mcp.server import serve
    except ImportError as exc:
        from assay.mcp.commands import INSTALL_HINT

        sys.stderr.write(
            f"Error: the MCP server needs the mcp package ({exc.name or exc}): {INSTALL_HINT}\n"
        )
        return 1
    except KeyboardInterrupt:  # SIGTERM while loading: the command line's way out
        return _interrupted()
    try:
        serve(allow_sandbox)
    except KeyboardInterrupt:
        return _interrupted()
    _write_all(1, _END)  # the SDK's transport has given fd 1 back: the pipe again
    outgoing.join(_DRAIN_S)
    return 0
