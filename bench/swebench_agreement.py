"""The agreement table: assay's grading against the `swebench` package's own log parser
and grading functions, on the same runs.

SWE-bench instances made from a real repository (inflection 0.5.1, bugs planted; see
tests/fixtures/swebench_agreement/build.py) are evaluated by `assay eval` for real, with
the gold patch and, for some, with a patch that fixes nothing; each attempt's per-test
outcomes and resolved status are compared with what swebench makes of that attempt's own
test output. Every difference is printed with its reason.

    python bench/swebench_agreement.py

Needs the `swebench` package (the `test` extra) and bubblewrap; takes about three minutes.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the test suite's instances: one source of them

from assay.eval.swebench.agreement import compare_attempt, render_table
from tests.fixtures.swebench_agreement.build import evaluate


def main() -> None:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-swebench-agreement-") as tmp:
        attempts = evaluate(Path(tmp))
    runs = sorted(
        (compare_attempt(a, i, run=run) for run, a, i in attempts),
        key=lambda r: (r.run, r.instance_id),
    )
    print(render_table(runs))
    print(f"({len(runs)} runs in {time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
