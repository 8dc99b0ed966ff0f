"""File and permission management: bring a deployment tree in line with a written policy."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator

from factory.families.base import Draft, Family, register
from factory.families.slots import Slots, Slug, Word, not_system_account
from factory.families.terminal.state_snapshot import snapshot_path, tree_hook
from factory.vocabulary import Difficulty

APPS = [
    "ledger",
    "harbor-api",
    "inkwell",
    "tidepool",
    "quarry",
    "lantern",
    "sprocket",
    "orchard",
    "beacon",
    "meridian",
    "cobalt",
    "juniper",
    "atlas-sync",
    "pebble",
    "foundry",
]
USERS = ["deploy", "svc", "appuser", "runner", "www-app", "release", "ops", "daemon-app"]
SCRIPT_WORDS = ["start", "stop", "migrate", "backup", "rotate", "healthcheck", "warmup", "reindex"]
CONF_WORDS = ["app", "database", "cache", "logging", "features", "routes", "workers", "limits"]
DATA_WORDS = ["users", "orders", "events", "sessions", "reports", "invoices", "metrics"]
WRONG_MODES = ["777", "666", "644", "755", "700", "600", "775", "664"]


class PermissionSlots(Slots):
    """A deployed application's tree under /srv: the application's name, the service account
    that runs it and the kinds of data files it keeps."""

    app: Slug = Field(description="the application's short name", examples=["tide-tables"])
    user: Slug = Field(
        description="the service account that runs it (a new login name)", examples=["tidebot"]
    )
    data_words: list[Word] = Field(
        min_length=7,
        max_length=8,
        description="one-word names of the data files it keeps",
        examples=[["tides", "berths", "vessels", "pilots", "cargo", "manifests", "crews"]],
    )

    @field_validator("user")
    @classmethod
    def _new_account(cls, value: str) -> str:
        return not_system_account(value)


@register
class FilePermissions(Family):
    """Tree under /srv/<app> with wrong modes/owners; the policy in the instruction says what
    each kind of file must have. Harder: more kinds, ownership, a setgid shared folder, files
    with spaces, and a symlink whose target must not change."""

    name = "file-permissions"
    title = "Fix ownership and modes of a deployment tree to match a policy"
    category = "file-management"
    slots = PermissionSlots

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        app = self.filled("app", None) or rng.choice(APPS)
        user = self.filled("user", None) or rng.choice(USERS)
        data_words = self.filled("data_words", DATA_WORDS)
        group = rng.choice([user, f"{user}-grp", "appgroup", "staff-app"])
        root = f"/srv/{app}"
        script_mode, config_mode, data_mode = (
            rng.choice(m)
            for m in (["750", "755", "700"], ["640", "600", "644"], ["660", "640", "600"])
        )
        dir_mode = rng.choice(["750", "755", "770"])
        n = {"easy": 2, "medium": 4, "hard": 6}[difficulty.value]
        scripts = [f"bin/{w}.sh" for w in rng.sample(SCRIPT_WORDS, n)]
        configs = [
            f"etc/{w}.{rng.choice(['conf', 'ini', 'yaml'])}" for w in rng.sample(CONF_WORDS, n)
        ]
        data = [f"data/{w}-{rng.randint(2019, 2026)}.csv" for w in rng.sample(data_words, n)]
        if difficulty is Difficulty.HARD:
            data.append(f"data/{rng.choice(data_words)} export final.csv")
            configs.append(f"etc/.{rng.choice(CONF_WORDS)}.local")
        rules = [
            {"kind": "directory", "glob": "every directory", "mode": dir_mode},
            {"kind": "script", "glob": "bin/*.sh", "mode": script_mode},
            {"kind": "config", "glob": "etc/* (hidden files too)", "mode": config_mode},
        ]
        if difficulty is not Difficulty.EASY:
            rules.append({"kind": "data", "glob": "data/*", "mode": data_mode})
        owned = difficulty is not Difficulty.EASY
        shared = f"{root}/shared" if difficulty is Difficulty.HARD else None
        link = None
        if difficulty is Difficulty.HARD:
            link = {"path": "current.conf", "target": f"/etc/{app}-default.conf"}
        files = {}
        for rel in scripts:
            files[rel] = {
                "mode": rng.choice(WRONG_MODES),
                "content": f"#!/bin/sh\necho {app} {rel}\n",
            }
        for rel in configs:
            files[rel] = {
                "mode": rng.choice(WRONG_MODES),
                "content": f"# {app} {rel}\nkey={rng.randint(1, 9999)}\n",
            }
        if difficulty is not Difficulty.EASY:
            for rel in data:
                files[rel] = {
                    "mode": rng.choice(WRONG_MODES),
                    "content": f"id,value\n{rng.randint(1, 99)},{rng.random():.4f}\n",
                }
        # Make sure at least one file of each kind starts out wrong.
        for rel, spec in files.items():
            want = (
                script_mode
                if rel.startswith("bin/")
                else config_mode
                if rel.startswith("etc/")
                else data_mode
            )
            if spec["mode"] == want:
                spec["mode"] = "777"
        snapshot = snapshot_path("permissions.json")
        expected = {}
        for rel in files:
            want = (
                script_mode
                if rel.startswith("bin/")
                else config_mode
                if rel.startswith("etc/")
                else data_mode
            )
            expected[rel] = want
        return Draft(
            context={
                "app": app,
                "user": user,
                "group": group,
                "root": root,
                "rules": rules,
                "owned": owned,
                "shared": shared,
                "link": link,
                "files": files,
                "expected": expected,
                "dir_mode": dir_mode,
                "dirs": sorted({r.split("/")[0] for r in files}),
                "snapshot": snapshot,
            },
            files={f"environment/tree/{rel}": spec["content"] for rel, spec in files.items()},
            outputs=[root],
            # Modes and owners do not survive the copy to the verifier's container: a hook
            # snapshots them (and the link's target, outside the tree) in the agent's.
            separate_verifier=True,
            artifacts=[snapshot],
            collect=[tree_hook("permissions.json", [root], [link["target"]] if link else [])],
            tags=["chmod", "chown"] + (["setgid"] if shared else []),
        )
