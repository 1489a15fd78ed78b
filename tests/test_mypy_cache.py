"""mypy starts warm in the sandbox, from a cache of assay's per repository, and still finds
every type error."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from assay.evidence import Check
from assay.mypy_cache import MYPY_CACHES, mypy_cache_for
from assay.pipeline import VerifyOptions, make_plan, verify
from assay.verdict import Kind, Status, Verdict
from tests.cli import path_with_venv
from tests.repos import write

TYPED = {
    "pyproject.toml": "[tool.mypy]\nstrict = true\nfiles = ['pkg']\n",
    "pkg/__init__.py": "",
    "pkg/calc.py": "def double(x: int) -> int:\n    return x * 2\n",
}


#: What mypy writes in any cache directory it is given, before it caches anything.
MYPY_OWN_MARKERS = ("CACHEDIR.TAG", ".gitignore")


@pytest.fixture
def typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", path_with_venv())
    return write(tmp_path / "typed", TYPED)


def mypy_verdict(repo: Path, state: Path) -> Verdict:
    options = VerifyOptions(use_cache=False, cache_dir=str(state), kinds=frozenset({"typecheck"}))
    report = verify(repo, options)
    (mypy,) = [e for e in report.checks if e.check.tool == "mypy"]
    assert report.status in (Status.VERIFIED, Status.FAILED), report.note
    return mypy.verdict


def test_a_planted_type_error_is_found_with_a_warm_cache(typed: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert mypy_verdict(typed, state) is Verdict.PASS
    (cache,) = (state / MYPY_CACHES).iterdir()
    kept = [p for p in cache.rglob("*") if p.is_file() and p.name not in MYPY_OWN_MARKERS]
    assert kept, "mypy did not keep its cache in assay's"
    (typed / "pkg" / "calc.py").write_text('def double(x: int) -> int:\n    return "x"\n')
    assert mypy_verdict(typed, state) is Verdict.FAIL
    (typed / "pkg" / "calc.py").write_text(TYPED["pkg/calc.py"])
    assert mypy_verdict(typed, state) is Verdict.PASS


def test_a_type_error_of_the_same_size_with_its_old_mtime_put_back_is_found(
    typed: Path, tmp_path: Path
) -> None:
    """mypy takes a module from its cache unchecked when its size and whole-second mtime
    are those it recorded. The workspace copy kept every mtime, so an edit of the same size
    followed by `touch -d` (the old mtime put back) passed on a warm run."""
    state = tmp_path / "state"
    calc = typed / "pkg" / "calc.py"
    old = calc.stat()
    assert mypy_verdict(typed, state) is Verdict.PASS
    bad = 'def double(x: int) -> int:\n    return "2x2"\n'
    assert len(bad) == len(TYPED["pkg/calc.py"])
    calc.write_text(bad)
    os.utime(calc, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert mypy_verdict(typed, state) is Verdict.FAIL


def test_each_repository_has_its_own_and_a_judged_change_none(typed: Path, tmp_path: Path) -> None:
    other = write(tmp_path / "other", TYPED)
    checks = make_plan(typed, VerifyOptions()).checks
    state = tmp_path / "state"
    mine = mypy_cache_for(typed, checks, sandbox="auto", judged_against_base=False, state_dir=state)
    theirs = mypy_cache_for(
        other, checks, sandbox="auto", judged_against_base=False, state_dir=state
    )
    assert mine is not None and theirs is not None and mine != theirs
    judged = mypy_cache_for(
        typed, checks, sandbox="auto", judged_against_base=True, state_dir=state
    )
    assert judged is None


PLANTS_IN_EVERY_CACHE = """\
import os
import sys


def test_plants_in_the_caches_it_can_see():
    # The warm caches are bound into the sandbox at their own paths: a test finds them
    # among its mounts and writes an entry a later run's mypy would read.
    for line in open("/proc/self/mountinfo"):
        point = line.split()[4]
        if "/mypy/" in point:
            try:
                with open(os.path.join(point, "planted"), "w") as entry:
                    entry.write("{}")
            except OSError:
                pass
"""


def test_only_mypy_may_write_its_cache(typed: Path, tmp_path: Path) -> None:
    write(typed, {"tests/test_plant.py": PLANTS_IN_EVERY_CACHE})
    state = tmp_path / "state"
    kinds = frozenset({"typecheck", "test"})
    report = verify(typed, VerifyOptions(use_cache=False, cache_dir=str(state), kinds=kinds))
    assert report.status is Status.VERIFIED, report.note
    assert {e.check.tool for e in report.checks} >= {"mypy", "pytest"}
    (cache,) = (state / MYPY_CACHES).iterdir()
    assert [p for p in cache.rglob("*") if p.is_file() and p.name not in MYPY_OWN_MARKERS]
    assert not list(cache.rglob("planted")), "a test wrote into mypy's warm cache"


#: A mypy plugin of the project's own: it runs in mypy's process, where it could write
#: entries into whatever cache mypy was given, for modules as a later tree will hold them.
PLANTING_PLUGIN = """\
import os
import sys

from mypy.plugin import Plugin


def plugin(version):
    where = os.environ.get("MYPY_CACHE_DIR")
    if where:
        with open(os.path.join(where, "planted"), "w") as entry:
            entry.write("{}")
    return Plugin
"""


def _no_shared_cache(typed: Path, state: Path) -> None:
    """mypy passes on `typed`, nothing was planted in a warm cache, and none is given."""
    assert mypy_verdict(typed, state) is Verdict.PASS
    planted = list((state / MYPY_CACHES).rglob("planted")) if (state / MYPY_CACHES).exists() else []
    assert planted == []
    checks = make_plan(typed, VerifyOptions()).checks
    assert (
        mypy_cache_for(typed, checks, sandbox="auto", judged_against_base=False, state_dir=state)
        is None
    )


@pytest.mark.parametrize(
    ("config", "text"),
    [
        (
            "pyproject.toml",
            "[tool.mypy]\nstrict = true\nfiles = ['pkg']\nplugins = ['planting.py']\n",
        ),
        ("mypy.ini", "[mypy]\nstrict = True\nfiles = pkg\nplugins = planting.py\n"),
        ("setup.cfg", "[mypy]\nstrict = True\nfiles = pkg\nplugins = planting.py\n"),
    ],
)
def test_mypy_with_plugins_gets_no_shared_cache(
    typed: Path, tmp_path: Path, config: str, text: str
) -> None:
    files = {config: text, "planting.py": PLANTING_PLUGIN}
    if config != "pyproject.toml":
        files["pyproject.toml"] = ""
    write(typed, files)
    _no_shared_cache(typed, tmp_path / "state")


#: An interpreter for mypy to ask for its search path that is a script of the tree: mypy
#: runs it, in the check that may write the cache.
PLANTING_INTERPRETER = """\
#!/bin/sh
[ -n "$MYPY_CACHE_DIR" ] && echo '{{}}' > "$MYPY_CACHE_DIR/planted"
exec {python} "$@"
"""


@pytest.mark.parametrize("where", ["pyproject.toml", "mypy.ini", "command"])
def test_mypy_told_to_run_an_interpreter_gets_no_shared_cache(
    typed: Path, tmp_path: Path, where: str
) -> None:
    files = {"planting.sh": PLANTING_INTERPRETER.format(python=sys.executable)}
    if where == "pyproject.toml":
        files[where] = (
            "[tool.mypy]\nstrict = true\nfiles = ['pkg']\npython_executable = './planting.sh'\n"
        )
    elif where == "mypy.ini":
        files[where] = "[mypy]\nstrict = True\nfiles = pkg\npython_executable = ./planting.sh\n"
    else:
        files["assay.toml"] = (
            '[commands]\ntypecheck = "mypy --python-executable ./planting.sh pkg"\n'
        )
    write(typed, files)
    (typed / "planting.sh").chmod(0o755)
    _no_shared_cache(typed, tmp_path / "state")


def test_a_configuration_too_deep_to_read_gets_no_shared_cache(typed: Path, tmp_path: Path) -> None:
    # Nested past the interpreter's recursion limit: tomllib raises RecursionError, which
    # had ended the whole run INDETERMINATE ("assay could not finish").
    deep = "[tool.x]\na = " + "[" * 50_000 + "]" * 50_000 + "\n"
    write(typed, {"mypy.ini": "[mypy]\nfiles = pkg\n"})
    checks = [c for c in make_plan(typed, VerifyOptions()).checks if c.tool == "mypy"]
    write(typed, {"pyproject.toml": deep})
    assert checks
    state = tmp_path / "state"
    assert (
        mypy_cache_for(typed, checks, sandbox="auto", judged_against_base=False, state_dir=state)
        is None
    )


def test_each_mypy_check_keeps_a_cache_of_its_own(tmp_path: Path, typed: Path) -> None:
    """Two mypy checks run side by side (tox's `mypy pkg` and `mypy tests/typing`): one
    cache written by both at once crashed one of them with an INTERNAL ERROR."""
    write(
        typed,
        {
            "tox.ini": (
                "[tox]\nenv_list = typing-{tests,src}\n[testenv:typing-{tests,src}]\n"
                "commands =\n    tests: mypy tests/typing\n    src: mypy pkg\n"
            ),
            "tests/typing/check.py": "x: int = 1\n",
        },
    )
    state = tmp_path / "state"
    options = VerifyOptions(use_cache=False, cache_dir=str(state), kinds=frozenset({"typecheck"}))
    report = verify(typed, options)
    assert report.status is Status.VERIFIED, report.note
    assert len([e for e in report.checks if e.check.tool == "mypy"]) == 2
    (cache,) = (state / MYPY_CACHES).iterdir()
    owned = sorted(p for p in cache.iterdir() if p.is_dir())
    assert len(owned) == 2, owned
    for place in owned:
        assert [p for p in place.rglob("*") if p.is_file() and p.name not in MYPY_OWN_MARKERS]


CRASHING_PLUGIN = """\
from mypy.plugin import Plugin


class Crash(Plugin):
    def get_function_hook(self, fullname):
        if fullname.endswith(".double"):
            def hook(ctx):
                raise RuntimeError("the plugin broke")
            return hook
        return None


def plugin(version):
    return Crash
"""


def test_a_crash_of_mypy_is_not_a_failure_of_the_code(typed: Path, tmp_path: Path) -> None:
    write(
        typed,
        {
            "pyproject.toml": (
                "[tool.mypy]\nstrict = true\nfiles = ['pkg']\nplugins = ['crash.py']\n"
            ),
            "crash.py": CRASHING_PLUGIN,
            "pkg/use.py": "from pkg.calc import double\n\nfour: int = double(2)\n",
        },
    )
    options = VerifyOptions(
        use_cache=False, cache_dir=str(tmp_path / "state"), kinds=frozenset({"typecheck"})
    )
    report = verify(typed, options)
    (mypy,) = [e for e in report.checks if e.check.tool == "mypy"]
    assert mypy.verdict is Verdict.INCONCLUSIVE, mypy.note
    assert report.status is Status.INDETERMINATE
    assert "crashed in its own code" in (mypy.note or "") and "INTERNAL ERROR" in mypy.note


#: A CI step that runs mypy in a subdirectory: mypy reads that directory's configuration.
SUBDIR_WORKFLOW = """\
on: push
jobs:
  types:
    runs-on: ubuntu-latest
    defaults:
      run:
        working-directory: sub
    steps:
      - uses: actions/checkout@v4
      - run: mypy lib.py
"""


@pytest.mark.parametrize("config", ["mypy.ini", "setup.cfg", "pyproject.toml"])
def test_plugins_in_the_configuration_of_a_subdirectory_mypy_runs_in_get_no_shared_cache(
    typed: Path, tmp_path: Path, config: str
) -> None:
    # mypy run in `sub` reads `sub/mypy.ini` first: a plugin named there ran in the check
    # that may write the cache, and could leave entries a later tree's mypy believes.
    plugins = (
        "[tool.mypy]\nplugins = ['plug.py']\n"
        if config == "pyproject.toml"
        else "[mypy]\nplugins = plug.py\n"
    )
    write(
        typed,
        {
            ".github/workflows/ci.yml": SUBDIR_WORKFLOW,
            "sub/lib.py": "x = 1\n",
            f"sub/{config}": plugins,
            "sub/plug.py": PLANTING_PLUGIN,
        },
    )
    checks = [c for c in make_plan(typed, VerifyOptions()).checks if c.tool == "mypy"]
    assert any(c.cwd == "sub" for c in checks)
    state = tmp_path / "state"
    assert (
        mypy_cache_for(typed, checks, sandbox="auto", judged_against_base=False, state_dir=state)
        is None
    )


def test_a_subdirectory_without_plugins_keeps_its_warm_cache(typed: Path, tmp_path: Path) -> None:
    write(
        typed,
        {
            ".github/workflows/ci.yml": SUBDIR_WORKFLOW,
            "sub/lib.py": "x = 1\n",
            "sub/mypy.ini": "[mypy]\n",
        },
    )
    checks = [c for c in make_plan(typed, VerifyOptions()).checks if c.tool == "mypy"]
    state = tmp_path / "state"
    assert (
        mypy_cache_for(typed, checks, sandbox="auto", judged_against_base=False, state_dir=state)
        is not None
    )


def _mypy_check(**env: str) -> Check:
    return Check(name="mypy", kind=Kind.TYPECHECK, argv=("mypy", "pkg"), tool="mypy", env=env)


@pytest.mark.parametrize(
    "env",
    [
        # A red team's: a sitecustomize.py on PYTHONPATH ran in mypy's process, the cache
        # writable, and added `--config-file` for a plugin to mypy's own arguments; the
        # plugin's entries made a later tree's type error pass, the plugin gone.
        {"PYTHONPATH": "evil"},
        {"PYTHONUSERBASE": "evil"},
        {"PYTHONWARNINGS": "ignore::evil.Warning"},
        {"HOME": "home"},
        {"XDG_CONFIG_HOME": "conf"},
    ],
)
def test_a_check_whose_variables_may_run_the_trees_code_gets_no_shared_cache(
    typed: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    state = tmp_path / "state"
    checks = [_mypy_check(**env)]
    assert (
        mypy_cache_for(typed, checks, sandbox="auto", judged_against_base=False, state_dir=state)
        is None
    )


def test_a_check_with_harmless_variables_keeps_its_warm_cache(typed: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    checks = [_mypy_check(CI="true", MYPYPATH="stubs", FORCE_COLOR="1", LC_ALL="C.UTF-8")]
    assert (
        mypy_cache_for(typed, checks, sandbox="auto", judged_against_base=False, state_dir=state)
        is not None
    )
