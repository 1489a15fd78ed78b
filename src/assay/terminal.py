"""Text from the repository under verification, made safe to write to a terminal.

Tool output, test names, commands and messages come from code assay does not trust.
Written raw, their control characters act on the reader's terminal: OSC 52 writes the
clipboard, OSC 0 sets the window title, ESC c resets the screen, a carriage return or a
cursor movement overwrites "FAILED" with "passed", the 8-bit CSI (U+009B) starts a
sequence without ESC, and a bidi override shows text in an order other than its own.

So every such character is shown as visible text (`\\x1b`, `\\u202e`) instead. Colour
codes (SGR, `ESC [ ... m`) are removed rather than shown: they carry nothing a reader
needs, showing them would bury the text in `\\x1b[31m`, and passing them through would
let the repository hide a line (concealed, or black on black).
"""

from __future__ import annotations

import re

# Removed first, so that escaping below still sees any ESC a colour code was wrapped around.
_SGR = re.compile(r"\x1b\[[0-9;:]*m")

# C0 controls but tab and newline, DEL, C1 controls, the bidi marks, embeddings, overrides
# and isolates, and lone surrogates (undecodable bytes, which no terminal encoding can write).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)

_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def for_terminal(text: str) -> str:
    """`text` with colour codes removed and every other control character shown escaped;
    newlines and tabs are kept, and a Windows line end becomes a newline."""
    return _UNSAFE.sub(_escaped, _SGR.sub("", text).replace("\r\n", "\n"))


def json_for_terminal(document: str) -> str:
    """JSON text (from `json.dumps(..., ensure_ascii=False)`) with the characters that
    json.dumps leaves raw but a terminal acts on (DEL, C1, bidi controls) written as
    `\\uXXXX`: the same JSON value, safe on a terminal. Such characters can only occur
    inside strings, where `\\uXXXX` is their escape."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", document)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
