"""Terminal families' data tables beside their code: trap tables (``traps.toml``) read in file
order into Trap fields, word lists (``words.toml``) read by name; a malformed entry or a missing
name fails naming the file and the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory.errors import RecipeError
from factory.families.terminal.traps import load_traps
from factory.families.terminal.words import WordTable
from factory.vocabulary import Trap


def test_load_traps_keeps_file_order_and_gives_trap_fields(tmp_path: Path):
    path = tmp_path / "traps.toml"
    path.write_text(
        '[zeta]\nname = "last letter"\ntells = ["omega", "\\\\r"]\n\n'
        '[alpha]\nname = "first letter"\ntells = ["a"]\n',
        encoding="utf-8",
    )
    traps = load_traps(path)
    assert list(traps) == ["zeta", "alpha"]
    assert traps["zeta"] == ("last letter", ("omega", "\\r"))
    assert Trap(*traps["alpha"]) == Trap("first letter", ("a",))


@pytest.mark.parametrize(
    "entry",
    ['name = "no tells"', 'tells = ["no name"]', 'name = "x"\ntells = ["y"]\ntell = ["z"]'],
)
def test_load_traps_names_the_file_and_the_fault_of_a_bad_entry(tmp_path: Path, entry: str):
    path = tmp_path / "traps.toml"
    path.write_text(f"[stale-pid]\n{entry}\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"traps\.toml: stale-pid"):
        load_traps(path)


def test_word_table_gives_lists_by_name_and_names_the_file_of_a_missing_one(tmp_path: Path):
    path = tmp_path / "words.toml"
    path.write_text('tops = ["config", "data"]\nflag = { tgz = "z" }\n', encoding="utf-8")
    words = WordTable(path)
    assert words["tops"] == ["config", "data"]
    assert words["flag"] == {"tgz": "z"}
    with pytest.raises(RecipeError, match=r"words\.toml: no word list 'top'"):
        words["top"]
