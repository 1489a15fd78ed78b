"""A bug inside assay's pipeline reaches the user as INDETERMINATE, never a traceback or a pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import cli, pipeline


def test_an_internal_error_is_an_indeterminate_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(path: object, options: object) -> None:
        raise RuntimeError("a bug in a pipeline step")

    monkeypatch.setattr(pipeline, "verify", broken)
    code = cli.main(["verify", "--json", str(tmp_path)])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert code == 3
    assert report["status"] == "INDETERMINATE" and report["verified"] is False
    assert "RuntimeError: a bug in a pipeline step" in report["note"]
    assert "Traceback" not in err
