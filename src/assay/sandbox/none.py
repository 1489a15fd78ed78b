"""The `none` backend: commands run in place, in the source tree itself, only when asked for.

Nothing is copied or confined; the environment is still scrubbed of secrets and
deadlines still apply. Evidence records `none`, so a reader knows the checks ran
unsandboxed against the live tree.
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.sandbox.base import ProvisionError, Sandbox, Workspace, new_run_id
from assay.sandbox.local import _PinnedRunner


class NoSandbox(Sandbox):
    """Commands run directly in the source directory."""

    name = "none"

    def describe(self) -> str:
        return "none"

    def provision(self, source: str | os.PathLike[str], *, commit: str | None = None) -> Workspace:
        if commit is not None:
            # Running "at a commit" in place would mean checking it out over the user's tree.
            raise ProvisionError(
                "the none backend runs in place and cannot provision a commit; use local or bwrap",
                backend=self.name,
            )
        path = Path(source).resolve()
        if not path.is_dir():
            raise ProvisionError(f"not a directory: {path}", backend=self.name)
        return Workspace(run_id=new_run_id(), path=path, owned=False)

    def runner(self, workspace: Workspace) -> _PinnedRunner:
        # HOME stays the user's: running in place is the user's own environment, by request.
        return _PinnedRunner(workspace, pin_home=False)

    def cleanup(self, workspace: Workspace) -> None:
        """Nothing to remove: the workspace is the user's tree."""
