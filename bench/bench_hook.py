"""Start-up of `assay hook` before verification begins, as ratios against `python -c pass`.

    python bench/bench_hook.py [--repeat N]

A hook runs at every stop, so what it costs before it starts verifying is paid every
time. The figure with the goal (under 100 ms): `assay hook claude-code` given an event
that is not a stop -- everything the hook does up to where verification would begin
(start, read stdin, parse, answer), without click. For reference: input that is not
JSON (the decision path: the block counted and printed), and `assay hook --help` (the
click command group). `python -c "import click"` is printed too: the part of the
figure that is the command-line library, not assay. And `--protect`'s recording of the
tree at a prompt, against `git stash create` on the same tree of 540 files. Prints one line per figure and exits non-zero when a command
did not behave as the figure assumes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
STARTUP = "assay hook claude-code, up to verifying"


def wall(argv: list[str], stdin: bytes, env: dict[str, str], expect: str) -> tuple[float, float]:
    """Seconds `argv` took, wall and CPU (on a busy machine the CPU time is what the wall
    time would be on an idle one); output without `expect` is an error, never a figure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    said = (done.stdout + done.stderr).decode(errors="replace")
    if done.returncode != 0 or expect not in said:
        sys.exit(f"benchmark command misbehaved ({done.returncode}): {argv}\n{said[-2000:]}")
    return took, cpu


def median(
    argv: list[str], repeat: int, env: dict[str, str], stdin: bytes = b"", expect: str = ""
) -> tuple[float, float]:
    wall(argv, stdin, env, expect)  # warm the file cache and the bytecode
    runs = [wall(argv, stdin, env, expect) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


PROMPT = "assay hook claude-code --protect, a prompt"
#: The tree the prompt's snapshot is taken of: files tracked, some changed, some untracked.
TRACKED, CHANGED, UNTRACKED = 500, 20, 20


def _prompt_figures(
    scratch: str, repeat: int, env: dict[str, str]
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The prompt hook's recording of the tree (`--protect`), and `git stash create` on the
    same tree: the git command nearest to it (a commit of the working tree's tracked
    changes, written to the object store, touching nothing else)."""
    repo = os.path.join(scratch, "repo")
    os.makedirs(os.path.join(repo, "pkg"))
    for i in range(TRACKED):
        with open(os.path.join(repo, "pkg", f"m{i}.py"), "w") as out:
            out.write(f"def f{i}(x):\n    return x + {i}\n")
    with open(os.path.join(repo, "pyproject.toml"), "w") as out:
        out.write('[project]\nname = "bench"\nversion = "0"\n')
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-C", repo]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    for i in range(CHANGED):
        with open(os.path.join(repo, "pkg", f"m{i}.py"), "a") as out:
            out.write("# changed\n")
    for i in range(UNTRACKED):
        with open(os.path.join(repo, "pkg", f"new{i}.py"), "w") as out:
            out.write("y = 1\n")
    event = json.dumps(
        {"session_id": "bench", "cwd": repo, "hook_event_name": "UserPromptSubmit"}
    ).encode()
    prompt = median([ASSAY, "hook", "claude-code", "--protect"], repeat, env, event)
    os.environ["ASSAY_CACHE_DIR"] = env["ASSAY_CACHE_DIR"]  # where the hook recorded it
    from assay.hooks.prompt_base import base_for

    recorded = base_for("claude-code:bench")
    if recorded is None or not recorded.commit:
        sys.exit(f"the prompt hook recorded no base: {recorded}")
    stash = median([*git, "stash", "create"], repeat, env)
    return prompt, stash


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    if not ASSAY:
        sys.exit("assay is not installed next to this interpreter")
    with tempfile.TemporaryDirectory() as state:
        env = {**os.environ, "ASSAY_CACHE_DIR": state}
        base = median([PYTHON, "-c", "pass"], args.repeat, env)
        # What every click command pays before assay's own code runs: the floor.
        click_floor = median([PYTHON, "-c", "import click"], args.repeat, env)
        prompt, stash = _prompt_figures(state, args.repeat, env)
        other_event = json.dumps(
            {"session_id": "bench", "cwd": state, "hook_event_name": "Notification"}
        ).encode()
        figures = {
            "assay hook --help": median(
                [ASSAY, "hook", "--help"], args.repeat, env, expect="claude-code"
            ),
            STARTUP: median(
                [ASSAY, "hook", "claude-code"], args.repeat, env, other_event, "not a stop event"
            ),
            "assay hook claude-code, unreadable input": median(
                [ASSAY, "hook", "claude-code", "--max-blocks", "1000000"],
                args.repeat,
                env,
                b"{not json",
                '"decision": "block"',
            ),
        }
    rows = {"python -c pass": base, "python -c 'import click' (the floor)": click_floor}
    for name, (took, cpu) in {**rows, **figures}.items():
        line = f"{name:<44} wall {took * 1000:>6.1f} ms  cpu {cpu * 1000:>6.1f} ms"
        if name in figures:
            ratio = f"ratio {took / base[0]:.2f}x wall, {cpu / base[1]:.2f}x cpu"
            line += f"   {ratio}"
            if name == STARTUP:
                on_cpu = "met" if cpu < GOAL_S else "not met"
                verdict = "met" if took < GOAL_S else f"not met on the wall ({on_cpu} on CPU)"
                line += f"   goal < {GOAL_S * 1000:.0f} ms: {verdict}"
        print(line)
    print(
        f"{PROMPT:<44} wall {prompt[0] * 1000:>6.1f} ms  cpu {prompt[1] * 1000:>6.1f} ms"
        f"   ratio {prompt[0] / stash[0]:.2f}x wall against `git stash create` "
        f"({stash[0] * 1000:.1f} ms), which records the tracked changes alone"
    )


if __name__ == "__main__":
    main()
