"""process-management, without Docker: the fault grammar at hard, and the reload check that
asks the daemon itself instead of trusting its state file."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from factory.families import registry
from factory.families.terminal.process_management.family import PM_GRAMMAR
from factory.vocabulary import Difficulty

FAMILY = registry.get("process-management")


def draft(difficulty: Difficulty, seed: int):
    return FAMILY.draft(random.Random(seed), difficulty, {})


def test_hard_composes_four_to_six_faults():
    combos = set()
    for seed in range(1, 101):
        d = draft(Difficulty.HARD, seed)
        kinds = d.context["kinds"]
        assert 4 <= len(kinds) <= 6 and set(kinds) <= set(PM_GRAMMAR)
        combos.add(tuple(d.faults))
    assert len(combos) >= 50


def test_a_forged_state_file_is_a_near_miss_whenever_there_is_a_reload():
    for seed in range(1, 20):
        d = draft(Difficulty.HARD, seed)
        if "hup" not in d.context["kinds"]:
            assert "forged-state" not in d.mutations
            continue
        forged = d.mutations["forged-state"]
        assert "kill -HUP" not in forged and d.context["hup"]["state"] in forged
        # The question to the daemon is asked by the separate verifier's collect hook, in the
        # agent's container; the tests judge its answer.
        (hook,) = d.collect
        assert "signal.SIGUSR1" in hook.command and hook.command.startswith("rm -rf ")
        tests = FAMILY.template("tests/test_outputs.py.j2").render(**d.context)
        assert 'SEEN["reload"] is None' in tests


def test_the_daemon_rewrites_its_state_on_sigusr1_from_memory(tmp_path):
    d = next(
        d for d in (draft(Difficulty.HARD, s) for s in range(1, 50)) if "hup" in d.context["kinds"]
    )
    hup = d.context["hup"]
    name = Path(hup["path"]).name
    source = d.files[f"environment/bin/{name}"]
    state = tmp_path / "daemon.state"
    source = source.replace(hup["state"], str(state))
    source = source.replace(d.context["updir"], str(tmp_path))
    (tmp_path / "daemon.py").write_text(source)
    conf = tmp_path / "daemon.conf"
    conf.write_text(f"{hup['key']} = {hup['old']}\n")
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "daemon.py"), "--config", str(conf)],
        env={"PATH": os.environ["PATH"]},
    )
    try:

        def wait_for(predicate):
            for _ in range(100):
                if predicate():
                    return True
                time.sleep(0.05)
            return False

        assert wait_for(state.exists)
        # A forged state file says the reload happened; the daemon knows better.
        forged = json.loads(state.read_text())
        forged["reloads"], forged["settings"][hup["key"]] = 1, hup["value"]
        state.write_text(json.dumps(forged))
        conf.write_text(f"{hup['key']} = {hup['value']}\n")
        state.unlink()
        os.kill(proc.pid, signal.SIGUSR1)
        assert wait_for(state.exists)
        assert wait_for(lambda: state.read_text().endswith("\n"))
        fresh = json.loads(state.read_text())
        assert fresh["reloads"] == 0 and fresh["settings"][hup["key"]] == hup["old"]
        os.kill(proc.pid, signal.SIGHUP)
        assert wait_for(lambda: json.loads(state.read_text() or "{}").get("reloads") == 1)
        assert json.loads(state.read_text())["settings"][hup["key"]] == hup["value"]
    finally:
        proc.kill()
        proc.wait()


def test_hard_instructions_do_not_announce_the_stubborn_processes():
    for seed in range(1, 30):
        d = draft(Difficulty.HARD, seed)
        text = FAMILY.template("instruction.md.j2").render(**d.context)
        assert "really gone" not in text and "come back" not in text
