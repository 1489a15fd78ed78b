"""A Jenkinsfile's `sh` steps, read as text for the commands they run; Groovy is never run.

`sh 'x'`, `sh "x"`, `sh \'\'\'x\'\'\'`, `sh(script: "x")`: the string is the script. A
double-quoted string with `$` is interpolated by Groovy (unknown here), and a step with
`returnStatus: true` does not fail the build when its command fails: both are dropped,
with why. The pipeline-level `environment { }` block's literal values are the env.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping

from assay.discovery.ci_scripts import (
    CIText,
    Parsed,
    line_hits,
    plain_env,
    script_candidates,
)
from assay.discovery.make import Makefile, logical_lines
from assay.discovery.model import Candidate, Dropped, ProjectEnv, Source
from assay.discovery.text import line_at

JENKINSFILE = "Jenkinsfile"

# `sh 'x'`, `sh "x"`, `sh '''x'''`, `sh(script: "x", ...)`, `sh label: 'l', script: 'x'`
_SH_STEP = re.compile(
    r"\bsh\b\s*\(?\s*(?:label\s*:\s*(?:'[^'\n]*'|\"[^\"\n]*\")\s*,\s*)?(?:script\s*:\s*)?('''|\"\"\"|'|\")"
)
_STAGE = re.compile(r"\bstage\s*\(\s*['\"]([^'\"\n]+)['\"]")
_ENVIRONMENT_BLOCK = re.compile(r"\benvironment\s*\{([^{}]*)\}")
_ENV_ENTRY = re.compile(
    r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:'([^'\n]*)'|\"([^\"$\n]*)\")\s*$", re.MULTILINE
)
_RETURN_STATUS = re.compile(r"[^\n)]*?\breturnStatus\s*:\s*true")


def parse_jenkinsfile(
    text: str,
    path: str,
    env: ProjectEnv,
    makefile: Makefile | None = None,
    scripts: Mapping[str, str] | None = None,
) -> Parsed:
    """Candidates from the `sh` steps of a Jenkinsfile, read as text (Groovy is never run). Pure."""
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    raw = CIText(text)
    pipeline_env = _jenkins_env(text)
    stages = [(m.start(), m.group(1)) for m in _STAGE.finditer(text)]
    at = 0
    while (match := _SH_STEP.search(text, at)) is not None:
        quote, start = match.group(1), match.end()
        end = _closing(text, start, quote)
        if end < 0:
            break  # an unclosed string runs to the end of the file
        at = end + len(quote)
        body = _unescape(text[start:end])
        before = bisect.bisect_left(stages, (match.start(), ""))
        where = f"Jenkins stage {stages[before - 1][1]!r}" if before else "Jenkinsfile"
        interpolated = quote.startswith('"') and re.search(r"(?<!\\)\$", text[start:end])
        if interpolated or _RETURN_STATUS.match(text, at):
            why = (
                "uses a Groovy expression ($...) assay cannot evaluate"
                if interpolated
                else "its step sets returnStatus: true, so a failure does not fail the build"
            )
            dropped += [
                Dropped(line.strip(), Source(path, line_at(text, start)), why)
                for _, line in logical_lines(body)
                if line_hits(line.strip(), None)
            ]
            continue
        more, more_dropped = script_candidates(
            body, path, raw, env, pipeline_env, ".", where, makefile=makefile, scripts=scripts
        )
        found += more
        dropped += more_dropped
    return found, dropped, []


def _closing(text: str, start: int, quote: str) -> int:
    """Where the Groovy string opened just before `start` ends (a one-quote string ends on
    its line), or -1."""
    limit = len(text) if len(quote) == 3 else text.find("\n", start) % (len(text) + 1)
    at = start
    while (at := text.find(quote, at, limit)) >= 0:
        backslashes = 0
        while at - backslashes - 1 >= start and text[at - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return at
        at += 1
    return -1


def _unescape(body: str) -> str:
    return re.sub(r"\\(['\"\\$])", r"\1", body)


def _jenkins_env(text: str) -> dict[str, str]:
    """Literal variables of the pipeline-level `environment { }` block (before `stages`)."""
    stages = text.find("stages")
    block = _ENVIRONMENT_BLOCK.search(text)
    if block is None or (stages >= 0 and block.start() > stages):
        return {}
    return plain_env(
        {
            m.group(1): m.group(2) if m.group(2) is not None else m.group(3)
            for m in _ENV_ENTRY.finditer(block.group(1))
        }
    )
