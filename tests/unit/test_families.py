"""The registry-wide contract, rendering side (no Docker): every family at every difficulty."""

from __future__ import annotations

import random

import pytest

from factory.families import registry
from factory.generate.render import Origin, render_family
from factory.generate.taxonomy import Difficulty, Domain
from factory.quality.dedup import signature, similarity
from factory.quality.leaks import find_leaks
from factory.quality.structure import named_traps

FAMILIES = registry.names()
CASES = [(name, d) for name in FAMILIES for d in Difficulty]


def render(name: str, difficulty: Difficulty, seed: int):
    family = registry.get(name)
    draft = family.draft(random.Random(seed), difficulty, dict(family.default_params))
    origin = Origin("contract", f"terminal/x/{name}", family.category, seed, name)
    return render_family(
        family, draft, task_id=f"{name}-{seed}", difficulty=difficulty, origin=origin
    )


def test_registry_is_complete():
    assert registry.broken == {}, f"family modules that fail to import: {registry.broken}"
    assert len(FAMILIES) >= 20
    for family in registry.all():
        assert family.domain in set(Domain)
        assert family.title and family.category


@pytest.mark.parametrize(("name", "difficulty"), CASES)
def test_family_contract(name, difficulty, tmp_path):
    spec = render(name, difficulty, 1)
    for required in (
        "instruction.md",
        "environment/Dockerfile",
        "solution/solve.sh",
        "tests/test.sh",
    ):
        assert required in spec.files, f"{name}: no {required}"
    assert spec.mutations, f"{name}: at least one near-miss wrong solution (mutations/)"
    # deterministic by seed
    assert render(name, difficulty, 1).files == spec.files
    # the instruction gives nothing away, and the image cannot contain solution or tests
    assert find_leaks(spec.write(tmp_path / "task"), spec.secrets) == []
    assert spec.config.environment.network_enabled is False, f"{name}: tasks run offline"
    # unannounced traps stay unannounced, and the fault combination reaches the provenance
    assert named_traps(spec.instruction, [(t.name, t.tells) for t in spec.traps]) == []
    assert spec.config.provenance.faults == list(spec.faults)


@pytest.mark.parametrize("name", FAMILIES)
def test_two_seeds_give_different_tasks(name):
    def text(seed: int) -> str:
        spec = render(name, Difficulty.MEDIUM, seed)
        # the tool server copied into every tool task, and the browser kit into every browser
        # task, are the same kit for all of them
        kits = ("environment/toolenv/", "environment/browserkit/")
        own = sorted(p for p in spec.files if not p.startswith(kits))
        return "\n".join(spec.files[p].decode(errors="replace") for p in own)

    first, second = text(1), text(2)
    assert first != second
    assert similarity(signature(first), signature(second)) < 0.95, (
        f"{name}: seeds 1 and 2 give near-identical tasks; randomise names, data and structure"
    )


@pytest.mark.parametrize("name", FAMILIES)
def test_difficulty_changes_the_task(name):
    easy, hard = render(name, Difficulty.EASY, 3), render(name, Difficulty.HARD, 3)
    assert easy.files != hard.files


def test_params_with_reads_a_single_value_for_a_list_parameter_as_a_list_of_one():
    """``projects: sqlparse`` (a taxonomy) or ``-p projects=sqlparse`` means that one project,
    not its letters; other values pass through over the defaults."""
    family = registry.get("repo-bug")
    assert family.params_with({"projects": "sqlparse"})["projects"] == ["sqlparse"]
    assert family.params_with({"projects": ["a", "b"]})["projects"] == ["a", "b"]
    assert family.params_with({"projects": ""})["projects"] == []
    merged = family.params_with({"llm_report": False, "other": "x"})
    assert merged == {"projects": [], "llm_report": False, "other": "x"}
    assert registry.get("checksum-verify").params_with({"k": "v"}) == {"k": "v"}
