"""Static discovery: how a repository checks itself, read from its files, never executed.

`discover(root)` runs one detector per source, in priority order:

1. assay's own configuration (`[tool.assay]`, `assay.toml`)   -- assay_config
2. package.json scripts, package manager, workspaces         -- node
3. Python tool configuration, unittest suites                -- python
   tox and nox environments                                  -- python_envs
4. CMakeLists.txt declaring a CTest suite                    -- cmake
   configure.ac with a root Makefile.am (make check)         -- autotools
   meson.build declaring tests                               -- meson
   Makefile / justfile targets                               -- make
5. CI workflows (confirm, add environment)                   -- ci
6. Cargo.toml, go.mod, tsconfig.json, node tool configs      -- manifests
7. README / CONTRIBUTING code blocks                         -- docs
8. Language defaults                                         -- fallback

Each answers found / not applicable / error. Only `files` touches the disk.
"""

from assay.discovery.detectors import DETECTORS as DETECTORS
from assay.discovery.detectors import Discovery as Discovery
from assay.discovery.detectors import discover as discover
from assay.discovery.model import Candidate as Candidate
from assay.discovery.model import DetectorAnswer as DetectorAnswer
from assay.discovery.model import DetectorReport as DetectorReport
from assay.discovery.model import Dropped as Dropped
from assay.discovery.model import Ecosystem as Ecosystem
from assay.discovery.model import Origin as Origin
from assay.discovery.model import ProjectEnv as ProjectEnv
from assay.discovery.model import Source as Source

__all__ = [
    "DETECTORS",
    "Candidate",
    "DetectorAnswer",
    "DetectorReport",
    "Discovery",
    "Dropped",
    "Ecosystem",
    "Origin",
    "ProjectEnv",
    "Source",
    "discover",
]
