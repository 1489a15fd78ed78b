"""What `--base REF --protect` costs: the same change verified plainly and as untrusted work.

Run: `.venv/bin/python bench/bench_protect.py [--repeat N]`. Every ratio is measured in the same run.

The repository is `bench_verify`'s small and typed projects, committed as the base; the change
edits one module (a correct edit, so every mode must say VERIFIED, and each run is checked).

- plain: `assay verify --no-cache` on the change (the baseline).
- base: `assay verify --base HEAD~1` (tampering signals, and the base's tests run to compare).
- protect: `assay verify --base HEAD~1 --protect` (plan and protected files from the base,
  environment checked, canaries, channels compared).
- protect, base known: the same with the base's test outcomes remembered from an earlier
  run (`--no-cache` off: the verdict cache is never used under `--base`, but the base's
  outcomes are), as when many attempts are judged against one base.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_verify import ASSAY, median_of, run_on_repos


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def make_change(repo: Path) -> None:
    """The base commit, then a change to one module that keeps every test passing."""
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    module = repo / "pkg" / "mod00.py"
    module.write_text(module.read_text() + "\n\ndef extra(x: int) -> int:\n    return x\n")
    git(repo, "commit", "-q", "-am", "change")


def measure(name: str, repo: Path, env: dict[str, str], repeat: int) -> None:
    def verify(*extra: str) -> dict[str, Any]:
        cache = () if "--cached-base" in extra else ("--no-cache",)
        extra = tuple(e for e in extra if e != "--cached-base")
        done = subprocess.run(
            [ASSAY, "verify", "--json", *cache, str(repo), *extra],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        report = json.loads(done.stdout)
        if report["status"] != "VERIFIED":
            # A timing of a run that did not verify would measure the wrong thing.
            raise SystemExit(
                f"assay verify {' '.join(extra)}: {report['status']}: {report['note']}"
            )
        return report

    modes = {
        "plain": (),
        "--base": ("--base", "HEAD~1"),
        "--base --protect": ("--base", "HEAD~1", "--protect"),
        "  base known": ("--base", "HEAD~1", "--protect", "--cached-base"),
    }
    for args in modes.values():
        verify(*args)  # warm-up, and proof that each mode verifies this change
    times = {
        mode: median_of(repeat, functools.partial(verify, *args)) for mode, args in modes.items()
    }
    plain = times["plain"]
    print(f"{name}:")
    for mode, seconds in times.items():
        print(f"  {mode:<18} {seconds * 1000:8.0f} ms   ratio {seconds / plain:5.2f}x plain")


def measure_change(name: str, repo: Path, env: dict[str, str], repeat: int) -> None:
    make_change(repo)
    measure(name, repo, env, repeat)


def main() -> int:
    return run_on_repos(__doc__.splitlines()[0], measure_change)


if __name__ == "__main__":
    raise SystemExit(main())
