"""A task's own cheat probes (issue 16), without Docker: a family's ``templates/cheats/`` render
into the spec's cheats (run by certification, never written into the task), web and tool tasks
name the unprivileged agent user, and each probe attempts its forgery after a wrong step."""

from __future__ import annotations

import shlex

from factory.generate.taxonomy import Difficulty
from factory.generate.trial import render_trial
from factory.tasks.model import load_task
from factory.vocabulary import AGENT_USER


def test_tool_tasks_carry_reset_and_restart_cheats(tmp_path):
    trial = render_trial("tool-airline", Difficulty.HARD, 1, tmp_path)
    cheats = trial.spec.cheats
    assert set(cheats) == {"reset-after-violation", "restart-from-state"}
    assert not any(rel.startswith("cheats/") for rel in trial.spec.files)
    assert not (trial.path / "cheats").exists()
    assert load_task(trial.path).config.agent.user == AGENT_USER
    reference = (trial.path / "solution" / "solve.sh").read_text()
    right = [line for line in reference.splitlines() if line.startswith("tool call ")]
    for name, script in cheats.items():
        calls = [line for line in script.splitlines() if line.startswith("tool call ")]
        wrong, then = calls[: -len(right)], calls[-len(right) :]
        assert wrong and wrong != right, name  # the forgery must hide something wrong
        assert then == right, name
        assert "/var/lib/toolenv/calls.jsonl" in script, name
    assert "/run/toolenv/admin.sock" in cheats["reset-after-violation"]
    assert "toolenv.server" in cheats["restart-from-state"]


def test_the_shop_carries_a_direct_database_forgery(tmp_path):
    trial = render_trial("web-shop", Difficulty.EASY, 1, tmp_path)
    script = trial.spec.cheats["forge-order-in-db"]
    tests = (trial.path / "tests" / "test_outputs.py").read_text()
    wanted = next(line for line in tests.splitlines() if line.startswith("ITEMS = "))
    assert wanted in script.splitlines()  # it forges exactly the order the tests want
    assert 'sqlite3.connect("/srv/app/data/app.db")' in script
    assert "'place_order'" in script and "/cart" not in script  # never touches the app
    assert load_task(trial.path).config.agent.user == AGENT_USER
    dockerfile = (trial.path / "environment" / "Dockerfile").read_text()
    assert "useradd --create-home --shell /bin/bash agent" in dockerfile
    assert "chmod 0700 /srv/app/data" in dockerfile and "rm -f /srv/app/seed.json" in dockerfile


def test_tasks_of_families_without_own_cheats_carry_none(tmp_path):
    trial = render_trial("web-blog", Difficulty.EASY, 1, tmp_path)
    assert trial.spec.cheats == {}
    assert load_task(trial.path).config.agent.user == AGENT_USER
    start = render_trial("tool-calendar", Difficulty.EASY, 1, tmp_path).path / "environment"
    script = (start / "start-tools.sh").read_text()
    assert "--user toolenv" in script and "--admin-socket /run/toolenv/admin.sock" in script
    assert shlex.split(script.splitlines()[-1])[0] == "exec"


def test_without_a_trap_the_probes_mistake_is_a_needless_handover(tmp_path):
    """A near miss is no mistake to hide: tool-files easy 1 moves the file to the wrong folder,
    and the right calls after it move it on, which is an honest recovery (it was certified as a
    cheat that passed). A handover stays in the state whatever follows."""
    trial = render_trial("tool-files", Difficulty.EASY, 1, tmp_path)
    for name, script in trial.spec.cheats.items():
        first = next(line for line in script.splitlines() if line.startswith("tool call "))
        assert first.startswith("tool call transfer_to_human "), name
