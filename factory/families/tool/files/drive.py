"""The seeded state of a cloud drive plus the bookkeeping the request parts need to add records to it."""

from __future__ import annotations

import datetime
import random

from factory.toolenv.core import JSON

from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.names import MONTH_NAMES
from factory.families.tool.wordings import possessive

from .data import CITIES, CLIENTS, DEPTS, PRODUCTS, SIZES, WORDINGS


class Drive:
    """The seeded state plus the bookkeeping the samplers need to add records to it."""

    def __init__(self, rng: random.Random, state: JSON) -> None:
        self.rng = rng
        self.state = state
        self.me = next(u for u in state["users"] if u["user_id"] == state["acting_user"])
        self.others = [u for u in state["users"] if u["user_id"] != self.me["user_id"]]
        self.names = {f["name"] for f in state["files"]}
        root = next(f for f in state["folders"] if not f["parent_id"])
        self.depts = [f for f in state["folders"] if f["parent_id"] == root["folder_id"]]
        self.subs = [f for f in state["folders"] if f["parent_id"] not in ("", root["folder_id"])]
        self.today = datetime.date.fromisoformat(state["today"])

    # --- names and places ---------------------------------------------------------------------
    def dept_of(self, folder: JSON) -> JSON:
        while folder not in self.depts:
            folder = next(f for f in self.state["folders"] if f["folder_id"] == folder["parent_id"])
        return folder

    def path(self, folder: JSON) -> str:
        if folder in self.depts:
            return folder["name"]
        return f"{self.dept_of(folder)['name']}/{folder['name']}"

    def where(self, folder: JSON) -> str:
        """The folder as a person would name it."""
        if folder in self.depts:
            return WORDINGS.draw(self.rng, "department-folder", folder=folder["name"])
        dept = self.dept_of(folder)["name"]
        return WORDINGS.draw(
            self.rng,
            "subfolder",
            dept=dept,
            dept_possessive=possessive(dept),
            folder=folder["name"],
        )

    def fill(self, pattern: str) -> str:
        r = self.rng
        return pattern.format(
            year=r.choice([2024, 2025, 2026]),
            q=r.randint(1, 4),
            month=r.choice(MONTH_NAMES),
            product=r.choice(PRODUCTS),
            client=r.choice(CLIENTS),
            city=r.choice(CITIES),
            first=r.choice(FIRST),
            last=r.choice(LAST),
        )

    def fresh_name(self, folder: JSON | None = None, patterns: list[str] | None = None) -> str:
        """A file name no file in the drive has yet."""
        dept = self.dept_of(folder)["name"] if folder else self.rng.choice(list(DEPTS))
        for attempt in range(400):
            name = self.fill(self.rng.choice(patterns or DEPTS[dept]))
            if attempt >= 200:  # the patterns are used up: number the name instead
                stem, ext = name_stem(name), extension(name)
                name = f"{stem} v{attempt - 198}{ext}"
            if name not in self.names and not any(name in n or n in name for n in self.names):
                self.names.add(name)
                return name
        raise AssertionError("files: ran out of file names")

    def size(self, name: str) -> int:
        low, high = SIZES[extension(name)]
        return self.rng.randint(low, high)

    def versions(self, name: str, count: int, owner: str, editors: list[str]) -> list[JSON]:
        back = sorted(self.rng.sample(range(1, 120), count), reverse=True)
        out = []
        for i, days in enumerate(back):
            day = self.today - datetime.timedelta(days=days)
            out.append(
                {
                    "version": i + 1,
                    "modified": day.isoformat(),
                    "modified_by": owner if i == 0 else self.rng.choice([owner, *editors]),
                    "size": self.size(name),
                }
            )
        return out

    def add_file(
        self,
        folder: JSON,
        *,
        name: str = "",
        owner: str = "",
        tags: list[str] | None = None,
        versions: int = 0,
        shares: list[tuple[JSON, str]] | None = None,
        trashed: bool = False,
    ) -> JSON:
        name = name or self.fresh_name(folder)
        owner = owner or self.me["user_id"]
        share_rows = [
            {
                "email": u["email"],
                "role": role,
                "since": (
                    self.today - datetime.timedelta(days=self.rng.randint(1, 200))
                ).isoformat(),
            }
            for u, role in shares or []
        ]
        editors = [
            u["user_id"]
            for u in self.state["users"]
            if any(s["email"] == u["email"] and s["role"] == "editor" for s in share_rows)
        ]
        history = self.versions(name, versions or self.rng.randint(1, 3), owner, editors)
        file = {
            "file_id": f"fl-{self.state['next_file']}",
            "name": name,
            "folder_id": folder["folder_id"],
            "owner": owner,
            "size": history[-1]["size"],
            "tags": sorted(set(tags or [])),
            "versions": history,
            "shares": sorted(share_rows, key=lambda s: s["email"]),
            "links": [],
            "trashed": trashed,
            "trashed_on": "",
        }
        if trashed:
            file["trashed_on"] = (
                self.today - datetime.timedelta(days=self.rng.randint(1, 20))
            ).isoformat()
        self.state["next_file"] += 1
        self.state["files"].append(file)
        self.names.add(name)
        return file

    def mine(self, folder: JSON | None = None, **kw: object) -> JSON:
        """A new file of the acting user's, shared with a colleague or two now and then."""
        folder = folder or self.rng.choice(self.subs)
        kw.setdefault(
            "shares",
            [
                (u, self.rng.choice(["viewer", "editor"]))
                for u in self.rng.sample(self.others, self.rng.randint(0, 2))
            ],
        )
        return self.add_file(folder, **kw)  # type: ignore[arg-type]

    def two_folders(self) -> tuple[JSON, JSON]:
        first, second = self.rng.sample(self.subs, 2)
        return first, second


def extension(name: str) -> str:
    return name[name.rfind(".") :]


def name_stem(name: str) -> str:
    return name[: name.rfind(".")]


def pretty_date(date: str, today: str) -> str:
    day = datetime.date.fromisoformat(date)
    text = f"{MONTH_NAMES[day.month - 1]} {day.day}"
    return text if date[:4] == today[:4] else f"{text}, {day.year}"


def variant(rng: random.Random, name: str) -> str:
    stem, ext = name_stem(name), extension(name)
    if "draft" in stem.lower():
        return stem.replace("draft", "final").replace("Draft", "Final") + ext
    return (
        stem + rng.choice([" - final", " (approved)", " v2", " - signed off", " - reviewed"]) + ext
    )
