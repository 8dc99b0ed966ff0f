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


def test_load_traps_keeps_file_order_and_gives_traps(tmp_path: Path):
    path = tmp_path / "traps.toml"
    path.write_text(
        '[zeta]\nname = "last letter"\ntells = ["omega", "\\\\r"]\n\n'
        '[alpha]\nname = "first letter"\ntells = ["a"]\n',
        encoding="utf-8",
    )
    traps = load_traps(path, ["alpha", "zeta", "unused"])
    assert list(traps) == ["zeta", "alpha"]
    assert traps["zeta"] == Trap("last letter", ("omega", "\\r"))
    assert traps["alpha"] == Trap("first letter", ("a",))


@pytest.mark.parametrize(
    "entry",
    ['name = "no tells"', 'tells = ["no name"]', 'name = "x"\ntells = ["y"]\ntell = ["z"]'],
)
def test_load_traps_names_the_file_and_the_fault_of_a_bad_entry(tmp_path: Path, entry: str):
    path = tmp_path / "traps.toml"
    path.write_text(f"[stale-pid]\n{entry}\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"traps\.toml: stale-pid"):
        load_traps(path, ["stale-pid"])


def test_load_traps_refuses_a_trap_for_a_fault_the_family_does_not_have(tmp_path: Path):
    """A misspelt fault name would drop its trap from every task without a word."""
    path = tmp_path / "traps.toml"
    path.write_text('[stale-pdi]\nname = "a stale PID file"\ntells = ["stale"]\n')
    with pytest.raises(RecipeError, match=r"traps\.toml: stale-pdi: no such fault"):
        load_traps(path, ["stale-pid", "port-clash"])


def test_word_table_gives_lists_by_name_and_names_the_file_of_a_missing_one(tmp_path: Path):
    path = tmp_path / "words.toml"
    path.write_text('tops = ["config", "data"]\nflag = { tgz = "z" }\n', encoding="utf-8")
    words = WordTable(path)
    assert words["tops"] == ["config", "data"]
    assert words.typed("flag", dict[str, str]) == {"tgz": "z"}
    with pytest.raises(RecipeError, match=r"words\.toml: no word list 'top'"):
        words["top"]


@pytest.mark.parametrize(
    ("value", "shape", "error"),
    [
        ('"config"', None, r"tops: Input should be a valid list"),
        ("[]", None, r"tops: List should have at least 1 item"),
        ('["a", 2]', None, r"tops\.1: Input should be a valid string"),
        ('{ tgz = "z" }', None, r"tops: Input should be a valid list"),
        ('[["a", "b", "c"]]', list[tuple[str, str]], r"tops\.0: Tuple should have at most 2"),
    ],
)
def test_word_table_names_the_file_and_the_list_of_a_value_of_another_shape(
    tmp_path: Path, value: str, shape, error: str
):
    path = tmp_path / "words.toml"
    path.write_text(f"tops = {value}\n", encoding="utf-8")
    words = WordTable(path)
    with pytest.raises(RecipeError, match=r"words\.toml: " + error):
        words["tops"] if shape is None else words.typed("tops", shape)


def test_word_table_reads_pairs_as_tuples(tmp_path: Path):
    path = tmp_path / "words.toml"
    path.write_text('series = [["series", "Series"], ["sample", "Sample"]]\n', encoding="utf-8")
    assert WordTable(path).typed("series", list[tuple[str, str]]) == [
        ("series", "Series"),
        ("sample", "Sample"),
    ]


@pytest.mark.parametrize(
    "loader", [WordTable, lambda path: load_traps(path, [])], ids=["word-table", "traps"]
)
def test_a_file_that_is_no_toml_or_missing_is_one_error_naming_it(tmp_path: Path, loader):
    path = tmp_path / "words.toml"
    path.write_text("tops = [\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"words\.toml: invalid TOML"):
        loader(path)
    with pytest.raises(RecipeError, match=r"gone\.toml: cannot read"):
        loader(tmp_path / "gone.toml")
