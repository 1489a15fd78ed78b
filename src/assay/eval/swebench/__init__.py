"""SWE-bench's formats in and out: instances imported as task folders
(`importer.import_instances`), an evaluation reported as SWE-bench's harness reports a
run (`report.swebench_report`)."""

from __future__ import annotations

from assay.eval.swebench.importer import import_instances
from assay.eval.swebench.instances import ImportFailed, Instance, read_instances
from assay.eval.swebench.report import swebench_report

__all__ = ["ImportFailed", "Instance", "import_instances", "read_instances", "swebench_report"]
