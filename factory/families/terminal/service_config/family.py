"""service-config: repair the configuration of one or two small HTTP services so that they start
and answer as documented. The services are the programs in ``shipped/``; their configuration
formats and settings are described in :mod:`.settings`."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from factory.families.base import Draft, Family, Trap, register
from factory.families.slots import Slots, Slug, Word
from factory.families.terminal.shipped import fill, read
from factory.families.terminal.state_snapshot import python_hook, snapshot_path
from factory.families.terminal.words import APPS
from factory.vocabulary import Difficulty

from .settings import (
    SC_DOCS,
    SC_FAULTS,
    SC_FORMAT_DOC,
    SC_FORMATS,
    SC_FRONT_FAULTS,
    SC_NAMES,
    SC_SYSTEM_FAULTS,
    SC_TRAP_NAMES,
    _sc_render,
    _sc_sections,
)


def _sc_program(
    template: str,
    fmt: str,
    schema: dict[str, tuple[str, str, str, Any]],
    **values: Any,
) -> str:
    naming = "environment-style names" if fmt == "env" else "[section] key"
    docs = []
    for logical, (section, key, _kind, _default) in schema.items():
        label = f"{section}_{key}".upper() if fmt == "env" else f"[{section}] {key}"
        docs.append(f"  {label:<32} {SC_DOCS[logical][1]}")
    parser = fill(read(__file__, f"parse-{fmt}.py.tmpl")).rstrip("\n")
    common = fill(read(__file__, "common.py.tmpl"), PARSER=parser, FORMAT=fmt, **values)
    return fill(
        template,
        COMMON=common.rstrip("\n"),
        SCHEMA=repr(schema),
        FORMAT_DOC=SC_FORMAT_DOC[fmt],
        NAMING=naming,
        SETTINGS_DOC="\n".join(docs),
        **values,
    )


def _typo(word: str, rng: random.Random) -> str:
    """A plausible misspelling: two adjacent letters swapped (never the same word)."""
    spots = [i for i in range(len(word) - 1) if word[i] != word[i + 1] and word[i].isalpha()]
    i = rng.choice(spots)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


class ServiceSlots(Slots):
    """A small HTTP service (called <app>-<role>) that serves one kind of record: the
    application's name and the kinds of records it could serve."""

    app: Slug = Field(description="the application's short name", examples=["tide-board"])
    nouns: list[Word] = Field(
        min_length=3,
        max_length=6,
        description="one-word plural nouns for the records it serves",
        examples=[["sailings", "berths", "tickets"]],
    )


@register
class ServiceConfig(Family):
    """A small HTTP daemon shipped in the image (name, port, routes, config format and key
    names all drawn per task) whose configuration is wrong or incomplete. Medium: it runs as a
    service user through a launcher that loads an environment file (which overrides settings),
    the token file must become readable by that user only, and an access log is required.
    Hard: the log directory is missing and a second service that queries the first must be
    configured too. Tests start the services themselves, poll until ready, query them on
    127.0.0.1 and stop them."""

    name = "service-config"
    title = "Repair the configuration of a small HTTP service (and its environment) to spec"
    category = "service-configuration"
    slots = ServiceSlots

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        app = self.filled("app", None) or rng.choice(APPS)
        role = rng.choice(SC_NAMES.roles)
        svc = f"{app}-{role}"
        svcu = svc.upper().replace("-", "_")
        fmt = rng.choice(sorted(SC_FORMATS))
        ext = SC_FORMATS[fmt]
        config = f"/etc/{svc}/{svc}.{ext}"
        noun = rng.choice(self.filled("nouns", SC_NAMES.nouns))
        health = rng.choice(SC_NAMES.health)
        route = rng.choice([f"/api/v1/{noun}", f"/{noun}", f"/v2/{noun}", f"/api/{noun}/all"])
        port, wrong_port, port2, wrong_port2 = rng.sample(range(8100, 9900), 4)
        name = f"{rng.choice(SC_NAMES.words)}-{role}"
        data = f"/srv/{svc}/{noun}.txt"
        items = rng.sample(SC_NAMES.words, rng.randint(4, 9))
        token = "".join(rng.choice("0123456789abcdef") for _ in range(32))
        token_file = f"/etc/{svc}/token"
        user = f"{role}d" if level != "easy" else "root"
        logdir = f"/var/log/{svc}"
        log = f"{logdir}/access.log" if level != "easy" else ""

        sec = {k: rng.choice(v) for k, v in SC_NAMES.sections.items()}
        key = {k: rng.choice(v) for k, v in SC_NAMES.keys.items()}

        def served(service: str) -> dict[str, tuple[str, str, str, Any]]:
            """The settings every service of the task has: where it listens, its name."""
            return {
                "bind": (sec["server"], key["bind"], "str", "0.0.0.0"),
                "port": (sec["server"], key["port"], "int", None),
                "name": (sec["app"], key["name"], "str", service),
            }

        schema = {
            **served(svc),
            "data": (sec["app"], key["data"], "str", None),
            "maintenance": (sec["app"], key["maintenance"], "bool", False),
            "token_file": (sec["auth"], key["token_file"], "str", ""),
            "token": (sec["auth"], key["token"], "str", ""),
            "log_file": (sec["log"], key["log_file"], "str", ""),
        }

        good = {
            "bind": "127.0.0.1",
            "port": port,
            "name": name,
            "data": data,
            "maintenance": False,
            "token_file": token_file,
            "log_file": log or None,
        }
        # The fault grammar: faults of the configuration file, faults around the service
        # (medium: one environment fault and the token's permissions, both announced; hard: two
        # to four of them, unannounced) and, at hard, faults of a second service.
        faults = rng.sample([*SC_FAULTS, "name"], rng.randint(2, 3) if level == "hard" else 3)
        if level == "hard":
            other_log_fault = rng.choice(["log-dir-missing", "log-dir-owner"])  # one at most
            pool = [f for f in SC_SYSTEM_FAULTS if f != other_log_fault]
            system = rng.sample(pool, rng.randint(2, 4))
        elif level == "medium":
            system = [rng.choice(["env-override", "env-config-path"]), "token-perms"]
        else:
            system = []
        bad = dict(good)
        if "port" in faults:
            bad["port"] = wrong_port
        if "bind" in faults:
            bad["bind"] = "0.0.0.0"
        if "data" in faults:
            bad["data"] = f"/var/lib/{svc}/{noun}.txt"
        if "maintenance" in faults:
            bad["maintenance"] = True
        if "no_auth" in faults:
            bad["token_file"] = None
        if "name" in faults:
            bad["name"] = f"{svc}-legacy"
        if level != "easy":
            bad["log_file"] = None  # the access log is a new requirement
        initial_config = _sc_render(fmt, svc, _sc_sections(schema, bad))
        if "typo" in faults:
            section, k = schema[rng.choice(["port", "data", "bind"])][:2]
            label = f"{section}_{k}".upper() if fmt == "env" else k
            wrong = _typo(label, rng)
            lines = initial_config.split("\n")
            for i, line in enumerate(lines):
                stripped = line.lstrip()
                if stripped.startswith(label) and stripped[len(label) :].lstrip()[:1] in "=:":
                    lines[i] = line.replace(label, wrong, 1)
                    break
            initial_config = "\n".join(lines)
        good_config = _sc_render(fmt, svc, _sc_sections(schema, good))

        env_faults = [f.removeprefix("env-").replace("-", "_") for f in system if "env-" in f]
        env_file = f"/etc/default/{svc}"
        pidfile = f"/run/{svc}.pid"
        good_env = initial_env = None
        if level != "easy":
            good_env = (
                f"# environment of {svc}, loaded by /usr/local/bin/{svc}-run\n"
                f"{svcu}_CONFIG={config}\nPYTHONDONTWRITEBYTECODE=1\n"
            )
            initial_env = f"# environment of {svc}, loaded by /usr/local/bin/{svc}-run\n"
            if "config_path" in env_faults:
                initial_env += f"{svcu}_CONFIG=/etc/{svc}/{svc}-local.{ext}\n"
            else:
                initial_env += f"{svcu}_CONFIG={config}\n"
            if "override" in env_faults:
                initial_env += f"{svcu}_PORT={wrong_port}\n"
            initial_env += "PYTHONDONTWRITEBYTECODE=1\n"

        port_override = (
            f'cfg["port"] = int(os.environ.get("{svcu}_PORT") or cfg["port"])'
            if level != "easy"
            else "# (no environment overrides)"
        )
        env_doc = (
            f"\n${svcu}_PORT, when set (non-empty), overrides the configured port."
            if level != "easy"
            else ""
        )
        backend = _sc_program(
            read(__file__, "backend.py.tmpl"),
            fmt,
            schema,
            SVC=svc,
            SVCU=svcu,
            CONFIG=config,
            NOUN=noun,
            HEALTH=health,
            ROUTE=route,
            PORT_OVERRIDE=port_override,
            ENV_DOC=env_doc,
        )
        files: dict[str, str] = {
            f"environment/{svc}/{svc}.py": backend,
            f"environment/{svc}/config": initial_config,
            f"environment/{svc}/data.txt": "\n".join(items) + "\n",
            f"environment/{svc}/token": token + "\n",
        }
        launchers = []
        if level != "easy":
            files[f"environment/{svc}/env"] = initial_env or ""
            files[f"environment/{svc}/run"] = fill(
                read(__file__, "run-with-env.sh.tmpl"),
                SVC=svc,
                ENVFILE=env_file,
                USER=user,
                PIDFILE=pidfile,
            )
            launchers.append(f"/usr/local/bin/{svc}-run")

        front = None
        front_faults: list[str] = []
        if level == "hard" and rng.random() < 0.6:
            front_faults = rng.sample(SC_FRONT_FAULTS, rng.randint(1, 3))
            frole = rng.choice(SC_NAMES.front_roles)
            svc2 = f"{app}-{frole}"
            config2 = f"/etc/{svc2}/{svc2}.{ext}"
            route2 = rng.choice([f"/summary/{noun}", f"/api/{frole}", "/overview", "/v1/summary"])
            name2 = f"{rng.choice(SC_NAMES.words)}-{frole}"
            schema2 = {
                **served(svc2),
                "url": (sec["upstream"], key["url"], "str", None),
                "up_token_file": (sec["upstream"], key["up_token_file"], "str", None),
            }

            good2 = {
                "bind": "127.0.0.1",
                "port": port2,
                "name": name2,
                "url": f"http://127.0.0.1:{port}",
                "up_token_file": token_file,
            }
            bad2 = dict(good2)
            if "upstream-port" in front_faults:
                bad2["url"] = f"http://127.0.0.1:{wrong_port}"
            if "upstream-token" in front_faults:
                bad2["up_token_file"] = f"/etc/{svc2}/upstream.token"
            if "front-bind" in front_faults:
                bad2["bind"] = "0.0.0.0"
            if "front-port" in front_faults:
                bad2["port"] = wrong_port2
            files[f"environment/{svc2}/{svc2}.py"] = _sc_program(
                read(__file__, "frontend.py.tmpl"),
                fmt,
                schema2,
                SVC=svc2,
                SVCU=svc2.upper().replace("-", "_"),
                CONFIG=config2,
                NOUN=noun,
                HEALTH=health,
                ROUTE=route2,
                UP_ROUTE=route,
                UPSTREAM=svc,
            )
            files[f"environment/{svc2}/config"] = _sc_render(fmt, svc2, _sc_sections(schema2, bad2))
            files[f"environment/{svc2}/run"] = fill(
                read(__file__, "run.sh.tmpl"),
                SVC=svc2,
                USER=user,
            )
            launchers.append(f"/usr/local/bin/{svc2}-run")
            front = {
                "svc": svc2,
                "config": config2,
                "port": port2,
                "route": route2,
                "name": name2,
                "good_config": _sc_render(fmt, svc2, _sc_sections(schema2, good2)),
                "launcher": f"/usr/local/bin/{svc2}-run",
                "program": f"/opt/{svc2}/{svc2}.py",
            }

        where = {
            f"environment/{svc}/{svc}.py": f"/opt/{svc}/{svc}.py",
            f"environment/{svc}/run": f"/usr/local/bin/{svc}-run",
            f"environment/{svc}/data.txt": data,
            f"environment/{svc}/token": token_file,
        }
        if front:
            where[f"environment/{front['svc']}/{front['svc']}.py"] = front["program"]
            where[f"environment/{front['svc']}/run"] = front["launcher"]
        digests = {
            path: hashlib.sha256(files[rel].encode()).hexdigest()
            for rel, path in where.items()
            if rel in files
        }
        start = launchers[0] if launchers else f"python3 /opt/{svc}/{svc}.py"
        mutants = {
            "bind-all": _sc_render(fmt, svc, _sc_sections(schema, dict(good, bind="0.0.0.0"))),
            "token-inline": _sc_render(
                fmt, svc, _sc_sections(schema, dict(good, token_file=None, token=token))
            ),
            "maintenance-on": _sc_render(
                fmt, svc, _sc_sections(schema, dict(good, maintenance=True))
            ),
            "wrong-port": _sc_render(fmt, svc, _sc_sections(schema, dict(good, port=wrong_port))),
            "copied-secret": _sc_render(
                fmt, svc, _sc_sections(schema, dict(good, token_file=f"/var/tmp/.{svc}-token"))
            ),
        }
        if level == "easy":
            logdir_state = None
        elif "log-dir-missing" in system:
            logdir_state = "missing"
        elif "log-dir-owner" in system:
            logdir_state = "root"
        else:
            logdir_state = "ok"
        all_faults = sorted(
            [f.replace("_", "-") for f in faults] + system + [f for f in front_faults]
        )
        traps = []
        if level == "hard":
            tells = {
                "env-override": ("environment file", env_file, f"{svcu}_PORT", "overrides"),
                "env-config-path": ("environment file", env_file, f"{svcu}_CONFIG"),
                "token-perms": ("must be able to read", "readable by", "permissions", "chmod"),
                "log-dir-missing": ("create what is missing", "does not exist", "must own"),
                "log-dir-owner": ("must own", "owner", "chown"),
                "stale-pid": ("PID", "pid file", pidfile, "already running", "stale"),
            }
            traps = [Trap(SC_TRAP_NAMES[f], tells[f]) for f in system]
        context = {
            "app": app,
            "svc": svc,
            "svcu": svcu,
            "fmt": fmt,
            "config": config,
            "noun": noun,
            "health": health,
            "route": route,
            "port": port,
            "name": name,
            "data": data,
            "items": items,
            "token": token,
            "token_file": token_file,
            "user": user,
            "logdir": logdir,
            "log": log,
            "level": level,
            "env_file": env_file if level != "easy" else None,
            "good_env": good_env,
            "good_config": good_config,
            "front": front,
            "start": start,
            "launchers": launchers,
            "program": f"/opt/{svc}/{svc}.py",
            "mutants": mutants,
            "digests": digests,
            "faults": faults,
            "env_faults": env_faults,
            "system": system,
            "front_faults": front_faults,
            "pidfile": pidfile if level != "easy" else None,
            "logdir_state": logdir_state,
            "copy": f"/var/tmp/.{svc}-token",
        }
        # Harbor's separate verifier: the tests run in a fresh container. A hook snapshots in
        # the agent's container what the services use and what no file carries (owners, modes,
        # accounts, a service left listening, the PID file's process, copies of the secret);
        # the tests put that state back there and start the services as the agent left them.
        texts = [config] + ([front["config"]] if front else []) + ([env_file] if good_env else [])
        fixed = [token_file, data, context["program"], *launchers]
        if front:
            fixed.append(front["program"])
        if level != "easy":
            fixed += [logdir, log, pidfile]
        roots = [f"/etc/{svc}", "/srv", "/var/lib", "/var/log", "/var/tmp", "/tmp"]
        if front:
            roots.append(f"/etc/{front['svc']}")
        observed = {
            "fixed": list(dict.fromkeys(fixed)),
            "texts": texts,
            "roots": roots,
            "accounts": ["/etc/passwd", "/etc/group"],
            "pidfile": context["pidfile"],
            "ports": [port] + ([front["port"]] if front else []),
            "token_sha256": digests[token_file],
            "token_file": token_file,
        }
        context["snapshot"] = snapshot_path("service.json")
        context["replay_roots"] = roots + texts
        snapshot = python_hook(
            "service.json",
            read(__file__, "snapshot.py"),
            [json.dumps(observed, sort_keys=True)],
            timeout_sec=120.0,
        )
        mutations = {
            # The secret copied where the service can read it, the real file left root-only
            # (found by hand, see issue 17): the copy is a leak wherever it lies.
            "copied-secret": self.template("solution/solve.sh.j2").render(
                **context, slip="copied-secret"
            ),
        }
        if level == "hard":
            # Everything but the first thing around the service that stands in the way.
            mutations["one-fault-left"] = self.template("solution/solve.sh.j2").render(
                **context, slip=system[0]
            )
        return Draft(
            context=context,
            files=files,
            secrets=[token],
            forbidden_strings=[],
            outputs=[config] + ([front["config"]] if front else []),
            separate_verifier=True,
            artifacts=[context["snapshot"]],
            collect=[snapshot],
            tags=["http", "config", fmt] + (["privileges", "env-file"] if level != "easy" else []),
            faults=all_faults,
            traps=traps,
            mutations=mutations,
        )
