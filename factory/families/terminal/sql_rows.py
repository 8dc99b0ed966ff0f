"""SQL text for seed data shared by the SQLite families: literals, INSERT statements, timestamps,
company names."""

from __future__ import annotations

from datetime import datetime
from typing import Any

COMPANY_WORDS = [
    "Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Tyrell", "Cyberdyne", "Soylent",
    "Hooli", "Vandelay", "Wonka", "Gringotts", "Oscorp", "Monarch", "Nakatomi", "Blue Sun",
]  # fmt: skip
COMPANY_SUFFIX = ["Ltd", "GmbH", "& Sons", "Supplies", "Trading", "Group", "Works", "Co"]


def sql_time(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S")


def sql_literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, int):
        return str(v)
    return "'" + str(v).replace("'", "''") + "'"


def insert_sql(table: str, cols: list[str], rows: list[tuple[Any, ...]]) -> list[str]:
    out = []
    for start in range(0, len(rows), 200):
        chunk = rows[start : start + 200]
        values = ",\n".join("(" + ", ".join(sql_literal(v) for v in r) + ")" for r in chunk)
        out.append(f"INSERT INTO {table} ({', '.join(cols)}) VALUES\n{values};")
    return out
