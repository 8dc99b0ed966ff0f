from __future__ import annotations

import pytest
import yaml

from factory.errors import TaskFormatError
from factory.generate.pipeline import candidate_id, candidate_seed
from factory.generate.taxonomy import Difficulty, load_taxonomy, parse_taxonomy

BASE = {
    "suite": "demo",
    "seed": 5,
    "defaults": {"quota": 2},
    "domains": [
        {
            "name": "terminal",
            "categories": [
                {
                    "name": "files",
                    "skills": [
                        {
                            "name": "perms",
                            "generator": "file-permissions",
                            "quota": 4,
                            "difficulty": {"easy": 1, "hard": 3},
                        },
                        {"name": "other", "generator": "llm"},
                    ],
                },
            ],
        }
    ],
}


def with_change(path: list, value):
    data = yaml.safe_load(yaml.safe_dump(BASE))
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


def test_leaves_and_defaults():
    taxonomy = parse_taxonomy(BASE)
    leaves = list(taxonomy.leaves())
    assert [leaf.path for leaf in leaves] == ["terminal/files/perms", "terminal/files/other"]
    assert leaves[0].quota == 4 and leaves[1].quota == 2
    assert leaves[0].attempt_budget == 12
    assert leaves[0].domain.kind.value == "terminal"


def test_difficulty_plan_follows_weights():
    perms = next(parse_taxonomy(BASE).leaves())
    assert perms.difficulty_plan() == [
        Difficulty.EASY,
        Difficulty.HARD,
        Difficulty.HARD,
        Difficulty.HARD,
    ]
    other = list(parse_taxonomy(BASE).leaves())[1]
    assert sorted(other.difficulty_plan()) == sorted([Difficulty.EASY, Difficulty.MEDIUM])


@pytest.mark.parametrize(
    ("path", "value", "field", "message"),
    [
        (
            ["domains", 0, "categories", 0, "skills", 0, "quota"],
            0,
            "domains[0].categories[0].skills[0].quota",
            "greater than or equal to 1",
        ),
        (
            ["domains", 0, "categories", 0, "skills", 1, "generator"],
            "no-such-family",
            "domains[0].categories[0].skills[1].generator",
            "registered families: ",
        ),
        (
            ["domains", 0, "categories", 0, "skills", 0, "difficulty"],
            {"easy": 0},
            "domains[0].categories[0].skills[0].difficulty",
            "at least one > 0",
        ),
        (
            ["domains", 0, "categories", 0, "skills", 0, "name"],
            "Bad Name",
            "domains[0].categories[0].skills[0].name",
            "lowercase",
        ),
        (["domains", 0, "name"], "galaxy", "domains[0]", "set kind"),
        (["defaults", "quota"], "many", "defaults.quota", "integer"),
        (
            ["domains", 0, "categories", 0, "skills", 0, "bogus"],
            1,
            "domains[0].categories[0].skills[0].bogus",
            "Extra inputs",
        ),
    ],
)
def test_errors_name_the_path_and_field(path, value, field, message):
    with pytest.raises(TaskFormatError) as info:
        parse_taxonomy(with_change(path, value), "tax.yaml")
    assert info.value.field == field
    assert message in str(info.value)
    assert str(info.value).startswith("tax.yaml: ")


def test_unknown_family_lists_registered_ones():
    with pytest.raises(TaskFormatError) as info:
        parse_taxonomy(
            with_change(["domains", 0, "categories", 0, "skills", 0, "generator"], "nope")
        )
    assert "file-permissions" in str(info.value)


def test_duplicate_leaves_are_refused():
    data = with_change(["domains", 0, "categories", 0, "skills", 1, "name"], "perms")
    with pytest.raises(TaskFormatError, match="duplicate leaf"):
        parse_taxonomy(data)


def test_bad_yaml_names_the_line(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("suite: x\ndomains: [\n")
    with pytest.raises(TaskFormatError, match=r"invalid YAML at line"):
        load_taxonomy(path)


def test_candidate_ids_and_seeds_are_deterministic():
    leaf = next(parse_taxonomy(BASE).leaves())
    assert candidate_id(leaf, 7) == "files-perms-007"
    assert candidate_seed(5, leaf.path, 7) == candidate_seed(5, leaf.path, 7)
    assert candidate_seed(5, leaf.path, 7) != candidate_seed(5, leaf.path, 8)
    assert candidate_seed(5, leaf.path, 7) != candidate_seed(6, leaf.path, 7)


def test_example_taxonomies_parse(repo):
    for name in ("taxonomy.yaml", "taxonomy-large.yaml"):
        path = repo / "examples" / name
        if path.exists():
            taxonomy = load_taxonomy(path)
            assert sum(leaf.quota for leaf in taxonomy.leaves()) > 0
