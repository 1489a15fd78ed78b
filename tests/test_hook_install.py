"""`assay hook install|uninstall claude-code`: the settings file merged, never clobbered.

Real settings files on disk, written by the real console script: what was there stays
(other events, other Stop hooks, other keys), installing twice leaves one entry,
uninstalling removes only assay's, and a file that is not valid settings is refused
and left byte for byte as it was.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli import ASSAY, assay_env, no_traceback

OTHER_STOP = {"type": "command", "command": "notify-send done"}
EXISTING: dict[str, Any] = {
    "permissions": {"allow": ["Bash(make test)"]},
    "model": "some-model",
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
        "Stop": [{"hooks": [OTHER_STOP]}],
    },
}


def hook(cwd: Path, *args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = assay_env(HOME=str(home or cwd / "home"))
    done = subprocess.run(
        [ASSAY, "hook", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
    )
    no_traceback(done)
    return done


def settings_of(project: Path) -> dict[str, Any]:
    document = json.loads((project / ".claude" / "settings.json").read_text())
    assert isinstance(document, dict)
    return document


def ours(settings: dict[str, Any], event: str = "Stop") -> list[dict[str, Any]]:
    return [
        entry
        for group in settings.get("hooks", {}).get(event, [])
        for entry in group["hooks"]
        if "assay hook claude-code" in entry["command"]
    ]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(json.dumps(EXISTING, indent=2))
    return root


def test_install_merges_into_what_is_there(project: Path) -> None:
    done = hook(project, "install", "claude-code", "--project")
    assert done.returncode == 0, done.stderr
    settings = settings_of(project)
    assert settings["permissions"] == EXISTING["permissions"]
    assert settings["model"] == "some-model"
    assert settings["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    assert {"hooks": [OTHER_STOP]} in settings["hooks"]["Stop"]
    (entry,) = ours(settings)
    assert entry == {"type": "command", "command": "assay hook claude-code", "timeout": 600}


def test_install_is_idempotent(project: Path) -> None:
    hook(project, "install", "claude-code")
    before = (project / ".claude" / "settings.json").read_bytes()
    again = hook(project, "install", "claude-code")
    assert again.returncode == 0 and "already" in again.stdout
    assert (project / ".claude" / "settings.json").read_bytes() == before
    assert len(ours(settings_of(project))) == 1


def test_uninstall_removes_only_its_own_entry(project: Path) -> None:
    hook(project, "install", "claude-code")
    done = hook(project, "uninstall", "claude-code")
    assert done.returncode == 0, done.stderr
    assert settings_of(project) == EXISTING
    again = hook(project, "uninstall", "claude-code")
    assert again.returncode == 0 and "no assay hook in" in again.stdout


def test_protect_installs_the_prompt_hook_too_and_each_install_says_which(project: Path) -> None:
    assert hook(project, "install", "claude-code", "--protect").returncode == 0
    settings = settings_of(project)
    (stop,) = ours(settings)
    (prompt,) = ours(settings, "UserPromptSubmit")
    assert stop == {
        "type": "command",
        "command": "assay hook claude-code --protect",
        "timeout": 600,
    }
    assert prompt == {**stop, "timeout": 90}
    assert {"hooks": [OTHER_STOP]} in settings["hooks"]["Stop"]

    assert hook(project, "install", "claude-code").returncode == 0  # protection taken off
    settings = settings_of(project)
    assert [e["command"] for e in ours(settings)] == ["assay hook claude-code"]
    assert "UserPromptSubmit" not in settings["hooks"]

    hook(project, "install", "claude-code", "--protect")
    assert hook(project, "uninstall", "claude-code").returncode == 0
    assert settings_of(project) == EXISTING


def test_a_given_command_with_protect_installs_the_prompt_hook_too(project: Path) -> None:
    """Else its every stop would find no base recorded, and block until the cap."""
    command = "/opt/bin/assay hook claude-code --protect --max-blocks 5"
    assert hook(project, "install", "claude-code", "--command", command).returncode == 0
    settings = settings_of(project)
    assert [e["command"] for e in ours(settings)] == [command]
    assert [e["command"] for e in ours(settings, "UserPromptSubmit")] == [command]


def test_install_creates_the_file_and_uninstall_leaves_it_empty(tmp_path: Path) -> None:
    assert hook(tmp_path, "install", "claude-code").returncode == 0
    assert len(ours(settings_of(tmp_path))) == 1
    assert hook(tmp_path, "uninstall", "claude-code").returncode == 0
    assert settings_of(tmp_path) == {}


def test_user_scope_writes_the_home_settings(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = hook(tmp_path, "install", "claude-code", "--user", home=home)
    assert done.returncode == 0, done.stderr
    assert len(ours(settings_of(home))) == 1
    assert not (tmp_path / ".claude").exists()
    assert hook(tmp_path, "uninstall", "claude-code", "--user", home=home).returncode == 0
    assert ours(settings_of(home)) == []


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"hooks": {"Stop": [', "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"hooks": []}', "`hooks` is not an object"),
        ('{"hooks": {"Stop": {"command": "x"}}}', "`hooks.Stop` is not a list"),
    ],
)
@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_malformed_settings_are_refused_and_left_untouched(
    tmp_path: Path, content: str, said: str, action: str
) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(content)
    done = hook(tmp_path, action, "claude-code")
    assert done.returncode == 2
    assert said in done.stderr and str(path) in done.stderr
    assert path.read_text() == content


def test_a_replaced_older_entry_is_updated_in_place_not_duplicated(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    stale = json.loads(path.read_text())
    stale["hooks"]["Stop"].append(
        {
            "hooks": [
                {"type": "command", "command": "/opt/bin/assay hook claude-code", "timeout": 30}
            ]
        }
    )
    path.write_text(json.dumps(stale))
    assert hook(project, "install", "claude-code").returncode == 0
    (entry,) = ours(settings_of(project))
    assert entry["timeout"] == 600
