"""`npm test` whose script is one jest or vitest command: planned as that runner behind npm.

Most JavaScript projects run their tests as `npm test` -> `jest` (luxon: `jest --coverage`).
Read as a package script, such a run had counts from the printed text only and carried no
canaries, so under `--protect` a value that decides its own comparison passed `toEqual`
with a wrong answer: VERIFIED. Now npm hands the runner its JSON report and the planted
configuration after its `--`, and the same attack is INDETERMINATE (`report_tampered`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.canaries import NoCanary, Planter, Planting, PlantRequest
from assay.canaries.jest import plant_jest, plant_jest_script
from assay.canaries.vitest import plant_vitest, plant_vitest_script
from assay.evidence import Check
from assay.plan import plan_repository
from assay.script_runner import ScriptRunner, script_runner
from assay.verdict import Cause, Kind, Status, Verdict
from tests.attacks import change_on_base, explain, verify_change
from tests.repos import write
from tests.test_attacks_self_judging import RETURNS_A_JUDGE, _base, _module


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("jest", ScriptRunner("jest", ())),
        ("jest --coverage --ci", ScriptRunner("jest", ("--coverage", "--ci"))),
        ("NODE_ENV=test jest -i", ScriptRunner("jest", ("-i",))),
        ("cross-env TZ=UTC NODE_ENV=test jest", ScriptRunner("jest", ())),
        ("vitest run --coverage", ScriptRunner("vitest", ("run", "--coverage"))),
        (
            "node --experimental-vm-modules node_modules/jest/bin/jest.js --ci",
            ScriptRunner("jest", ("--ci",)),
        ),
        ("node node_modules/.bin/vitest", ScriptRunner("vitest", ())),
        ("./node_modules/.bin/jest 'test dir'", ScriptRunner("jest", ("test dir",))),
        # After the commands it needs first: npm's words go to the last one.
        ("tsc && jest --ci", ScriptRunner("jest", ("--ci",))),
        ("npm run lint && NODE_ENV=test vitest run", ScriptRunner("vitest", ("run",))),
        # Quoted words are words (dayjs's threshold; a single-quoted `$` is not expanded).
        (
            'npm run tz && jest --coverage --coverageThreshold="{ \\"global\\": { \\"lines\\": 100} }"',
            ScriptRunner(
                "jest", ("--coverage", '--coverageThreshold={ "global": { "lines": 100} }')
            ),
        ),
        ("jest 'a;b' '$HOME'", ScriptRunner("jest", ("a;b", "$HOME"))),
        # Another operator, words the shell expands, or a runner not last or not named: none.
        ('jest "$HOME"', None),
        ("jest `cat args`", None),
        ("jest > out.txt", None),
        ("jest && tsc", None),
        ("tsc&&jest", None),
        ("tsc || jest", None),
        ("jest & wait", None),
        ("jest; echo done", None),
        ("jest | tee out.txt", None),
        ("jest $JEST_ARGS", None),
        ("jest $(cat args)", None),
        ("node -r ts-node/register node_modules/.bin/jest", None),
        ("mocha", None),
        ("jest 'unclosed", None),
        ("", None),
    ],
)
def test_a_script_is_a_runner_only_when_it_is_one_command_naming_it(
    script: str, expected: ScriptRunner | None
) -> None:
    assert script_runner(script) == expected


def test_a_runner_asked_for_a_report_or_not_running_once_is_not_asked_again() -> None:
    assert ScriptRunner("jest", ("--coverage",)).reports
    assert not ScriptRunner("jest", ("--json",)).reports
    assert not ScriptRunner("jest", ("--outputFile=out.json",)).reports
    assert not ScriptRunner("jest", ("--watchAll",)).reports
    assert ScriptRunner("vitest", ("run",)).reports
    assert not ScriptRunner("vitest", ("watch",)).reports
    assert not ScriptRunner("vitest", ("--reporter", "verbose")).reports


def _planned_test(tmp_path: Path, scripts: dict[str, str], **files: str) -> Check:
    write(tmp_path, {"package.json": json.dumps({"name": "p", "scripts": scripts}), **files})
    (test,) = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    return test


@pytest.mark.parametrize(
    ("script", "tool"),
    [
        ("jest --coverage", "npm-jest"),
        ("vitest run", "npm-vitest"),
        ("jest --json --outputFile=r.json", "npm-test"),
        ("tsc && jest", "npm-jest"),
        ("jest && tsc", "npm-test"),
        ("node --test", "npm-test"),
    ],
)
def test_an_npm_test_script_that_is_one_runner_is_planned_as_it(
    tmp_path: Path, script: str, tool: str
) -> None:
    test = _planned_test(tmp_path, {"test": script})
    assert (test.argv, test.tool) == (("npm", "run", "test"), tool)


def test_yarns_test_script_stays_a_package_script(tmp_path: Path) -> None:
    """yarn and pnpm do not all hand the words after `--` on as npm does."""
    test = _planned_test(tmp_path, {"test": "jest"}, **{"yarn.lock": ""})
    assert (test.argv[0], test.tool) == ("yarn", "npm-test")


def test_a_script_run_in_every_workspace_stays_a_package_script(tmp_path: Path) -> None:
    """Each package's run would be handed the one report file."""
    write(
        tmp_path,
        {
            "package.json": json.dumps({"name": "mono", "workspaces": ["packages/*"]}),
            "packages/a/package.json": json.dumps({"name": "a", "scripts": {"test": "jest"}}),
        },
    )
    (test,) = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    assert "--workspaces" in test.argv and test.tool == "npm-test", test


def _request(root: Path, argv: tuple[str, ...], tool: str) -> PlantRequest:
    check = Check(name="test", kind=Kind.TEST, argv=argv, tool=tool)
    return PlantRequest(check=check, root=root.resolve())


def test_the_planted_configuration_goes_after_npms_separator(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": json.dumps({"scripts": {"test": "jest --coverage"}})})
    decided = plant_jest_script(_request(tmp_path, ("npm", "run", "test"), "npm-jest"))
    assert isinstance(decided, Planting) and decided.edit_argv is not None
    instrumented = ("npm", "run", "test", "--", "--json", "--outputFile=r.json")
    edited = decided.edit_argv(instrumented)
    assert edited[: len(instrumented)] == instrumented
    assert edited[-2] == "--config" and edited[-1].endswith(".config.cjs")


@pytest.mark.parametrize(
    ("planter", "script", "why"),
    [
        (plant_jest_script, "jest --config jest.ci.js", "cannot take back"),
        (plant_jest_script, "jest --bail", "cannot take back"),
        (plant_jest_script, "jest -t adds", "selects tests by name"),
        (plant_jest_script, "jest && tsc", "does not end with a jest or vitest command"),
        (plant_vitest_script, "vitest run --configLoader bundle", "cannot take back"),
        (plant_vitest_script, "vitest run -c vite.ci.mjs", "cannot take back"),
    ],
)
def test_a_script_whose_words_npm_cannot_undo_gets_no_canary(
    tmp_path: Path, planter: Planter, script: str, why: str
) -> None:
    write(tmp_path, {"package.json": json.dumps({"scripts": {"test": script}})})
    decided = planter(_request(tmp_path, ("npm", "run", "test"), "npm-jest"))
    assert isinstance(decided, NoCanary) and why in decided.why, decided


def test_a_vitest_too_old_for_the_planted_configuration_gets_no_canary(tmp_path: Path) -> None:
    """`--configLoader native`, which the planted configuration needs, came in vitest 3."""
    write(
        tmp_path,
        {
            "package.json": json.dumps({"scripts": {"test": "vitest run"}}),
            "node_modules/vitest/package.json": json.dumps({"version": "1.6.0"}),
        },
    )
    for planter, argv in (
        (plant_vitest, ("vitest", "run")),
        (plant_vitest_script, ("npm", "test")),
    ):
        decided = planter(_request(tmp_path, argv, "vitest"))
        assert isinstance(decided, NoCanary) and "vitest 1.6.0 cannot run" in decided.why
    write(tmp_path, {"node_modules/vitest/package.json": json.dumps({"version": "3.2.4"})})
    assert isinstance(plant_vitest_script(_request(tmp_path, ("npm", "test"), "x")), Planting)


def test_a_jest_too_old_for_the_planted_configuration_gets_no_canary(tmp_path: Path) -> None:
    """The planted configuration reads the project's with jest-config's
    `readInitialOptions`, which came in jest 29.2: dayjs pins jest 22."""
    write(
        tmp_path,
        {
            "package.json": json.dumps({"scripts": {"test": "jest"}}),
            "node_modules/jest/package.json": json.dumps({"version": "29.1.2"}),
        },
    )
    for planter, argv in ((plant_jest, ("jest",)), (plant_jest_script, ("npm", "test"))):
        decided = planter(_request(tmp_path, argv, "jest"))
        assert isinstance(decided, NoCanary) and "jest 29.1.2 cannot run" in decided.why
    write(tmp_path, {"node_modules/jest/package.json": json.dumps({"version": "29.2.0"})})
    assert isinstance(plant_jest_script(_request(tmp_path, ("npm", "test"), "x")), Planting)


# --------------------------------------------------------------------------- for real


def _with_script(runner: str, script: str) -> dict[str, str]:
    base = _base(runner)
    manifest = json.loads(base["package.json"])
    base["package.json"] = json.dumps({**manifest, "scripts": {"test": script}})
    return base


def _needs(tool: str) -> None:
    for name in ("npm", tool):
        assert shutil.which(name), (
            f"{name} is not installed: `npm install -g {name}`, as .ci/run does"
        )


@pytest.mark.slow
@pytest.mark.parametrize(("runner", "script"), [("jest", "jest --ci"), ("vitest", "vitest run")])
def test_a_self_judging_value_behind_npm_test_is_report_tampered(
    tmp_path: Path, runner: str, script: str
) -> None:
    _needs(runner)
    change = {"calc.js": _module(runner, RETURNS_A_JUDGE)}
    repo = change_on_base(tmp_path / "repo", _with_script(runner, script), change)
    report = verify_change(repo)
    (test,) = [c for c in report.checks if c.check.kind is Kind.TEST]
    assert report.status is Status.INDETERMINATE, explain(report)
    assert (test.check.tool, test.verdict, test.cause) == (
        f"npm-{runner}",
        Verdict.INCONCLUSIVE,
        Cause.REPORT_TAMPERED,
    ), explain(report)
    assert "received has its own asymmetricMatch" in test.note, test.note


@pytest.mark.slow
@pytest.mark.parametrize(("runner", "script"), [("jest", "jest --ci"), ("vitest", "vitest")])
def test_an_honest_change_behind_npm_test_is_verified_with_every_test_named(
    tmp_path: Path, runner: str, script: str
) -> None:
    _needs(runner)
    repo = change_on_base(tmp_path / "repo", _with_script(runner, script), {"README.md": "c\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    (test,) = [c for c in report.checks if c.check.kind is Kind.TEST]
    assert test.tests is not None and (test.tests.passed, test.tests.source) == (4, "jest-json")
    assert {c.name for c in test.test_cases} >= {"adds", "pairs", "reports", "hands over"}
    assert test.extra["canaries"]["finding"] == "as planted", explain(report)


@pytest.mark.slow
def test_a_wrong_answer_behind_npm_test_fails_naming_its_test(tmp_path: Path) -> None:
    _needs("jest")
    wrong = {"calc.js": _module("jest", RETURNS_A_JUDGE).replace("=> yes", "=> a - b")}
    repo = change_on_base(tmp_path / "repo", _with_script("jest", "jest"), wrong)
    report = verify_change(repo)
    (test,) = [c for c in report.checks if c.check.kind is Kind.TEST]
    assert report.status is Status.FAILED, explain(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (3, 1)
    assert [c.name for c in test.test_cases if c.outcome == "failed"] == ["adds"]


@pytest.mark.slow
def test_a_script_that_fails_before_its_runner_starts_is_judged_as_it_ended(
    tmp_path: Path,
) -> None:
    """`node lint.js && jest`: the canaries go to jest, last; when the command before it
    fails, jest writes no report, and the run is read as any failed run is, not as a
    report that lost its planted tests."""
    _needs("jest")
    base = {**_with_script("jest", "node lint.js && jest"), "lint.js": "process.exit(0);\n"}
    failing = {"lint.js": "console.error('lint: calc.js: 1 problem');\nprocess.exit(1);\n"}
    repo = change_on_base(tmp_path / "repo", base, failing)
    report = verify_change(repo)
    (test,) = [c for c in report.checks if c.check.kind is Kind.TEST]
    assert test.check.tool == "npm-jest", explain(report)
    assert report.status is not Status.VERIFIED, explain(report)
    assert (test.verdict, test.cause) == (Verdict.INCONCLUSIVE, Cause.UNRECOGNIZED_FAILURE)
    finding = test.extra["canaries"]["finding"]
    assert finding == "not reached: the run failed before the canaries reported"
