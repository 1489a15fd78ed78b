"""Whether a module an editable install imports at start-up is a build backend's own loader.

meson-python and scikit-build-core install a compiled project in editable mode as a `.pth`
line that imports a loader module: the backend's own module (`mesonpy/_editable.py`,
`scikit_build_core/resources/_editable_redirect.py`), copied whole, then a call with the
install's data (`install(...)`, or meson-python's `def init()` that makes its finder).
The loader rebuilds the project when it is imported and finds its modules in the build
directory: what it runs is the tree's build, as building it would. So such a module is
believed when its text begins with a known release of the backend's module, letter for
letter, and what follows is one of those calls with literal arguments only. Read as text
and syntax on the host, never run.
"""

from __future__ import annotations

import ast
import hashlib

__all__ = ["loader_problem"]

#: sha256 -> length of each release of the backends' loader modules.
KNOWN_BODIES: dict[str, int] = {
    "412283a6b91f2cdfb1871857c83f6639b5d91892f02aff8504efa2748dba362c": 10392,  # meson-python 0.13
    "59a6edc8856621abc37dd3bf9a9a705b77cfcb2075869ff3c4d707672a7e0873": 10438,  # 0.14-0.15
    "3b2d61420365c5b8efaa70a6e862edd1d8cdabb7a8dcfcc41a36a8c722cfe669": 13820,  # 0.16
    "351e85aacdad53b5b67f6eb86ebcc69408d0d6bf52454d84478e16d34e7b6ef7": 14079,  # 0.17-0.18
    "2cb1852d99735b986f965bcf75c5578c467b3004a92cd7d7dbd9c25f37e63904": 14119,  # 0.19-0.20
    "d2568b18d13824e1a7d8cc6afc9482f57eb12855b0ed20f8ccca1c553ea91340": 15850,  # 0.21
    "13bd1b5b584b338a4c2ec01552991e632ecb5e94a6fbb612b4576fdd0c17b98c": 15839,  # 0.22
    "536e13dbeedca846a6e737b0e642cb55cf7fa875c76b8cc7220d717b99f7a65a": 4184,  # scikit-build-core 0.4.8-0.5.0
    "1902fce2871dcd6bca7f5b90da944051148e98d1d3c5d93d46f5f36ec0bae52b": 4192,  # 0.5.1
    "bcc34c36ce22c4030e70ecc46844d26e0815728d5cb7e9c722d9a95261212b86": 6686,  # 0.6.0
    "39f56684fe90e04cdfa263ec912662fc026daf010be37504c57877242bf7b0a9": 6317,  # 0.6.1
    "ea96c90d0672d5a448aa3664f23465bf75adc9663563bcd73acd4600faf97b23": 6369,  # 0.7.0-0.10.3
    "c3ac4aceda3d6b226f4b79f3f8fa1ace824cc6f48d823b82a2721f9b7cdf4fd3": 6748,  # 0.10.4-0.10.5
    "275ed23c6118e39c035973c58e6349401ec0f4c1c3366967e60a8583b1ea9951": 6935,  # 0.10.6-0.10.7
    "db2f81e868451ab0d8f4cfe8395dcf12eb956286ff4459e9d6f105f56e3c2a03": 8874,  # 0.11.0
    "ad8f5152678eef4d72d0e3246bbd8e6d1b64d2102092b14ca25ea1a069639b86": 9014,  # 0.11.1-0.11.6
    "ad02f1ad59cf4b7421c3ac2f6350529a58f311485b745ec393b640f6b657b470": 9028,  # 0.12
    "8da9cde28cc0436fae26fbf45fb7d26ed572b5479337acb66a89850c9eb3219c": 28338,  # 1.0.0
    "f3c06631a3b35d39bb2ed6554fce4c46d6807d48b3c3818d978751d680f94ae9": 28790,  # 1.0.1
    "4cad35d5bb2ea7b003baf9fb3bfde29a513c8dec5609ab22ffff38bbe3ace1f2": 29932,  # 1.0.2-1.0.3
    "2e683d249054bf8f0922d44a643eb6a362d90a4116fb58c9c38f90c369684fae": 31284,  # 1.1.0-1.1.1
    "a4b3427384f380254ed6afcfb8efaea40d4e535c01f3c25f67e9a27260cee38f": 31697,  # 1.1.2
}
#: What a backend appends to its module, the arguments of each call named in `_CALLED`
#: reduced to one (`_masked`): the call at import (meson-python before 0.21,
#: scikit-build-core), and meson-python's `init` that its `.pth` line calls.
_CALLED = frozenset({"install", "MesonpyMetaFinder"})
_INSTALL_AT_IMPORT = "install(0)\n"
_INIT = (
    "def init():\n"
    "    finder = MesonpyMetaFinder(0)\n"
    "    sys.meta_path.insert(0, finder)\n"
    "    sys.path_hooks.insert(0, finder._path_hook)\n"
)


def loader_problem(text: bytes, called: str | None) -> str | None:
    """Why `text`, a module a `.pth` line imports (and then calls `called` of), may not be a
    build backend's editable loader, or None when it is one."""
    for digest, length in KNOWN_BODIES.items():
        if hashlib.sha256(text[:length]).hexdigest() != digest:
            continue
        tail = _masked(text[length:])
        expected = _masked((_INIT if called == "init" else _INSTALL_AT_IMPORT).encode())
        if called in (None, "init") and tail is not None and tail == expected:
            return None
        return "its loader adds to the backend's own module more than the call with its data"
    return "it imports a module that is no known release of an editable loader"


def _masked(text: bytes) -> str | None:
    """The syntax of `text` with the arguments of the calls in `_CALLED` reduced to one
    constant, if each of them is a literal; None when it is not such code."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _CALLED
        ):
            if node.keywords or not all(_literal(arg) for arg in node.args):
                return None
            node.args = [ast.Constant(0)]
    return ast.dump(tree)


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
