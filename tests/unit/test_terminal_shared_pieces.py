"""The pieces terminal families share: near misses, draws of new values, the shell-script
tools' option parser."""

from __future__ import annotations

import random

import pytest

from factory.families import registry
from factory.families.terminal.knobs import fresh, level_and_kind, spread
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.shell_script.options import ANY, POSITIVE, parse_options
from factory.vocabulary import Difficulty


class _Solve:
    """Stands for a family's ``solution/solve.sh.j2``: renders its variables."""

    def render(self, values: dict) -> str:
        return " ".join(f"{k}={values[k]}" for k in sorted(values))


class _Family:
    def template(self, name: str) -> _Solve:
        assert name == "solution/solve.sh.j2"
        return _Solve()


def test_near_misses_leave_one_fault_each():
    got = near_misses(_Family(), {"slip": None, "a": 1}, ["x", "y"])  # type: ignore[arg-type]
    assert got == {"unfixed-x": "a=1 slip=x", "unfixed-y": "a=1 slip=y"}


def test_near_misses_names_keys_and_per_fault_values():
    got = near_misses(
        _Family(),  # type: ignore[arg-type]
        {"prep": "all"},
        ["x"],
        name="leave-{}",
        key="variant",
        value="unfixed-{}",
        each=lambda f: {"prep": f"all but {f}"},
        difficulty="hard",
    )
    assert got == {"leave-x": "difficulty=hard prep=all but x variant=unfixed-x"}


def test_near_misses_of_a_real_family_differ_from_the_reference():
    family = registry.get("cron-schedule")
    draft = family.draft(random.Random(1), Difficulty.HARD, family.default_params)
    reference = family.template("solution/solve.sh.j2").render(draft.context)
    assert draft.mutations and reference not in draft.mutations.values()


def test_fresh_draws_until_the_value_is_new():
    values = iter([1, 2, 1, 3])
    taken = {1}
    assert fresh(lambda: next(values), taken) == 2
    assert fresh(lambda: next(values), taken) == 3
    assert taken == {1, 2, 3}


def test_level_and_kind_draws_a_kind_per_level_unless_one_is_given():
    kinds = {"b": 1, "a": 2, "c": 3}
    for difficulty, level in zip(Difficulty, (0, 1, 2), strict=True):
        for seed in range(10):
            rng, twin = random.Random(seed), random.Random(seed)
            assert level_and_kind(rng, difficulty, {}, kinds) == (
                level,
                spread(twin, ["a", "b", "c"], level),
            )
            assert rng.random() == twin.random()  # one draw, as spread makes
            rng, twin = random.Random(seed), random.Random(seed)
            assert level_and_kind(rng, difficulty, {"kind": "c"}, kinds) == (level, "c")
            assert rng.random() == twin.random()  # a given kind draws nothing
    drawn = {level_and_kind(random.Random(s), Difficulty.EASY, {}, kinds)[1] for s in range(30)}
    assert drawn == {"a", "b", "c"}


TAKES = {"-n": (0, POSITIVE), "-v": (1, None), "-f": (2, ANY)}


@pytest.mark.parametrize(
    "args, level, expected",
    [
        (["a"], 0, ({}, ["a"])),
        (["-n", "3", "-n", "4", "a"], 0, ({"-n": "4"}, ["a"])),  # the last one wins
        (["-n", "0", "a"], 0, None),  # malformed value
        (["-n"], 0, None),  # missing value
        (["-v", "a"], 0, None),  # not at this level
        (["-v", "a"], 1, ({"-v": ""}, ["a"])),
        (["-f", "x,y", "--", "-v"], 2, ({"-f": "x,y"}, ["-v"])),  # -- ends the options
        (["-q"], 2, None),  # unknown option
        (["-", "a"], 2, None),  # a lone dash is an option unless told otherwise
    ],
)
def test_parse_options(args, level, expected):
    assert parse_options(args, level, TAKES) == expected


def test_parse_options_lone_dash_as_operand():
    assert parse_options(["-v", "-", "a"], 1, TAKES, dash_is_operand=True) == (
        {"-v": ""},
        ["-", "a"],
    )
