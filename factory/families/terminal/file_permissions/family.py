"""File and permission management: bring a deployment tree in line with a written policy."""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from factory.families.base import Draft, Family, register
from factory.families.slots import Slots, Slug, Word, not_system_account
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.state_snapshot import snapshot_path, tree_hook
from factory.families.terminal.traps import load_traps, traps_for
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
KEY_WORDS = ["signing", "session", "api", "tls", "backup", "webhook"]

#: Hard: the sub-problems a task composes (three or four of them), besides the base policy
#: (directories, scripts, configs, data, ownership).
FP_FAULTS = [
    "shared-setgid",  # a group-shared folder must carry the setgid bit (announced)
    "sticky-tmp",  # a scratch folder must be group-writable and sticky (announced)
    "private-keys",  # a key folder and its keys with their own, stricter modes (announced)
    "root-scripts",  # the scripts must stay root's, so the account cannot edit its own code
    "link-target",  # a link in the tree to a file outside it: chown through it changes that
    "stray-setgid",  # a nested folder carries a setgid bit a numeric chmod keeps
    "hidden-config",  # a dot file among the configs: a shell glob misses it
    "spaced-name",  # a data file with spaces in its name: word splitting misses it
]
#: The unannounced ones: what each is, and the words that would give it away (traps.toml).
FP_TRAPS = load_traps(Path(__file__).parent / "traps.toml", FP_FAULTS)


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
    each kind of file must have. Medium: more kinds and ownership. Hard: the base policy plus
    three or four sub-problems drawn from :data:`FP_FAULTS`: announced ones (a setgid shared
    folder, a sticky scratch folder, a key folder, scripts that stay root's) and unannounced
    traps (a link to a file outside the tree, a nested folder whose stray setgid bit a numeric
    chmod keeps, a hidden config a glob misses, a data file with spaces in its name). Each
    hard task carries one near miss per sub-problem: the reference with that one left undone."""

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
        hard = difficulty is Difficulty.HARD
        faults = sorted(rng.sample(FP_FAULTS, rng.randint(3, 4))) if hard else []
        if "spaced-name" in faults:
            data.append(f"data/{rng.choice(data_words)} export final.csv")
        if "hidden-config" in faults:
            configs.append(f"etc/.{rng.choice(CONF_WORDS)}.local")
        keys = []
        if "private-keys" in faults:
            keys = [f"keys/{w}.pem" for w in rng.sample(KEY_WORDS, 2)]
        stray = None
        if "stray-setgid" in faults:
            stray = "data/archive"
            data.append(f"{stray}/{rng.choice(data_words)}-{rng.randint(2015, 2018)}.csv")
        rules = [
            {
                "kind": "directory",
                "glob": "every directory",
                "mode": dir_mode,
            },
            {"kind": "script", "glob": "bin/*.sh", "mode": script_mode},
            {
                "kind": "config",
                "glob": "every file in `etc/`" if hard else "etc/* (hidden files too)",
                "mode": config_mode,
            },
        ]
        if difficulty is not Difficulty.EASY:
            glob = "every file under `data/`, at any depth" if hard else "data/*"
            rules.append({"kind": "data", "glob": glob, "mode": data_mode})
        owned = difficulty is not Difficulty.EASY
        shared = f"{root}/shared" if "shared-setgid" in faults else None
        link = None
        if "link-target" in faults:
            link = {"path": "current.conf", "target": f"/etc/{app}-default.conf"}
        # Folders with modes of their own (path -> mode); every other one gets dir_mode.
        special = {}
        if shared:
            special[shared] = f"2{dir_mode[0]}70"
        tmp = f"{root}/tmp" if "sticky-tmp" in faults else None
        if tmp:
            special[tmp] = "1770"
        if keys:
            special[f"{root}/keys"] = "700"
        if special:
            rules[0]["glob"] = "every other directory"
        root_owned = [f"{root}/{rel}" for rel in scripts] if "root-scripts" in faults else []
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
        for rel in keys:
            material = "".join(rng.choice("0123456789abcdef") for _ in range(64))
            files[rel] = {
                "mode": rng.choice(WRONG_MODES),
                "content": f"# {app} {rel} (test key material)\n{material}\n",
            }

        def wanted(rel: str) -> str:
            if rel.startswith("keys/"):
                return "400"
            return (
                script_mode
                if rel.startswith("bin/")
                else config_mode
                if rel.startswith("etc/")
                else data_mode
            )

        # Make sure at least one file of each kind starts out wrong.
        for rel, spec in files.items():
            if spec["mode"] == wanted(rel):
                spec["mode"] = "777"
        snapshot = snapshot_path("permissions.json")
        expected = {rel: wanted(rel) for rel in files}
        traps = traps_for(FP_TRAPS, faults)
        context: dict[str, Any] = {
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
            "hard": hard,
            "faults": faults,
            "special": special,
            "tmp": tmp,
            "keys": keys,
            "stray": stray,
            "root_owned": root_owned,
            "script_mode": script_mode,
            "config_mode": config_mode,
            "data_mode": data_mode,
            "slip": None,
        }
        # Near misses: the reference with one of the task's sub-problems left undone.
        mutations = near_misses(self, context, faults, name="leave-{}")
        return Draft(
            context=context,
            files={f"environment/tree/{rel}": spec["content"] for rel, spec in files.items()},
            outputs=[root],
            # Modes and owners do not survive the copy to the verifier's container: a hook
            # snapshots them (and the link's target, outside the tree) in the agent's.
            separate_verifier=True,
            artifacts=[snapshot],
            collect=[tree_hook("permissions.json", [root], [link["target"]] if link else [])],
            tags=["chmod", "chown"] + (["setgid"] if shared else []),
            faults=faults,
            traps=traps,
            mutations=mutations,
        )
