"""The tool families' wordings files: what a malformed file says, and how a wording is filled."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from factory.errors import RecipeError
from factory.families.tool.wordings import Wordings

GOOD = """
[greet]
placeholders = ["name"]
texts = ["Hi {name}.", "Hello {name}, {name} again."]
"""


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "wordings.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "names", "said"),
    [
        (GOOD, ("greet", "part"), "part: missing"),
        (GOOD, (), "greet: no piece uses these wordings"),
        ('[greet]\nplaceholders = []\ntexts = ["Hi {name}."]\n', ("greet",), "unknown placeholder"),
        ("[greet]\nplaceholders = []\ntexts = []\n", ("greet",), "greet.texts"),
        ('[greet]\nplaceholders = []\ntexts = ["x"]\ntone = "warm"\n', ("greet",), "greet.tone"),
        ('[greet]\ntexts = ["x"]\n', ("greet",), "greet.placeholders"),
        ("[greet\n", ("greet",), "invalid TOML"),
    ],
    ids=["missing", "unused", "placeholder", "empty", "stray-field", "no-placeholders", "toml"],
)
def test_a_malformed_file_fails_naming_the_file_and_the_piece(tmp_path, text, names, said):
    path = _file(tmp_path, text)
    with pytest.raises(RecipeError) as caught:
        Wordings(path, *names)
    assert str(path) in str(caught.value)
    assert said in str(caught.value)


def test_fill_needs_every_placeholder_and_ignores_extra_values(tmp_path):
    wordings = Wordings(_file(tmp_path, GOOD), "greet")
    assert wordings.fill("greet", name="Ada", unused="x") == ["Hi Ada.", "Hello Ada, Ada again."]
    with pytest.raises(ValueError, match="greet needs a value for name"):
        wordings.fill("greet")


def test_only_fills_a_piece_worded_one_way_and_refuses_a_list_to_draw_from(tmp_path):
    one = '[note]\nplaceholders = ["name"]\ntexts = ["Hi {name}."]\n'
    wordings = Wordings(_file(tmp_path, GOOD + one), "greet", "note")
    assert wordings.only("note", name="Ada") == "Hi Ada."
    with pytest.raises(ValueError, match="greet has 2 wordings"):
        wordings.only("greet", name="Ada")


def test_a_function_value_is_drawn_where_each_wording_uses_it_as_f_strings_would(tmp_path):
    """The draws happen in the same order as a list of f-strings evaluates them, so moving a
    list into the file keeps every seed's task."""
    wordings = Wordings(_file(tmp_path, GOOD), "greet")
    names = ["Ada", "Bo", "Cy", "Di"]
    ours, theirs = random.Random(7), random.Random(7)
    filled = wordings.fill("greet", name=lambda: ours.choice(names))

    def name() -> str:
        return theirs.choice(names)

    assert filled == [f"Hi {name()}.", f"Hello {name()}, {name()} again."]
    assert ours.random() == theirs.random()


def test_every_shipped_wordings_file_loads():
    """Each family's file is checked where the family imports it; importing them all proves
    no shipped file is malformed or out of step with its code."""
    from factory.families.tool.airline import data as airline
    from factory.families.tool.banking import data as banking
    from factory.families.tool.calendar import family as calendar
    from factory.families.tool.crm import data as crm
    from factory.families.tool.files import data as files
    from factory.families.tool.inventory import data as inventory
    from factory.families.tool.orderdesk import plan as orderdesk
    from factory.families.tool.workspace import plan as workspace

    for module in (airline, banking, calendar, crm, files, inventory, orderdesk, workspace):
        assert module.WORDINGS.path.name == "wordings.toml"
