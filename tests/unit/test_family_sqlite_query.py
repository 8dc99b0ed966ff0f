"""sqlite-query's generation logic, without Docker: the answer computed in Python from the shop
model must equal what SQLite itself computes from the generated seed script, every near-miss
query must give a different answer on the same data, and the difficulty picks the questions."""

from __future__ import annotations

import hashlib
import random
import sqlite3

import pytest

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


@pytest.mark.parametrize("difficulty", list(Difficulty))
@pytest.mark.parametrize("seed", SEEDS)
def test_python_answer_equals_sqlite_answer(difficulty, seed):
    d = draft(difficulty, seed)
    q = d.context["q"]
    assert q["rows"], "a question with an empty answer tests nothing"
    assert answer(database(d), q["sql"]) == q["rows"]


@pytest.mark.parametrize("difficulty", list(Difficulty))
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
        level: {draft(level, seed).context["q"]["slug"] for seed in range(1, 25)}
        for level in Difficulty
    }
    assert slugs[Difficulty.EASY].isdisjoint(slugs[Difficulty.HARD])
    assert slugs[Difficulty.EASY].isdisjoint(slugs[Difficulty.MEDIUM])
    assert all(len(s) >= 2 for s in slugs.values()), slugs
    hard_sql = " ".join(draft(Difficulty.HARD, s).context["q"]["sql"] for s in range(1, 25))
    assert any(word in hard_sql for word in ("HAVING", "OVER", "RANK"))
