"""service-config's fault grammar, without Docker: what each draft plants, what its reference
solution fixes, and what its near misses leave wrong."""

from __future__ import annotations

import json
import random
import shlex

import pytest

from factory.families import registry
from factory.quality.structure import solution_steps
from factory.vocabulary import Difficulty

FAMILY = registry.get("service-config")


def draft(difficulty: Difficulty, seed: int):
    return FAMILY.draft(random.Random(seed), difficulty, {})


def solution(d, **extra) -> str:
    return FAMILY.template("solution/solve.sh.j2").render(**d.context, **extra)


def test_hard_composes_faults_from_the_grammar():
    combos = {tuple(draft(Difficulty.HARD, seed).faults) for seed in range(1, 101)}
    assert len(combos) >= 50
    for seed in range(1, 30):
        d = draft(Difficulty.HARD, seed)
        system = d.context["system"]
        assert 2 <= len(system) <= 4
        assert not {"log-dir-missing", "log-dir-owner"} <= set(system)
        assert len(d.traps) == len(system), "every fault around the service is a trap"
        assert set(system) <= set(d.faults)


def test_the_number_of_steps_grows_with_difficulty():
    def median(level):
        counts = sorted(len(solution_steps(solution(draft(level, seed)))) for seed in range(1, 22))
        return counts[len(counts) // 2]

    assert median(Difficulty.EASY) < median(Difficulty.MEDIUM) < median(Difficulty.HARD)
    assert median(Difficulty.HARD) >= 8


@pytest.mark.parametrize("seed", range(1, 8))
def test_the_reference_fixes_each_fault_and_the_near_miss_skips_one(seed):
    d = draft(Difficulty.HARD, seed)
    system, ctx = d.context["system"], d.context
    fixes = {
        "env-override": f"/^{ctx['svcu']}_PORT=/d",
        "env-config-path": f"{ctx['svcu']}_CONFIG={ctx['config']}",
        "token-perms": f"chmod 640 {ctx['token_file']}",
        "log-dir-missing": f"install -d -o {ctx['user']}",
        "log-dir-owner": f"chown {ctx['user']}:{ctx['user']} {ctx['logdir']}",
        "stale-pid": "tr '\\0' ' ' < /proc/",
    }
    reference = solution(d)
    for fault in system:
        assert fixes[fault] in reference, fault
    near_miss = d.mutations["one-fault-left"]
    assert fixes[system[0]] not in near_miss
    for fault in system[1:]:
        assert fixes[fault] in near_miss


@pytest.mark.parametrize("level", list(Difficulty))
def test_a_copied_secret_is_a_near_miss_at_every_level(level):
    d = draft(level, 4)
    script = d.mutations["copied-secret"]
    assert f"install -m 644 {d.context['token_file']} {d.context['copy']}" in script
    assert d.context["copy"] in d.context["mutants"]["copied-secret"]
    # the collect hook looks for copies anywhere, not in a few folders; the tests judge that
    hook = d.collect[0].command
    assert "def copies(" in hook and "stack, hits = [top], []" in hook
    task = json.loads(shlex.split(hook.split(" - ", 1)[1].split("<<")[0])[1])
    assert task["token_sha256"] == d.context["digests"][d.context["token_file"]]
    tests = FAMILY.template("tests/test_outputs.py.j2").render(**d.context)
    assert 'not state["copies"]' in tests and 'state["copies"] is not None' in tests


def test_hard_instructions_name_no_fault_around_the_service():
    for seed in range(1, 40):
        d = draft(Difficulty.HARD, seed)
        text = FAMILY.template("instruction.md.j2").render(**d.context).lower()
        for word in ("environment file", "pid", "must own", "create what is missing"):
            assert word not in text, (seed, word)


def test_medium_still_announces_what_it_asks():
    d = draft(Difficulty.MEDIUM, 2)
    text = FAMILY.template("instruction.md.j2").render(**d.context)
    assert d.context["env_file"] in text and "must be able to read" in text
    assert d.traps == []
