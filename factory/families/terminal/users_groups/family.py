"""users-groups: create and fix users, groups, memberships, shells, homes and passwords to a
specification, without disturbing the accounts that are already right."""

from __future__ import annotations

import random
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.families.base import Draft, Family, register
from factory.families.terminal.state_snapshot import snapshot_path, tree_hook
from factory.families.terminal.words import APPS
from factory.vocabulary import Difficulty


class _Names(BaseModel):
    """The names a task draws (names.toml)."""

    model_config = ConfigDict(extra="forbid")

    people: list[str]
    teams: list[str]
    extra_groups: list[str]
    services: list[str]
    words: list[str]
    """The words of the passwords a task hands out."""


UG_NAMES = load_toml_model(Path(__file__).parent / "names.toml", _Names, "users-groups names")
HASH_ALPHABET = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _fake_sha512_hash(rng: random.Random) -> str:
    """A well-formed SHA-512 crypt string (its password is unknown to everyone)."""
    salt = "".join(rng.choice(HASH_ALPHABET) for _ in range(16))
    return f"$6${salt}$" + "".join(rng.choice(HASH_ALPHABET) for _ in range(86))


@register
class UsersGroups(Family):
    """Create and modify users and groups to a written spec: fixed uids/gids, primary and
    supplementary groups, shells, home directories with contents, modes and ownership, a
    password from a given value, a password hash from a file, locked accounts, a system account,
    a setgid shared directory. Hard: also repair an inconsistent account database (two users
    sharing a uid, a missing home, a group listing a user that no longer exists) without
    breaking the other users. Tests read passwd/group/shadow/gshadow and the filesystem."""

    name = "users-groups"
    title = "Create and repair users, groups and home directories to a specification"
    category = "system-administration"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        org = rng.choice(APPS)
        people = iter(rng.sample(UG_NAMES.people, 12))
        uids = iter(rng.sample(range(2001, 2999), 12))
        gids = iter(rng.sample(range(3001, 3999), 8))
        teams = rng.sample(UG_NAMES.teams, 3)
        extras = rng.sample(UG_NAMES.extra_groups, 3)
        onboarding = f"/srv/{org}-onboarding"

        setup: list[str] = []  # Dockerfile commands (the state the agent finds)
        solve: list[str] = []  # reference solution commands
        groups: dict[str, dict[str, Any]] = {}  # name -> {gid, members (final)}
        users: dict[str, dict[str, Any]] = {}  # name -> final spec checked by the tests
        steps: list[dict[str, Any]] = []  # instruction items
        files: dict[str, str] = {}

        def login_account(
            name: str, uid: int, useradd: str, supplementary: list[str], **spec: Any
        ) -> None:
            """An account the image already has, made by ``useradd`` (its options), with a
            group of its own whose gid is its uid; ``spec``: more of what the tests check."""
            setup.extend([f"useradd {useradd} {name}", f"groupmod -g {uid} {name}"])
            groups[name] = {"gid": uid, "members": set()}
            users[name] = {
                "uid": uid,
                "group": name,
                "groups": supplementary,
                "shell": "/bin/bash",
                "home": f"/home/{name}",
                **spec,
            }

        # Groups that already exist (with members) and the one(s) to create.
        old_groups = [extras[0], teams[0]]
        for g in old_groups:
            gid = next(gids)
            groups[g] = {"gid": gid, "members": set()}
            setup.append(f"groupadd -g {gid} {g}")
        n_new_groups = {"easy": 1, "medium": 2, "hard": 2}[level]
        new_groups = [teams[1], extras[1]][:n_new_groups]
        for g in new_groups:
            gid = next(gids)
            groups[g] = {"gid": gid, "members": set()}
            steps.append({"kind": "group", "name": g, "gid": gid})
            solve.append(f"groupadd -g {gid} {g}")

        # An existing user who joins a new group and changes shell, keeping their groups.
        veteran = next(people)
        v_uid = next(uids)
        v_groups = set(old_groups)
        setup.append(
            f"useradd -m -u {v_uid} -U -s /bin/sh -G {','.join(sorted(v_groups))} {veteran}"
        )
        v_hash = _fake_sha512_hash(rng)
        setup.append(f"usermod -p '{v_hash}' {veteran}")
        groups[veteran] = {"gid": v_uid, "members": set()}
        setup.append(f"groupmod -g {v_uid} {veteran}")
        v_join = new_groups[0]
        users[veteran] = {
            "uid": v_uid,
            "group": veteran,
            "groups": sorted(v_groups | {v_join}),
            "shell": "/bin/bash",
            "home": f"/home/{veteran}",
            "hash": v_hash,
        }
        steps.append({"kind": "join", "name": veteran, "group": v_join, "shell": "/bin/bash"})
        solve += [f"usermod -aG {v_join} -s /bin/bash {veteran}"]

        # New people.
        n_people = {"easy": 2, "medium": 3, "hard": 3}[level]
        password_user = None
        hash_user = None
        for i in range(n_people):
            name, uid = next(people), next(uids)
            own_group = i % 2 == 0
            if own_group:
                gid = next(gids)
                primary = name
                groups[name] = {"gid": gid, "members": set()}
                solve.append(f"groupadd -g {gid} {name}")
            else:
                primary = rng.choice(new_groups)
                gid = groups[primary]["gid"]
            pool = [g for g in [*new_groups, *old_groups] if g != primary]
            supp = sorted(rng.sample(pool, rng.randint(1, min(2, len(pool)))))
            shell = rng.choice(["/bin/bash", "/bin/bash", "/bin/sh"])
            home = (
                f"/home/{name}"
                if level == "easy" or own_group or rng.random() < 0.5
                else f"/home/{primary}/{name}"
            )
            mode = rng.choice(["700", "750", "751"])
            welcome = None
            if level != "easy":
                welcome = f"{onboarding}/{name}.md"
                files[f"environment/onboarding/{name}.md"] = (
                    f"# Welcome to {org}, {name}\n\nYour team: {primary}.\n"
                    f"Ticket: {org.upper()}-{rng.randint(100, 999)}\n"
                )
            spec: dict[str, Any] = {
                "uid": uid,
                "group": primary,
                "gid": gid,
                "groups": supp,
                "shell": shell,
                "home": home,
                "home_mode": mode,
                "skel": True,
                "welcome": welcome,
            }
            if password_user is None:
                password_user = name
                spec["password"] = (
                    f"{rng.choice(UG_NAMES.words).capitalize()}-{rng.choice(UG_NAMES.words)}-"
                    f"{rng.randint(10, 99)}{rng.choice('!#%+=')}"
                )
            elif hash_user is None and level != "easy":
                hash_user = name
                spec["hash"] = _fake_sha512_hash(rng)
                spec["hash_file"] = f"/root/provisioning/{name}.hash"
                files[f"environment/provisioning/{name}.hash"] = spec["hash"] + "\n"
            users[name] = spec
            steps.append({"kind": "user", "name": name, **spec})
            solve.append(
                f"useradd -m -k /etc/skel -u {uid} -g {primary} -G {','.join(supp)} "
                f"-s {shell} -d {home} {name}"
            )
            solve.append(f"chmod {mode} {home}")
            if welcome:
                solve.append(f"install -o {name} -g {primary} -m 640 {welcome} {home}/WELCOME.md")
            if "password" in spec:
                solve.append(f"echo {_sh(name + ':' + spec['password'])} | chpasswd")
            if "hash" in spec:
                solve.append(f'usermod -p "$(cat {spec["hash_file"]})" {name}')

        # Medium/hard: a system account, a locked account, a setgid shared directory.
        shared = None
        if level != "easy":
            svc = rng.choice(UG_NAMES.services)
            sid = rng.randint(900, 989)
            groups[svc] = {"gid": sid, "members": set()}
            users[svc] = {
                "uid": sid,
                "group": svc,
                "gid": sid,
                "groups": [],
                "shell": "/usr/sbin/nologin",
                "home": f"/var/lib/{svc}",
                "home_mode": "750",
                "skel": False,
                "no_login": True,
                "system": True,
            }
            steps.append({"kind": "system", "name": svc, "uid": sid, "home": f"/var/lib/{svc}"})
            solve += [
                f"groupadd -r -g {sid} {svc}",
                f"useradd -r -u {sid} -g {svc} -s /usr/sbin/nologin -d /var/lib/{svc} -M {svc}",
                f"install -d -o {svc} -g {svc} -m 750 /var/lib/{svc}",
            ]
            leaver, l_uid = next(people), next(uids)
            l_hash = _fake_sha512_hash(rng)
            useradd = f"-m -u {l_uid} -U -s /bin/bash -G {teams[0]}"
            login_account(leaver, l_uid, useradd, [teams[0]], hash="!" + l_hash)
            setup.append(f"usermod -p '{l_hash}' {leaver}")
            steps.append({"kind": "lock", "name": leaver})
            solve.append(f"usermod -L {leaver}")
            shared_group = new_groups[1] if len(new_groups) > 1 else new_groups[0]
            shared = {"path": f"/srv/{org}-{shared_group}", "group": shared_group}
            steps.append({"kind": "shared", **shared})
            solve.append(f"install -d -o root -g {shared_group} -m 2770 {shared['path']}")

        # Hard: repair the account database.
        if level == "hard":
            keep, clone = next(people), next(people)
            dup_uid, new_uid = next(uids), next(uids)
            keep_owns = [f"/home/{keep}", f"/home/{keep}/notes.txt", f"/var/cache/{keep}"]
            login_account(keep, dup_uid, f"-m -u {dup_uid} -U -s /bin/bash", [], owned=keep_owns)
            setup += [
                f"useradd -m -o -u {dup_uid} -U -s /bin/bash {clone}",
                f"mkdir -p /var/cache/{keep} /var/cache/{clone}",
                f"printf 'notes of {keep}\\n' > /home/{keep}/notes.txt",
                f"printf 'notes of {clone}\\n' > /home/{clone}/notes.txt",
                f"printf 'cache\\n' > /var/cache/{keep}/data.bin",
                f"printf 'cache\\n' > /var/cache/{clone}/data.bin",
                f"chown -R {dup_uid} /home/{keep} /home/{clone} /var/cache/{keep} "
                f"/var/cache/{clone}",
            ]
            clone_gid = next(gids)
            setup.append(f"groupmod -g {clone_gid} {clone}")
            setup.append(f"chgrp -R {clone} /home/{clone} /var/cache/{clone}")
            groups[clone] = {"gid": clone_gid, "members": set()}
            users[clone] = {
                "uid": new_uid,
                "group": clone,
                "groups": [],
                "shell": "/bin/bash",
                "home": f"/home/{clone}",
                "owned": [
                    f"/home/{clone}",
                    f"/home/{clone}/notes.txt",
                    f"/var/cache/{clone}",
                    f"/var/cache/{clone}/data.bin",
                ],
            }
            steps.append(
                {"kind": "dupuid", "keep": keep, "clone": clone, "uid": new_uid, "old": dup_uid}
            )
            solve += [
                f"usermod -u {new_uid} {clone}",  # also re-owns what is in the home directory
                f"chown -R {new_uid} /var/cache/{clone}",
            ]
            homeless, h_uid = next(people), next(uids)
            h_mode = rng.choice(["700", "750"])
            useradd = f"-M -u {h_uid} -U -s /bin/bash -d /home/{homeless}"
            login_account(homeless, h_uid, useradd, [], home_mode=h_mode, skel=True)
            steps.append({"kind": "nohome", "name": homeless, "mode": h_mode})
            solve += [
                f"mkdir -p /home/{homeless}",
                f"cp -a /etc/skel/. /home/{homeless}/",
                f"chown -R {homeless}:{homeless} /home/{homeless}",
                f"chmod {h_mode} /home/{homeless}",
            ]
            ghost = next(people)
            ghost_group = old_groups[0]
            setup += [
                f"sed -i 's/^\\({ghost_group}:.*[^:]\\)$/\\1,{ghost}/; "
                f"s/^\\({ghost_group}:.*:\\)$/\\1{ghost}/' /etc/group /etc/gshadow",
            ]
            steps.append({"kind": "ghost", "name": ghost, "group": ghost_group})
            solve.append(f"gpasswd -d {ghost} {ghost_group}")

        for name, spec in users.items():
            spec.setdefault("gid", groups[spec["group"]]["gid"])
            for g in spec["groups"]:
                groups[g]["members"].add(name)
        group_spec = {
            g: {"gid": v["gid"], "members": sorted(v["members"])} for g, v in groups.items()
        }
        new_users = [s["name"] for s in steps if s["kind"] in ("user", "system")]
        pw_line = next(c for c in solve if c.endswith("| chpasswd"))
        pw_spec = users[password_user]
        mutants = {
            # ids left to the tools' defaults
            "auto-ids": [
                re.sub(r" -[ug] \d+", "", c) if c.startswith(("groupadd", "useradd")) else c
                for c in solve
            ],
            # supplementary groups replaced instead of appended to
            "replace-groups": [c.replace("usermod -aG", "usermod -G") for c in solve],
            # users created without their home directories
            "no-home": [c.replace("useradd -m -k /etc/skel", "useradd -M") for c in solve],
            # the password written into the shadow file as is, not hashed
            "plaintext-password": [
                f"usermod -p {_sh(pw_spec['password'])} {password_user}" if c == pw_line else c
                for c in solve
            ],
            # groups added behind the tools' back: no /etc/gshadow entries
            "no-gshadow": solve + [f"sed -i '/^{g}:/d' /etc/gshadow" for g in new_groups],
        }
        # The separate verifier gets the account database and the homes, owners and modes
        # as a hook snapshots them in the agent's container (owners and modes do not survive
        # the copy; the verifier's own /etc holds the image's accounts).
        accounts = ["/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow"]
        roots = ["/etc/skel"]
        for spec in users.values():
            if "home_mode" in spec:
                roots.append(spec["home"])
            roots += spec.get("owned", [])
        if shared:
            roots.append(shared["path"])
        welcomes = sorted(s["welcome"] for s in users.values() if s.get("welcome"))
        return Draft(
            context={
                "snapshot": snapshot_path("accounts.json"),
                "org": org,
                "setup": setup,
                "solve": solve,
                "steps": steps,
                "users": users,
                "groups": group_spec,
                "new_users": new_users,
                "new_groups": new_groups,
                "veteran": veteran,
                "shared": shared,
                "onboarding": onboarding,
                "has_onboarding": any(k.startswith("environment/onboarding/") for k in files),
                "has_hashes": any(k.startswith("environment/provisioning/") for k in files),
                "password_user": password_user,
                "mutants": mutants,
            },
            files=files,
            outputs=[users[n]["home"] + "/" for n in new_users],
            separate_verifier=True,
            artifacts=[snapshot_path("accounts.json")],
            collect=[tree_hook("accounts.json", list(dict.fromkeys(roots)), welcomes, accounts)],
            tags=["useradd", "groups", "shadow"] + (["repair"] if level == "hard" else []),
        )


def _sh(text: str) -> str:
    return shlex.quote(text)
