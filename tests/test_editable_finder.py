"""The start-up lines of an install the tree built, held to paths and setuptools' finder.

The finder is rendered from the template of the newest setuptools on the index (read
from its wheel, never imported): a release whose template assay does not know fails here
first, not as honest flat-layout projects turned INDETERMINATE under `--protect`."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from assay.editable_finder import startup_line_problem

SITE = "v/lib/python3.11/site-packages"
FINDER = "__editable___calc_1_0_finder"
LINE = f"import {FINDER}; {FINDER}.install()"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`_FINDER_TEMPLATE` of the newest setuptools wheel on the index."""
    where = tmp_path_factory.mktemp("setuptools")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:"]
        + ["-d", str(where), "setuptools"],
        check=True,
        timeout=300,
    )
    (wheel,) = where.glob("setuptools-*.whl")
    source = zipfile.ZipFile(wheel).read("setuptools/command/editable_wheel.py")
    for node in ast.parse(source).body:
        if (
            isinstance(node, ast.Assign)
            and getattr(node.targets[0], "id", "") == "_FINDER_TEMPLATE"
        ):
            assert isinstance(node.value, ast.Constant)
            return str(node.value.value)
    raise AssertionError(f"{wheel.name} has no _FINDER_TEMPLATE")


def _problem(root: Path, finder: str, line: str = LINE, owned: bool = True) -> str | None:
    site = root / SITE
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{FINDER}.py").write_text(finder)
    files = {f"{SITE}/{FINDER}.py"} if owned else set()
    tree = str(root / "tree")
    return startup_line_problem(root, SITE, line, files, lambda p: p.startswith(tree + "/"))


def _render(template: str, root: Path, **data: object) -> str:
    tree = str(root / "tree")
    values = {"name": "__editable__.calc-1.0.finder", "mapping": {"calc": f"{tree}/calc"}}
    return template.format(**{**values, "namespaces": {}, **data})


def test_the_newest_setuptools_finder_is_believed(tmp_path: Path, template: str) -> None:
    tree = str(tmp_path / "tree")
    finder = _render(template, tmp_path, namespaces={"ns": [f"{tree}/ns"]})
    assert _problem(tmp_path, finder) is None


def test_code_added_to_the_finder_is_not(tmp_path: Path, template: str) -> None:
    finder = _render(template, tmp_path) + "import os\n"
    assert "not the text setuptools writes" in (_problem(tmp_path, finder) or "")


def test_a_finder_mapping_names_outside_the_tree_is_not(tmp_path: Path, template: str) -> None:
    finder = _render(template, tmp_path, mapping={"calc": "/elsewhere/calc"})
    assert "/elsewhere/calc, outside the tree" in (_problem(tmp_path, finder) or "")


def test_finder_data_that_are_code_are_not(tmp_path: Path, template: str) -> None:
    finder = _render(template, tmp_path).replace(
        "MAPPING: dict[str, str] = {", "MAPPING: dict[str, str] = __import__('os') and {", 1
    )
    assert "data are not literals" in (_problem(tmp_path, finder) or "")


def test_a_finder_the_install_does_not_record_is_not(tmp_path: Path, template: str) -> None:
    problem = _problem(tmp_path, _render(template, tmp_path), owned=False)
    assert "calc_1_0_finder, is not a file of the same install" in (problem or "")


@pytest.mark.parametrize(
    "line",
    ["import sys; sys.modules['calc'] = None", f"import {FINDER}; {FINDER}.install(); import os"],
)
def test_other_import_lines_are_not(tmp_path: Path, template: str, line: str) -> None:
    problem = _problem(tmp_path, _render(template, tmp_path), line=line)
    assert "neither a path nor the line of an editable install's" in (problem or "")


@pytest.mark.parametrize("line", ["", "# a comment", "/anywhere/src"])
def test_paths_and_comments_are_believed(tmp_path: Path, line: str) -> None:
    assert startup_line_problem(tmp_path, SITE, line, set(), lambda p: False) is None


# --------------------------------------------------------------------------- backends' loaders


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The loader modules of the newest meson-python and scikit-build-core on the index."""
    where = tmp_path_factory.mktemp("backends")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:"]
        + ["-d", str(where), "meson-python", "scikit-build-core"],
        check=True,
        timeout=300,
    )
    found = {}
    for wheel in where.glob("*.whl"):
        for name in zipfile.ZipFile(wheel).namelist():
            if name.endswith(("mesonpy/_editable.py", "resources/_editable_redirect.py")):
                found[name.split("/")[0]] = zipfile.ZipFile(wheel).read(name)
    assert set(found) == {"mesonpy", "scikit_build_core"}, found
    return found


def _loader(root: Path, text: bytes, line: str) -> str | None:
    site = root / SITE
    site.mkdir(parents=True, exist_ok=True)
    (site / "_calc_editable_loader.py").write_bytes(text)
    owned = {f"{SITE}/_calc_editable_loader.py"}
    return startup_line_problem(root, SITE, line, owned, lambda p: True)


#: What meson-python appends to its module, and the `.pth` line that calls it.
MESON_INIT = """
def init():
    finder = MesonpyMetaFinder(
        'calc',
        {'calc'},
        '/w/build/cp311',
        ['ninja'],
        False,
    )
    sys.meta_path.insert(0, finder)
    sys.path_hooks.insert(0, finder._path_hook)
"""
MESON_LINE = "import _calc_editable_loader; _calc_editable_loader.init()"
#: What scikit-build-core appends to its module, and the `.pth` line that imports it.
SKBUILD_INSTALL = "\n\ninstall({'calc': '/w/src/calc/__init__.py'}, {}, ['/w/src'], ['calc'], None, False, False, [], [], None)\n"
SKBUILD_LINE = "import _calc_editable_loader"


@pytest.mark.parametrize(
    ("backend", "tail", "line"),
    [("mesonpy", MESON_INIT, MESON_LINE), ("scikit_build_core", SKBUILD_INSTALL, SKBUILD_LINE)],
)
def test_the_newest_backends_loaders_are_believed(
    tmp_path: Path, wheels: dict[str, bytes], backend: str, tail: str, line: str
) -> None:
    assert _loader(tmp_path, wheels[backend] + tail.encode(), line) is None


@pytest.mark.parametrize(
    ("tail", "said"),
    [
        (MESON_INIT + "import os\n", "more than the call with its data"),
        (MESON_INIT.replace("'calc',", "__import__('os'),"), "more than the call with its data"),
    ],
    ids=["code-after", "code-in-the-data"],
)
def test_a_loader_with_more_is_not(
    tmp_path: Path, wheels: dict[str, bytes], tail: str, said: str
) -> None:
    problem = _loader(tmp_path, wheels["mesonpy"] + tail.encode(), MESON_LINE)
    assert said in (problem or ""), problem


def test_a_backend_module_changed_is_not(tmp_path: Path, wheels: dict[str, bytes]) -> None:
    text = wheels["mesonpy"].replace(b"import ", b"import sys, ", 1) + MESON_INIT.encode()
    problem = _loader(tmp_path, text, MESON_LINE)
    assert "no known release of an editable loader" in (problem or ""), problem


# --------------------------------------------------------------------------- editables' bootstrap

BOOTSTRAP = "_editable_impl_calc"


def _bootstrap(root: Path, *maps: str, owned: tuple[str, ...] = ()) -> str | None:
    site = root / SITE
    site.mkdir(parents=True, exist_ok=True)
    text = "\n".join(
        ["from editables.redirector import RedirectingFinder as F", "F.install()", *maps]
    )
    (site / f"{BOOTSTRAP}.py").write_text(text)
    files = {f"{SITE}/{BOOTSTRAP}.py", *(f"{SITE}/{name}" for name in owned)}
    tree = str(root / "tree")
    inside = lambda p: p.startswith(tree + "/")
    return startup_line_problem(root, SITE, f"import {BOOTSTRAP}", files, inside)


def test_the_editables_bootstrap_is_believed(tmp_path: Path) -> None:
    mapped = f"F.map_module('calc', {str(tmp_path / 'tree/calc/__init__.py')!r})"
    assert _bootstrap(tmp_path, mapped) is None


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("F.map_module('calc', '/elsewhere/calc.py')", "maps a module to /elsewhere/calc.py"),
        ("F.map_module('calc', '/x'); import os", "which is not a mapping of a module"),
        ("F.map_module(name='calc', path='/x')", "which is not a mapping of a module"),
        ("import os", "its bootstrap runs `import os`"),
    ],
)
def test_a_bootstrap_doing_more_is_not(tmp_path: Path, line: str, said: str) -> None:
    assert said in (_bootstrap(tmp_path, line) or "")


@pytest.mark.parametrize("mapped", ["tree/docs/right_calc.py", "tree/calc/right.py", "tree/calc"])
def test_a_bootstrap_mapping_a_module_to_another_file_is_not(tmp_path: Path, mapped: str) -> None:
    line = f"F.map_module('calc', {str(tmp_path / mapped)!r})"
    assert "which is not a file of that name" in (_bootstrap(tmp_path, line) or "")


def test_a_bootstrap_mapping_a_module_to_its_file_is_believed(tmp_path: Path) -> None:
    assert _bootstrap(tmp_path, f"F.map_module('calc', {str(tmp_path / 'tree/calc.py')!r})") is None


def test_a_bootstrap_whose_install_brings_its_own_editables_is_not(tmp_path: Path) -> None:
    problem = _bootstrap(tmp_path, owned=("editables/redirector.py",))
    assert "brings its own `editables`" in (problem or "")
