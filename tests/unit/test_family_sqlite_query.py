"""sqlite-query's generation logic, without Docker: the answer computed in Python from the shop
model must equal what SQLite itself computes from the generated seed script, every near-miss
query must give a different answer on the same data, and the difficulty picks the questions.
At hard (a pack of reports over the database, an archive database and CSV exports): the
answers are the questions' SQL on all the data, each source changes a report, each near miss
gives a different answer, and the reference, run here with the sqlite3 shell, passes the task's
own tests while every near miss fails one."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import os
import random
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.vocabulary import Difficulty

SEEDS = range(1, 9)


def draft(difficulty: Difficulty, seed: int):
    family = registry.get("sqlite-query")
    return family.draft(random.Random(seed), difficulty, dict(family.default_params))


def database(d) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.executescript(d.files["environment/seed.sql"])
    return db


def answer(db: sqlite3.Connection, sql: str) -> list[list[str]]:
    return [[str(v) for v in row] for row in db.execute(sql)]


@pytest.mark.parametrize("difficulty", [Difficulty.EASY, Difficulty.MEDIUM])
@pytest.mark.parametrize("seed", SEEDS)
def test_python_answer_equals_sqlite_answer(difficulty, seed):
    d = draft(difficulty, seed)
    q = d.context["q"]
    assert q["rows"], "a question with an empty answer tests nothing"
    assert answer(database(d), q["sql"]) == q["rows"]


@pytest.mark.parametrize("difficulty", [Difficulty.EASY, Difficulty.MEDIUM])
@pytest.mark.parametrize("seed", SEEDS)
def test_every_near_miss_query_is_wrong_on_this_data(difficulty, seed):
    d = draft(difficulty, seed)
    db = database(d)
    q = d.context["q"]
    assert len(q["wrong"]) == 3
    for wrong in q["wrong"]:
        assert answer(db, wrong) != q["rows"], wrong


def test_table_digests_and_counts_describe_the_seeded_database():
    d = draft(Difficulty.MEDIUM, 4)
    db = database(d)
    for table, columns in d.context["columns"].items():
        rows = db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY id").fetchall()
        assert len(rows) == d.context["counts"][table]
        assert hashlib.sha256(repr(rows).encode()).hexdigest() == d.context["digests"][table]


def test_same_seed_same_task_and_difficulty_picks_the_questions():
    assert draft(Difficulty.HARD, 3).files == draft(Difficulty.HARD, 3).files
    slugs = {
        level: {
            r["slug"]
            for seed in range(1, 25)
            for r in draft(level, seed).context.get("reports", [draft(level, seed).context["q"]])
        }
        for level in Difficulty
    }
    assert slugs[Difficulty.EASY].isdisjoint(slugs[Difficulty.HARD])
    assert slugs[Difficulty.EASY].isdisjoint(slugs[Difficulty.MEDIUM])
    assert all(len(s) >= 2 for s in slugs.values()), slugs
    hard_sql = " ".join(
        r["sql"] for s in range(1, 25) for r in draft(Difficulty.HARD, s).context["reports"]
    )
    assert any(word in hard_sql for word in ("HAVING", "OVER", "RANK"))


# --- hard: a pack of reports over data in several places ------------------------------------

FAMILY = registry.get("sqlite-query")


def hard_database(d, sources=("archive", "restored", "incoming")) -> sqlite3.Connection:
    """The task's data in memory: the database, plus the archive, the restored dump and the
    CSV exports that ``sources`` names (read here with Python's csv module, an empty field as
    NULL)."""
    db = database(d)
    c, t = d.context, d.context["theme"]
    if c["archive"] and "archive" in sources:
        archive = sqlite3.connect(":memory:")
        archive.executescript(d.files["environment/archive.sql"])
        for table in (t["event"], t["line"]):
            rows = archive.execute(f"SELECT * FROM {table}").fetchall()
            marks = ", ".join("?" for _ in rows[0]) if rows else ""
            if rows:
                db.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    if c["restored"] and "restored" in sources:
        name = c["restored"].rsplit("/", 1)[1]
        db.executescript(gzip.decompress(d.files[f"environment/restored/{name}"]).decode())
    if c["incoming"] and "incoming" in sources:
        for table in (t["event"], t["line"]):
            header, *rows = list(
                csv.reader(io.StringIO(d.files[f"environment/incoming/{table}.csv"]))
            )
            marks = ", ".join("?" for _ in header)
            rows = [[None if v == "" else v for v in row] for row in rows]
            db.executemany(f"INSERT INTO {table} ({', '.join(header)}) VALUES ({marks})", rows)
    return db


def csv_answer(db: sqlite3.Connection, sql: str) -> list[list[str]]:
    return [["" if v is None else str(v) for v in row] for row in db.execute(sql)]


@pytest.mark.parametrize("seed", SEEDS)
def test_hard_answers_are_on_all_the_data_and_each_source_matters(seed):
    d = draft(Difficulty.HARD, seed)
    c = d.context
    assert 2 <= len(c["reports"]) <= 3 and c["sources"]
    every = hard_database(d)
    for r in c["reports"]:
        assert r["rows"], "a report with an empty answer tests nothing"
        assert csv_answer(every, r["sql"]) == r["rows"], r["slug"]
    for source in c["sources"]:
        without = hard_database(d, [s for s in c["sources"] if s != source])
        assert any(csv_answer(without, r["sql"]) != r["rows"] for r in c["reports"]), source
    for i, j in c["wrongs"]:
        assert csv_answer(every, c["reports"][i]["wrong"][j]) != c["reports"][i]["rows"]
    assert sorted(d.mutations) == sorted(
        [f"unfixed-{s}" for s in c["sources"]]
        + [f"wrong-{c['reports'][i]['kind']}-{j + 1}" for i, j in c["wrongs"][3:]]
    )


def test_hard_grammar_varies_and_solutions_are_long_enough():
    drafts = [draft(Difficulty.HARD, seed) for seed in range(1, 101)]
    assert len({tuple(d.faults) for d in drafts}) >= 50
    for d in drafts[:20]:
        reports = [f for f in d.faults if f.startswith("report-")]
        assert 2 <= len(reports) <= 3 and set(d.faults) - set(reports) == set(d.context["sources"])

    def script(seed: int) -> str:
        return grammar.render(FAMILY, drafts[seed - 1], "solution/solve.sh.j2")

    assert grammar.median_steps(script, range(1, 41)) >= 8
    for level in (Difficulty.EASY, Difficulty.MEDIUM):
        assert not draft(level, 1).faults and not draft(level, 1).mutations


def test_hard_instruction_states_the_sources_and_every_report():
    for seed in SEEDS:
        d = draft(Difficulty.HARD, seed)
        c = d.context
        text = grammar.render(FAMILY, d, "instruction.md.j2")
        for r in c["reports"]:
            assert f"`{r['out']}`" in text and ",".join(r["header"]) in text
        if c["archive"]:
            assert f"`{c['archive']}`" in text
        else:
            assert "archive" not in text
        if c["incoming"]:
            assert f"`{c['incoming']}/{c['theme']['event']}.csv`" in text
        else:
            assert "CSV exports" not in text
        if c["restored"]:
            assert f"`{c['restored']}`" in text
        else:
            assert "dump" not in text
        for secret in d.secrets:
            assert secret not in text


@pytest.mark.skipif(not shutil.which("sqlite3"), reason="sqlite3 shell needed")
def test_hard_reference_passes_and_near_misses_fail(tmp_path):
    d = draft(Difficulty.HARD, 6)
    c = d.context
    assert c["sources"] == ["archive", "restored", "incoming"]
    paths = [c["db"], c["out_dir"], c["work"], c["archive"], c["incoming"], c["restored"]]
    paths = sorted(set(paths), key=len)

    def run(script: str, root: Path) -> list[str]:
        def moved(text: str) -> str:
            for path in reversed(paths):
                text = text.replace(path, f"{root}{path}")
            return text

        for folder in (
            c["db"].rsplit("/", 1)[0],
            c["archive"].rsplit("/", 1)[0],
            c["incoming"],
            "/tmp",
        ):
            os.makedirs(f"{root}{folder}", exist_ok=True)
        subprocess.run(
            ["sqlite3", f"{root}{c['db']}"],
            input=d.files["environment/seed.sql"],
            text=True,
            check=True,
        )
        subprocess.run(
            ["sqlite3", f"{root}{c['archive']}"],
            input=d.files["environment/archive.sql"],
            text=True,
            check=True,
        )
        for rel, data in d.files.items():
            if rel.startswith("environment/incoming/"):
                Path(f"{root}{c['incoming']}/{rel.rsplit('/', 1)[1]}").write_text(data)
            elif rel.startswith("environment/restored/"):
                os.makedirs(f"{root}{c['restored'].rsplit('/', 1)[0]}", exist_ok=True)
                Path(f"{root}{c['restored']}").write_bytes(data)
        subprocess.run(["bash", "-c", moved(script)], capture_output=True, timeout=120)
        tests = grammar.render(FAMILY, d, "tests/test_outputs.py.j2")
        return grammar.pytest_failures(root, moved(tests))

    assert run(grammar.render(FAMILY, d, "solution/solve.sh.j2"), tmp_path / "ref") == []
    for name in [
        "unfixed-archive",
        "unfixed-restored",
        "unfixed-incoming",
        *list(d.mutations)[3:4],
    ]:
        assert run(d.mutations[name], tmp_path / name), name
