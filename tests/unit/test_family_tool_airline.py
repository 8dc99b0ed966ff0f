"""tool-airline's generation logic, without Docker: the expected final state is what the
airline domain itself makes of the reference calls, every near miss ends somewhere else (or
breaks the policy), every trap breaks the policy, and the difficulty sets length and traps."""

from __future__ import annotations

import json
import random

import pytest
from factory.toolenv.core import Environment, load_domain

from factory.families import registry
from factory.families.tool.scenario import script_calls
from factory.vocabulary import Difficulty

FAMILY = registry.get("tool-airline")
DOMAIN = load_domain("airline")


def draft(difficulty: Difficulty, seed: int):
    return FAMILY.draft(random.Random(seed), difficulty, {})


def states(d) -> tuple[dict, dict]:
    """A draft's seeded state and its expected final state."""
    return (
        json.loads(d.files["environment/state.json"]),
        json.loads(d.files["tests/expected_state.json"]),
    )


EVERY_DRAFT = pytest.mark.parametrize(
    ("difficulty", "seed"), [(level, seed) for level in Difficulty for seed in (1, 2, 3, 4)]
)


def play(state: dict, calls: list[tuple[str, dict]]) -> tuple[dict, list[dict]]:
    """Run calls on the domain; the final state and the results."""
    env = Environment(DOMAIN, state)
    results = [env.call(name, arguments) for name, arguments in calls]
    return env.state, results


@EVERY_DRAFT
def test_expected_state_is_the_domains_own_result_of_the_reference(difficulty, seed):
    d = draft(difficulty, seed)
    initial, expected = states(d)
    calls = [(c.name, c.arguments) for c in d.context["calls"]]
    final, results = play(initial, calls)
    assert all(r["ok"] and not r.get("violation") for r in results), results
    assert final == expected and expected != initial


@EVERY_DRAFT
def test_every_near_miss_ends_elsewhere_or_breaks_the_policy(difficulty, seed):
    d = draft(difficulty, seed)
    initial, expected = states(d)
    assert d.mutations
    for name, script in d.mutations.items():
        final, results = play(initial, script_calls(script))
        broke_policy = any(r.get("violation") for r in results)
        assert final != expected or broke_policy, name
    traps = [n for n in d.mutations if n.startswith("breaks-policy")]
    for name in traps:
        _, results = play(initial, script_calls(d.mutations[name]))
        assert any(r.get("violation") for r in results), name


def test_difficulty_sets_chain_length_and_trap_counts():
    """Task-shaped requests: longer chains with difficulty; no trap at easy, up to one at
    medium, up to three at hard, and the count varies (not always exactly one)."""
    chains = {level: [] for level in Difficulty}
    counts = {level: [] for level in Difficulty}
    for level in Difficulty:
        for seed in range(1, 13):
            d = FAMILY.draft(random.Random(seed), level, {"shape": "task"})
            chains[level].append(len(d.context["calls"]))
            traps = [n for n in d.mutations if n.startswith("breaks-policy")]
            counts[level].append(len(traps))
            assert ("policy-trap" in d.tags) == bool(traps)

    def mean(values: list[int]) -> float:
        return sum(values) / len(values)

    assert set(counts[Difficulty.EASY]) == {0}
    assert set(counts[Difficulty.MEDIUM]) == {0, 1}
    assert max(counts[Difficulty.HARD]) <= 3 and len(set(counts[Difficulty.HARD])) >= 3
    assert mean(chains[Difficulty.EASY]) < mean(chains[Difficulty.MEDIUM])
    assert mean(chains[Difficulty.MEDIUM]) < mean(chains[Difficulty.HARD])


def test_same_seed_same_task_and_the_request_gives_no_answer_away():
    one, two = draft(Difficulty.HARD, 9), draft(Difficulty.HARD, 9)
    assert one.files == two.files and one.mutations == two.mutations
    assert draft(Difficulty.HARD, 10).files != one.files
    for secret in one.secrets:
        assert secret not in one.context["request"]
