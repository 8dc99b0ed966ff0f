"""Tool family: cloud drive requests (rename, move, share, restore, roll back, reorganise)."""

from __future__ import annotations

import random

from factory.toolenv.core import JSON

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.tool.scenario import Scenario, Shape
from factory.families.tool.toolfamily import ToolFamily, compose, draw_today, hard_traps
from factory.vocabulary import Difficulty

from .data import BIG, COMPANIES, DEPTS, GIB, MIN_FREE, SUBFOLDERS, TAGS, WORDINGS
from .drive import Drive
from .parts import SIMPLE, reorganise_part
from .traps import TRAPS


def _set_quotas(d: Drive) -> None:
    """Round quotas just above usage: little room for the acting user, and any oversize file is
    bigger than that room."""
    from factory.toolenv.domains.files import usage

    me = d.me["user_id"]
    used = usage(d.state, me)
    d.me["quota_bytes"] = -(-(used + MIN_FREE + d.rng.randrange(GIB)) // GIB) * GIB
    free = d.me["quota_bytes"] - used
    for file in d.state["files"]:
        if file.pop("oversize", False):
            file["size"] = free + d.rng.randint(GIB // 2, 4 * GIB)
            file["versions"][-1]["size"] = file["size"]
    for user in d.others:
        spare = d.rng.randint(5, 40) * GIB
        user["quota_bytes"] = -(-(usage(d.state, user["user_id"]) + spare) // GIB) * GIB


@register
class FileRequests(ToolFamily):
    """Requests to a company cloud drive (folders, files with versions, sharing, trash, quotas).
    Easy: one change found by lookup (rename, share, move, restore, roll back, tag, copy...) with
    a same-named decoy. Medium: two such changes, or a new folder that files are moved into (its
    id comes from the create call). Hard: a reorganisation plus more changes, and a part the
    policy forbids (a link to a confidential file, sharing outside the company, deleting someone
    else's file, dropping a confidential tag, a copy that would break the quota)."""

    name = "tool-files"
    title = "Handle a cloud drive request with file-storage tools under a sharing policy"
    toolenv_domain = "files"

    def seed_state(self, rng: random.Random, difficulty: Difficulty) -> JSON:
        today = draw_today(rng)
        company = rng.choice(COMPANIES)
        domain = f"{company}.example"
        names = rng.sample([f"{f} {s}" for f in FIRST for s in LAST], 10)
        users = [
            {
                "user_id": f"u-{100 + i}",
                "name": n,
                "quota_bytes": 0,
                "email": n.lower().replace(" ", ".") + f"@{domain}",
            }
            for i, n in enumerate(names)
        ]
        next_folder = rng.randrange(10, 90)
        root = {
            "folder_id": f"fo-{next_folder}",
            "name": "Company Drive",
            "parent_id": "",
            "owner": users[0]["user_id"],
            "created": "2020-01-06",
        }
        folders, next_folder = [root], next_folder + 1
        for dept in rng.sample(sorted(DEPTS), 5):
            top = {
                "folder_id": f"fo-{next_folder}",
                "name": dept,
                "parent_id": root["folder_id"],
                "owner": rng.choice(users)["user_id"],
                "created": "2021-03-01",
            }
            folders.append(top)
            next_folder += 1
            for sub in ["Archive", *rng.sample(SUBFOLDERS, rng.randint(2, 3))]:
                folders.append(
                    {
                        "folder_id": f"fo-{next_folder}",
                        "name": sub,
                        "parent_id": top["folder_id"],
                        "owner": top["owner"],
                        "created": "2022-09-12",
                    }
                )
                next_folder += 1
        state: JSON = {
            "today": today.isoformat(),
            "company_domain": domain,
            "acting_user": users[0]["user_id"],
            "users": users,
            "folders": folders,
            "files": [],
            "next_folder": next_folder,
            "next_file": rng.randrange(100, 900),
            "next_link": rng.randrange(10, 90),
        }
        d = Drive(rng, state)
        for folder in d.subs:
            for _ in range(rng.randint(1, 3)):
                owner = rng.choice([d.me, d.me, *d.others])
                others = [u for u in users if u is not owner]
                shares = [
                    (u, rng.choice(["viewer", "editor"]))
                    for u in rng.sample(others, rng.randint(0, 3))
                ]
                tags = rng.sample(TAGS, rng.randint(0, 2))
                if rng.random() < 0.15:
                    tags.append("confidential")
                d.add_file(
                    folder,
                    owner=owner["user_id"],
                    shares=shares,
                    tags=tags,
                    trashed=rng.random() < 0.1,
                )
        for _ in range(rng.randint(1, 3)):  # big files that eat the acting user's quota
            d.add_file(rng.choice(d.subs), name=d.fresh_name(patterns=BIG), versions=1)
        return state

    def sample(
        self, rng: random.Random, state: JSON, difficulty: Difficulty, shape: Shape = Shape.TASK
    ) -> Scenario:
        """Task-shaped requests only (:attr:`ToolFamily.shapes`)."""
        d = Drive(rng, state)
        if difficulty is Difficulty.EASY:
            parts = [rng.choice(SIMPLE)(d)]
        elif difficulty is Difficulty.MEDIUM:
            if rng.random() < 0.35:
                parts = [reorganise_part(d, 1)]
            else:
                parts = [make(d) for make in rng.sample(SIMPLE, 2)]
        else:
            count = rng.randint(1, 2)
            parts = [
                reorganise_part(d, count),
                *(make(d) for make in rng.sample(SIMPLE, 3 - count)),
            ]
            rng.shuffle(parts)
        traps = hard_traps(rng, difficulty, TRAPS, d)
        _set_quotas(d)

        return compose(
            rng,
            parts,
            traps,
            greetings=lambda: WORDINGS.fill(
                "hello", me=d.me["name"], department=lambda: d.dept_of(rng.choice(d.subs))["name"]
            ),
            byes=WORDINGS.fill("bye"),
            tags=["file-storage"],
        )
