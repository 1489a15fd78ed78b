"""What a person sees from `assay verify`, through the real console script: lines as
checks end, the fast path said, failing tests by name, the project found from below,
skipped checks shown."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.cli import ASSAY, assay, assay_env, no_traceback
from tests.repos import write

PYPROJECT = '[project]\nname = "fx"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
TWO_FAILING = "def test_one():\n    assert 1 == 2\n\n\ndef test_two():\n    assert 2 == 3\n"
GO_MOD = "module example.com/fx\n\ngo 1.18\n"
GO_FAILING = (
    'package fx\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
    '\tif 1+2 != 4 {\n\t\tt.Fatal("bad sum")\n\t}\n}\n'
)


@pytest.mark.slow
def test_each_check_s_line_is_printed_as_it_ends(tmp_path: Path) -> None:
    slow = "import time\n\n\ndef test_slow():\n    time.sleep(6)\n"
    repo = write(tmp_path, {"pyproject.toml": PYPROJECT, "test_slow.py": slow})
    proc = subprocess.Popen(
        [ASSAY, "verify", "--no-cache", str(repo)],
        stdout=subprocess.PIPE,
        text=True,
        env=assay_env(),
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    first_at = time.monotonic()
    rest = proc.stdout.read()
    assert proc.wait(timeout=120) == 0, first + rest
    ended_at = time.monotonic()
    assert "compileall" in first, first
    assert ended_at - first_at > 3, "the quick check's line came only at the end"
    assert first not in rest  # not repeated in the final report


@pytest.mark.slow
def test_json_output_stays_one_object(tmp_path: Path) -> None:
    import json

    repo = write(tmp_path, {"pyproject.toml": PYPROJECT, "test_x.py": "def test_x():\n    pass\n"})
    done = assay("verify", "--no-cache", "--json", str(repo))
    no_traceback(done)
    assert json.loads(done.stdout)["status"] == "VERIFIED"


@pytest.mark.slow
def test_fast_path_is_said_and_all_runs_every_test(tmp_path: Path) -> None:
    repo = write(tmp_path, {"pyproject.toml": PYPROJECT, "test_x.py": TWO_FAILING})
    quick = assay("verify", "--no-cache", str(repo))
    no_traceback(quick)
    assert quick.returncode == 1
    assert "0 passed, 1 failed" in quick.stdout
    assert "stopped at the first failure" in quick.stdout and "--all" in quick.stdout
    every = assay("verify", "--no-cache", "--all", str(repo))
    assert every.returncode == 1
    assert "0 passed, 2 failed" in every.stdout, every.stdout
    assert "stopped at the first failure" not in every.stdout


@pytest.mark.slow
def test_go_failures_are_named_with_relative_paths(tmp_path: Path) -> None:
    repo = write(tmp_path, {"go.mod": GO_MOD, "fx_test.go": GO_FAILING})
    done = assay("verify", "--no-cache", str(repo), timeout=180)
    no_traceback(done)
    assert done.returncode == 1, done.stdout
    assert "FAILED example.com/fx.TestAdd" in done.stdout
    assert "fx_test.go:7: bad sum" in done.stdout
    assert '{"Time"' not in done.stdout and "/dev/shm" not in done.stdout


@pytest.mark.slow
def test_verify_from_a_subdirectory_finds_the_project(tmp_path: Path) -> None:
    repo = write(
        tmp_path,
        {"pyproject.toml": PYPROJECT, "pkg/sub/test_x.py": "def test_x():\n    pass\n"},
    )
    done = assay("verify", "--no-cache", cwd=repo / "pkg" / "sub")
    no_traceback(done)
    assert f"verifying {repo}" in done.stderr and "pyproject.toml" in done.stderr
    assert done.returncode == 0, done.stdout + done.stderr


def test_plan_from_a_subdirectory_plans_the_project(tmp_path: Path) -> None:
    repo = write(
        tmp_path,
        {"pyproject.toml": PYPROJECT, "pkg/sub/test_x.py": "def test_x():\n    pass\n"},
    )
    done = assay("plan", cwd=repo / "pkg" / "sub")
    no_traceback(done)
    assert f"planning {repo}" in done.stderr and "pyproject.toml" in done.stderr
    assert f"plan for {repo}\n" in done.stdout, done.stdout
