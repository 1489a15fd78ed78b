"""What one run of `verify` (or `assay run`) did besides its checks: the run record.

The record says where the checks ran and how: the sandbox, the workspace, the limits in
force, what `--protect` restored and `--base` found, what an install step did, which
checks were skipped, whether the report came from the cache, what the run's cleanup
left behind and what stopped the run. It never decides a status itself: `aggregate`
reads `run_errors` like any other finding.

In JSON it is the report's `extra` object, under these keys (each present only when
set, so `"cached" in report["extra"]` means what it says):

    sandbox        str    the backend that ran the checks (`bwrap 0.8.0`, `local`, `none`)
    base           object {"named": str, "commit": str}: the `--base` given and the full id
                   of the commit it named, read once before anything of the change ran
    tampering      object `assay.tamper.TamperReport.to_dict()`, with `--base`
    base_tests     object `assay.base_tests.BaseTests.to_dict()`: the base's tests run at the
                   base, and those that passed there the change did not execute, with `--base`
    protected      object {"restored": [path], "removed": [path]}, with `--protect`
    rewritten      [object] {"after": str, "restored": [path], "removed": [path], "added_code":
                   [path]}: protected files (and the change's own code files) found
                   rewritten after something of the change ran (`after`: the install steps,
                   the tool probes, a stage), put back, with `--protect`
    workspace      object `assay.sandbox.provision.ProvisionRecord.to_dict()`
    limits         object `Sandbox.limits_in_force()`: what bounded the checks, and how
    install        [evidence] the install steps' evidence, with `--install`
    skipped        [str]  checks not run because an earlier stage failed
    cached         object {"stored_at": unix seconds, "key": str}: a cache hit
    swept          [str]  scratch directories of dead runs this run removed
    environment    object `assay.environment_proof.EnvironmentProof.to_dict()`, with `--protect`
    cleanup_error  str    the workspace could not be removed (an error of the run)
    error          str    assay could not finish the run (an error of the run)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.evidence import Evidence


@dataclass(frozen=True, slots=True)
class Restored:
    """What `--protect` changed in the workspace: paths written back from the base, and
    protected paths the change added, removed again."""

    restored: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, list[str]]:
        return {"restored": list(self.restored), "removed": list(self.removed)}


@dataclass(frozen=True, slots=True)
class Rewritten:
    """Protected files found changed again in the workspace after `after` (something of
    the change: its install steps, a project's tool answering a probe, a stage of checks)
    had run, and put back as the base has them (`--protect`)."""

    after: str
    restored: tuple[str, ...] = ()
    """Files of the base that had been modified or deleted."""
    removed: tuple[str, ...] = ()
    """Protected paths that had been added."""
    added_code: tuple[str, ...] = ()
    """Code files the change's tree does not hold, added while a stage ran, removed again
    (`assay.code_rewrites`)."""

    def to_dict(self) -> dict[str, Any]:
        done = {"after": self.after, "restored": list(self.restored), "removed": list(self.removed)}
        return {**done, "added_code": list(self.added_code)} if self.added_code else done

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rewritten:
        return cls(
            str(data["after"]),
            tuple(str(p) for p in data.get("restored", ())),
            tuple(str(p) for p in data.get("removed", ())),
            tuple(str(p) for p in data.get("added_code", ())),
        )


@dataclass(frozen=True, slots=True)
class CacheHit:
    """The report was the verdict cache's, stored at `stored_at` (unix seconds) under `key`."""

    stored_at: float
    key: str

    def to_dict(self) -> dict[str, Any]:
        return {"stored_at": self.stored_at, "key": self.key}


@dataclass(frozen=True, slots=True)
class RunRecord:
    """How a run went, apart from its checks' evidence (see the module docstring)."""

    sandbox: str | None = None
    base: Mapping[str, str] | None = None
    """With `--base`: the name it was given (`named`) and the commit it named (`commit`),
    read once before anything of the change ran."""
    tampering: Mapping[str, Any] | None = None
    base_tests: Mapping[str, Any] | None = None
    protected: Restored | None = None
    rewritten: tuple[Rewritten, ...] = ()
    workspace: Mapping[str, Any] | None = None
    limits: Mapping[str, Any] | None = None
    install: tuple[Evidence, ...] | None = None
    skipped: tuple[str, ...] = ()
    cached: CacheHit | None = None
    swept: tuple[str, ...] = ()
    cleanup_error: str | None = None
    error: str | None = None
    environment: Mapping[str, Any] | None = None
    """The proof of the environments the checks would run in (`--protect`): a check that
    would run in one not proven is not started (`Session.unproven`)."""
    unknown: Mapping[str, Any] = field(default_factory=dict)
    """Keys a newer assay wrote that this one does not know, kept as they were."""

    @property
    def run_errors(self) -> tuple[str, ...]:
        """What went wrong with the run itself, for `aggregate`: never VERIFIED with any."""
        return tuple(e for e in (self.error, self.cleanup_error) if e)

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = dict(self.unknown)
        values: dict[str, Any] = {
            "sandbox": self.sandbox,
            "base": dict(self.base) if self.base is not None else None,
            "tampering": dict(self.tampering) if self.tampering is not None else None,
            "base_tests": dict(self.base_tests) if self.base_tests is not None else None,
            "protected": self.protected.to_dict() if self.protected else None,
            "rewritten": [r.to_dict() for r in self.rewritten] or None,
            "workspace": dict(self.workspace) if self.workspace is not None else None,
            "cleanup_error": self.cleanup_error,
            "install": [e.to_dict() for e in self.install] if self.install is not None else None,
            "skipped": list(self.skipped) or None,
            "cached": self.cached.to_dict() if self.cached else None,
            "limits": dict(self.limits) if self.limits is not None else None,
            "swept": list(self.swept) or None,
            "error": self.error,
            "environment": dict(self.environment) if self.environment is not None else None,
        }
        document.update({k: v for k, v in values.items() if v is not None})
        return document

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunRecord:
        """The record of a stored report; raises ValueError, KeyError or TypeError when
        a known key does not hold what it should."""
        known = {
            "sandbox",
            "base",
            "tampering",
            "base_tests",
            "protected",
            "rewritten",
            "workspace",
            "cleanup_error",
            "install",
            "skipped",
            "cached",
            "limits",
            "swept",
            "error",
            "environment",
        }
        protected = data.get("protected")
        cached = data.get("cached")
        install = data.get("install")
        return cls(
            sandbox=_optional_str(data.get("sandbox")),
            base=_optional_words(data.get("base")),
            tampering=_optional_mapping(data.get("tampering")),
            base_tests=_optional_mapping(data.get("base_tests")),
            protected=(
                Restored(
                    tuple(str(p) for p in protected.get("restored", ())),
                    tuple(str(p) for p in protected.get("removed", ())),
                )
                if isinstance(protected, Mapping)
                else None
            ),
            rewritten=tuple(Rewritten.from_dict(r) for r in data.get("rewritten") or ()),
            workspace=_optional_mapping(data.get("workspace")),
            limits=_optional_mapping(data.get("limits")),
            install=tuple(Evidence.from_dict(e) for e in install) if install is not None else None,
            skipped=tuple(str(s) for s in data.get("skipped") or ()),
            cached=(
                CacheHit(float(cached["stored_at"]), str(cached["key"]))
                if isinstance(cached, Mapping)
                else None
            ),
            swept=tuple(str(s) for s in data.get("swept") or ()),
            cleanup_error=_optional_str(data.get("cleanup_error")),
            error=_optional_str(data.get("error")),
            environment=_optional_mapping(data.get("environment")),
            unknown={k: v for k, v in data.items() if k not in known},
        )


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)


def _optional_words(value: object) -> Mapping[str, str] | None:
    mapping = _optional_mapping(value)
    return None if mapping is None else {str(k): str(v) for k, v in mapping.items()}


def _optional_mapping(value: object) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return dict(value)
