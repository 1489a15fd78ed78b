"""An instance's environment set-up, as SWE-bench's specs give it, recorded in its task.

Where the set-up comes from, first found wins:

1. the instance's own `install_config` (SWE-rebench and other SWE-bench-format datasets
   carry one per instance: `python`, `pre_install`, `install`, `pip_packages`,
   `test_cmd`);
2. the `swebench` package's `MAP_REPO_VERSION_TO_SPECS[repo][version]` (swebench 2.x-4.x
   keep it in `swebench.harness.constants`), when the package is importable: it is looked
   up here only, never a dependency, never imported by the command line's start-up.
   swebench 5.x has no such map (its instances name prebuilt images), which is said.

What is found is recorded in task.toml's `[environment]` table, so the task stands alone,
and what installs something becomes the task's verification: `install = true` and
`install_commands` (`pip install` of `pip_packages`, then `install`), run in the sandbox
after assay's own install steps, in the project's `.venv`, the network on for them only.
What assay cannot honour is said at import, never dropped in silence: a Python version
this machine lacks, `pre_install` steps (system packages installed as root in an image),
`test_cmd` (assay runs the tests it discovers), and that the commands run in a virtualenv,
not SWE-bench's conda environment.
"""

from __future__ import annotations

import importlib
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from assay.eval.swebench.instances import ImportFailed, Instance

#: The keys of a spec that are read; the others (`eval_commands`, `env_patches`, ...) are
#: the Docker harness's own and are kept only in swebench.json.
SPEC_KEYS = ("python", "pre_install", "install", "pip_packages", "test_cmd")
#: Asking a Python for its version: it answers at once, or it is not usable.
PYTHON_PROBE_TIMEOUT_S = 10.0

#: (repo, version) -> the spec, or None; and a sentence saying where specs come from.
SpecsLookup = Callable[[str, str], Mapping[str, Any] | None]


@dataclass(frozen=True, slots=True)
class Environment:
    """One instance's environment set-up, and what of it assay cannot honour."""

    source: str
    python: str | None = None
    pre_install: tuple[str, ...] = ()
    install: tuple[str, ...] = ()
    pip_packages: tuple[str, ...] = ()
    test_cmd: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def installs(self) -> bool:
        return bool(self.install or self.pip_packages)

    def install_commands(self) -> list[str]:
        """What the verify stage runs, in SWE-bench's order: the packages, then `install`."""
        packages = ["python -m pip install " + shlex.join(self.pip_packages)]
        return [*(packages if self.pip_packages else []), *self.install]

    def toml_lines(self) -> list[str]:
        """The `[environment]` table of task.toml."""
        from assay.eval.swebench.importer import toml_value

        lines = ["[environment]", f"source = {toml_value(self.source)}"]
        if self.python:
            lines.append(f"python = {toml_value(self.python)}")
        for key in ("pre_install", "install", "pip_packages", "test_cmd"):
            if value := getattr(self, key):
                lines.append(f"{key} = {toml_value(list(value))}")
        if self.notes:
            lines.append(f"not_honoured = {toml_value(list(self.notes))}")
        return lines


def environment_for(
    instance: Instance, where: str, lookup: SpecsLookup | None
) -> tuple[Environment | None, str]:
    """The instance's set-up (None when there is none) and, when none was found, why."""
    own = instance.raw.get("install_config")
    if own is not None:
        if not isinstance(own, Mapping):
            raise ImportFailed(f"{where}: install_config is not a JSON object")
        return _environment(own, "the instance's install_config", where), ""
    version = instance.raw.get("version")
    if not isinstance(version, str | int | float) or isinstance(version, bool) or version == "":
        return None, "no version and no install_config: no environment specs"
    version = str(version)
    if lookup is None:
        lookup, why = swebench_specs()
        if lookup is None:
            return None, why
    spec = lookup(instance.repo, version)
    if spec is None:
        return None, f"no specs for {instance.repo} {version} in the swebench package"
    source = f"swebench MAP_REPO_VERSION_TO_SPECS[{instance.repo!r}][{version!r}]"
    return _environment(spec, source, where), ""


@cache
def swebench_specs() -> tuple[SpecsLookup | None, str]:
    """The swebench package's specs map as a lookup, or None and why not."""
    try:
        constants = importlib.import_module("swebench.harness.constants")
    except ImportError:
        return None, "the swebench package is not installed: no environment specs"
    specs = getattr(constants, "MAP_REPO_VERSION_TO_SPECS", None)
    if not isinstance(specs, Mapping):
        version = _swebench_version()
        return None, (
            f"swebench {version} has no MAP_REPO_VERSION_TO_SPECS (from 5.0 its instances "
            "name prebuilt images instead): no environment specs"
        )

    def lookup(repo: str, version: str) -> Mapping[str, Any] | None:
        found = (specs.get(repo) or {}).get(version)
        return found if isinstance(found, Mapping) else None

    return lookup, ""


def _swebench_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("swebench")
    except PackageNotFoundError:
        return "(version unknown)"


def _environment(spec: Mapping[str, Any], source: str, where: str) -> Environment:
    python = spec.get("python")
    if python is not None and not isinstance(python, str | int | float):
        raise ImportFailed(f"{where}: {source}: python is not a version")
    fields = {key: _commands(spec.get(key), f"{where}: {source}: {key}") for key in SPEC_KEYS[1:]}
    env = Environment(source=source, python=str(python) if python is not None else None, **fields)
    notes: list[str] = []
    if env.python and not python_available(env.python):
        notes.append(
            f"python {env.python} is not on this machine: the tests run with the Python "
            "the sandbox finds"
        )
    if env.pre_install:
        notes.append(
            f"pre_install not run ({len(env.pre_install)} command(s): system set-up done as "
            "root in SWE-bench's image; assay changes nothing outside the workspace)"
        )
    if env.installs:
        notes.append(
            "pip_packages and install are run after assay's own install steps, in the "
            "project's .venv (made with the Python the sandbox finds), not in a conda "
            "environment"
        )
    if env.test_cmd:
        notes.append("test_cmd not run: assay runs the tests it discovers in the repository")
    return Environment(
        source=env.source,
        python=env.python,
        pre_install=env.pre_install,
        install=env.install,
        pip_packages=env.pip_packages,
        test_cmd=env.test_cmd,
        notes=tuple(notes),
    )


def _commands(value: object, where: str) -> tuple[str, ...]:
    """A spec's command(s) or packages: a string, or a list of strings."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v for v in value if v.strip())
    raise ImportFailed(f"{where}: expected a string or a list of strings")


@cache
def python_available(version: str) -> bool:
    """Whether `pythonX.Y` on this machine's PATH runs and is that version (a pyenv shim
    for a version not installed is not)."""
    wanted = ".".join(version.split(".")[:2])
    found = shutil.which(f"python{wanted}")
    if found is None:
        return False
    try:
        done = subprocess.run(
            [found, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=PYTHON_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip() == wanted
