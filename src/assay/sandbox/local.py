"""The local backend: a temporary copy, a pinned HOME and a scrubbed environment. NOT a security boundary.

It keeps a check from modifying the tree it verifies, from reading the user's
HOME by accident and from seeing secret-looking variables, and it has the same
deadlines and whole-tree kill as every backend. Code that means harm can still
write anywhere the user can, read any file, and use the network: use it only
where bubblewrap cannot run, and only when asked for by name.

Installed environments (`.venv`, `node_modules`, ...) are not copied: the workspace
links to the source's own, so checks find their tools where they were planned. Those
links are writable here: a check that installs into `.venv` changes the user's `.venv`.
`.git` is copied, so a check's git commands leave the user's repository alone.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence

from assay.environment import EnvPolicy
from assay.process import ProcessResult, run_process
from assay.sandbox.base import Sandbox, Workspace, resolve_inside
from assay.sandbox.disk_watch import disk_watch, forget


class LocalSandbox(Sandbox):
    """Commands run unconfined in a temporary copy of the source."""

    name = "local"

    def describe(self) -> str:
        return "local"

    def provision(self, source: str | os.PathLike[str], *, commit: str | None = None) -> Workspace:
        # Imported here: `none` shares this module's runner and never provisions.
        from assay.sandbox.provision import provision_workspace

        # Nothing here could make a linked .git read-only, so it is copied.
        return provision_workspace(source, commit=commit, backend=self.name, link_git=False)

    def runner(self, workspace: Workspace) -> _PinnedRunner:
        return _PinnedRunner(workspace)

    def cleanup(self, workspace: Workspace) -> None:
        from assay.sandbox.provision import remove_workspace

        forget(workspace.path)
        remove_workspace(workspace, backend=self.name)


@dataclasses.dataclass(frozen=True, slots=True)
class _PinnedRunner:
    """`run_process` with a scrubbed environment and a fresh HOME, confined to one directory tree."""

    workspace: Workspace
    pin_home: bool = True

    def __call__(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        no_output_timeout: float | None = None,
    ) -> ProcessResult:
        return run_process(
            argv,
            cwd=resolve_inside(self.workspace, cwd),
            env=env,
            timeout=timeout,
            no_output_timeout=no_output_timeout,
            env_policy=EnvPolicy.SCRUB,
            pin_home=self.pin_home,
            watch=disk_watch(self.workspace.path),
        )
