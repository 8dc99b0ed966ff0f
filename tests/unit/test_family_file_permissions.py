"""file-permissions' sub-problem grammar, without Docker: what a hard draft composes, what its
reference solution does for each sub-problem, what each near miss leaves undone, and that the
hard instruction gives no trap away."""

from __future__ import annotations

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.file_permissions.family import FP_FAULTS, FP_TRAPS
from factory.vocabulary import Difficulty

FAMILY = registry.get("file-permissions")


draft = grammar.drafter(FAMILY)


def render(d, name: str, **extra) -> str:
    return grammar.render(FAMILY, d, name, **extra)


def fixes(d) -> dict[str, str]:
    """The command of the reference that does each sub-problem's work."""
    ctx = d.context
    return {
        "shared-setgid": f"chmod 2{ctx['dir_mode'][0]}70 {ctx['shared']}",
        "sticky-tmp": "chmod 1770 tmp",
        "private-keys": "chmod 400 keys/*",
        "root-scripts": "chown root bin/*.sh",
        "link-target": f"chown -R -h {ctx['user']}:{ctx['group']} {ctx['root']}",
        "stray-setgid": f"chmod g-s {ctx['stray']}",
        "hidden-config": f"find etc -maxdepth 1 -type f -exec chmod {ctx['config_mode']} {{}} +",
        "spaced-name": f"find data -type f -exec chmod {ctx['data_mode']} {{}} +",
    }


def test_hard_composes_three_or_four_sub_problems():
    grammar.assert_varied(draft)
    for seed in range(1, 40):
        d = draft(Difficulty.HARD, seed)
        assert 3 <= len(d.faults) <= 4 and set(d.faults) <= set(FP_FAULTS)
        grammar.assert_traps_match(d, FP_TRAPS)
    for level in (Difficulty.EASY, Difficulty.MEDIUM):
        d = draft(level, 3)
        assert d.faults == [] and d.traps == [] and d.mutations == {}
        assert d.context["special"] == {} and d.context["link"] is None


def test_each_sub_problem_plants_what_the_tests_check():
    seen = set()
    for seed in range(1, 60):
        d = draft(Difficulty.HARD, seed)
        ctx, faults = d.context, set(d.faults)
        seen |= faults
        names = list(ctx["files"])
        assert ("shared-setgid" in faults) == (ctx["shared"] is not None)
        assert ("sticky-tmp" in faults) == (ctx["tmp"] is not None)
        assert ("private-keys" in faults) == any(n.startswith("keys/") for n in names)
        assert ("root-scripts" in faults) == bool(ctx["root_owned"])
        assert ("link-target" in faults) == (ctx["link"] is not None)
        assert ("stray-setgid" in faults) == any(n.startswith("data/archive/") for n in names)
        assert ("hidden-config" in faults) == any(n.startswith("etc/.") for n in names)
        assert ("spaced-name" in faults) == any(" " in n for n in names)
        # every file starts out with a mode the policy does not want
        assert any(ctx["files"][n]["mode"] != want for n, want in ctx["expected"].items())
        for n, want in ctx["expected"].items():
            if n.startswith("keys/"):
                assert want == "400" and ctx["files"][n]["mode"] != "400"
        # the snapshot the tests read covers the tree (special folders included) and the link's
        # target outside it
        hook = d.collect[0].command
        assert ctx["root"] in hook
        assert all(p.startswith(ctx["root"] + "/") for p in ctx["special"])
        if ctx["link"]:
            assert ctx["link"]["target"] in hook
        dockerfile = render(d, "environment/Dockerfile.j2")
        if ctx["stray"]:
            assert f"chmod 2775 {ctx['root']}/{ctx['stray']}" in dockerfile
        if ctx["tmp"]:
            assert f"chmod 777 {ctx['tmp']}" in dockerfile
    assert seen == set(FP_FAULTS)


@pytest.mark.parametrize("seed", range(1, 13))
def test_the_reference_does_each_sub_problem_and_each_near_miss_skips_one(seed):
    d = draft(Difficulty.HARD, seed)
    reference = render(d, "solution/solve.sh.j2")
    assert reference.startswith("#!/bin/bash\nset -e\n")
    fix = fixes(d)
    for fault in d.faults:
        assert fix[fault] in reference, fault
    assert set(d.mutations) == {f"leave-{f}" for f in d.faults}
    for fault in d.faults:
        near_miss = d.mutations[f"leave-{fault}"]
        assert fix[fault] not in near_miss, fault
        for other in set(d.faults) - {fault}:
            assert fix[other] in near_miss, (fault, other)
    # the near misses that do the work wrongly do it the way people get it wrong
    if "link-target" in d.faults:
        assert "-exec chown" in d.mutations["leave-link-target"]
    if "hidden-config" in d.faults:
        assert f"chmod {d.context['config_mode']} etc/*" in d.mutations["leave-hidden-config"]
    if "spaced-name" in d.faults:
        assert "| xargs chmod" in d.mutations["leave-spaced-name"]


def test_the_tests_check_each_special_folder_and_owner():
    for seed in range(1, 30):
        d = draft(Difficulty.HARD, seed)
        tests = render(d, "tests/test_outputs.py.j2")
        namespace: dict = {}
        header = tests.split("STATE = ")[0]  # the constants, without reading the snapshot
        exec(compile(header, "test_outputs", "exec"), namespace)
        assert namespace["SPECIAL"] == d.context["special"]
        assert namespace["ROOT_OWNED"] == d.context["root_owned"]
        assert set(namespace["EXPECTED"]) == set(d.context["files"])


def test_the_number_of_steps_grows_with_difficulty():
    def median(level):
        return grammar.median_steps(
            lambda s: render(draft(level, s), "solution/solve.sh.j2"), range(1, 42)
        )

    assert median(Difficulty.EASY) < median(Difficulty.MEDIUM) < median(Difficulty.HARD)
    assert median(Difficulty.HARD) >= 8


def test_hard_instructions_name_no_trap():
    words = ("hidden", "spaces", "archive", "g-s", "dereference")
    for _, text in grammar.check_hard_instructions(FAMILY, draft, range(1, 80), words):
        assert "Nothing outside" in text
