"""Go: go build, go vet, go test -json."""

from __future__ import annotations

from pathlib import Path

from assay.evidence import Check
from assay.languages import LanguageAdapter
from assay.toolchains import Language
from assay.verdict import Kind


def checks(root: Path) -> list[Check]:
    source = "default:go"
    return [
        Check(
            "go-build",
            Kind.BUILD,
            ("go", "build", "./..."),
            tool="go",
            source=source,
            reason="every package must compile",
        ),
        Check(
            "go-vet",
            Kind.LINT,
            ("go", "vet", "./..."),
            tool="go",
            source=source,
            reason="go vet is Go's own linter",
        ),
        Check(
            "go-test",
            Kind.TEST,
            ("go", "test", "./..."),
            tool="go",
            source=source,
            reason="go test runs every package's tests",
        ),
    ]


ADAPTER = LanguageAdapter(language=Language.GO, markers=("go.mod",), checks=checks)
