"""Start-up of `assay mcp` until it answers `initialize`, as a ratio against `python -c pass`.

    python bench/bench_mcp.py [--repeat N]

An MCP host starts the server when a session begins and waits for its answer to
`initialize` before the agent can call a tool; that wait is measured here: the process
started, one `initialize` request written to its stdin as JSON-RPC, the clock stopped
at the answer; its CPU is the server's own (/proc) at that moment. Goal: under 100 ms.
The server answers `initialize` itself while the SDK loads (`assay.mcp.front`);
`python -c "import mcp.server.mcpserver"` is printed too: what the answer would wait for
otherwise. Prints one line per figure and exits non-zero when the server did not answer
as the figure assumes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PYTHON = sys.executable
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # measure what users get: bytecode reused
ASSAY = shutil.which("assay", path=os.path.dirname(PYTHON)) or shutil.which("assay") or ""
GOAL_S = 0.100
#: Longest a start-up may take before the server is taken for hung.
TIMEOUT_S = 60.0


def initialize_request() -> bytes:
    from mcp_types.version import LATEST_HANDSHAKE_VERSION

    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_HANDSHAKE_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "bench_mcp", "version": "0"},
        },
    }
    return json.dumps(request).encode() + b"\n"


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_of(pid: int) -> float:
    """CPU seconds process `pid` has used so far (user and system, from /proc)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def until_initialized(request: bytes, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds from starting `assay mcp` to its answer to `initialize`."""
    started = time.perf_counter()
    server = subprocess.Popen(
        [ASSAY, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(request)
    server.stdin.flush()
    ready, _, _ = select.select([server.stdout], [], [], TIMEOUT_S)
    line = server.stdout.readline() if ready else b""
    took = time.perf_counter() - started
    cpu = cpu_of(server.pid)
    try:  # communicate closes stdin: the server's end of the session
        _, err = server.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        server.kill()
        _, err = server.communicate()
    try:
        answer = json.loads(line)
    except ValueError:
        answer = {}
    if answer.get("id") != 1 or "serverInfo" not in answer.get("result", {}):
        said = (line + err).decode(errors="replace")
        sys.exit(f"assay mcp did not answer initialize ({server.returncode}):\n{said[-2000:]}")
    return took, cpu


def wall(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = cpu_of_children()
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"benchmark command failed ({done.returncode}): {argv}\n{done.stderr[-2000:]!r}")
    return took, cpu_of_children() - before


def median(measure: object, repeat: int) -> tuple[float, float]:
    assert callable(measure)
    measure()  # warm the file cache and the bytecode
    runs = [measure() for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    if not ASSAY:
        sys.exit("assay is not installed next to this interpreter")
    request = initialize_request()
    with tempfile.TemporaryDirectory() as state:
        env = {**os.environ, "ASSAY_CACHE_DIR": state}
        rows = {
            "python -c pass": median(lambda: wall([PYTHON, "-c", "pass"], env), args.repeat),
            "python -c 'import mcp.server.mcpserver' (SDK)": median(
                lambda: wall([PYTHON, "-c", "import mcp.server.mcpserver"], env), args.repeat
            ),
        }
        rows["assay mcp --help (click, not the server)"] = median(
            lambda: wall([ASSAY, "mcp", "--help"], env), args.repeat
        )
        figures = {
            "assay mcp, until initialize is answered": median(
                lambda: until_initialized(request, env), args.repeat
            ),
        }
    base = rows["python -c pass"]
    for name, (took, cpu) in {**rows, **figures}.items():
        line = f"{name:<48} wall {took * 1000:>7.1f} ms  cpu {cpu * 1000:>7.1f} ms"
        if name in figures:
            ratio = f"ratio {took / base[0]:.1f}x wall, {cpu / base[1]:.1f}x cpu"
            verdict = "met" if min(took, cpu) < GOAL_S else "NOT MET"
            line += f"   {ratio}   goal < {GOAL_S * 1000:.0f} ms: {verdict}"
        print(line)


if __name__ == "__main__":
    main()
