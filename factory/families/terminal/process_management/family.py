"""process-management: find and fix misbehaving processes (stuck, orphaned, respawning, holding
locks, ignoring signals) and leave the healthy ones alone. The daemons it starts are the programs
in ``shipped/``."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from factory.families.base import Draft, Family, Trap, register
from factory.families.slots import Slots, Word
from factory.families.terminal.shipped import fill, read
from factory.families.terminal.state_snapshot import python_hook, snapshot_path
from factory.families.terminal.words import APPS
from factory.vocabulary import Difficulty

PM_WORKER_ROLES = ["worker", "consumer", "dispatcher", "handler", "runner", "ingester"]
PM_SPIN_ROLES = ["indexer", "compactor", "reconciler", "scanner", "aggregator", "rollup"]
PM_LOCK_ROLES = ["sync", "replicator", "archiver", "uploader", "mirror", "snapshotter"]
PM_OWNER_ROLES = ["exporter", "notifier", "poller", "fetcher", "crawler", "reporter"]
PM_POOL_ROLES = [("pool", "shard"), ("manager", "partition"), ("master", "slice"), ("hive", "cell")]
PM_PROBE_ROLES = ["prober", "checker", "watcher", "pinger", "sentinel"]
PM_ZOMBIE_COMMS = ["probe-task", "check-run", "ping-child", "hc-job", "sweep-step", "scan-kid"]
PM_GUARDED_ROLES = ["mailer", "scheduler", "beaconer", "courier", "relay", "digester"]
PM_GUARD_NAMES = ["guard", "keeper", "respawn", "supervise", "babysit"]
PM_HUP_ROLES = ["cached", "routerd", "limiterd", "metricsd", "gatewayd", "quotad"]
PM_QUEUES = ["orders", "emails", "invoices", "thumbnails", "webhooks", "payments", "alerts"]
PM_INDEXES = ["customers", "products", "events", "catalog", "audit", "search", "tickets"]
PM_JOBS = ["nightly", "hourly", "catalog", "media", "ledger", "assets", "configs", "reports"]
PM_LOCKS = ["maintenance", "schema", "snapshot", "compaction", "migration", "rebuild", "vacuum"]
PM_CHANNELS = ["primary", "bulk", "digest", "urgent", "batch", "outbound"]
PM_USERS = ["svc", "appsvc", "runner", "daemon-app", "opsbot", "worker"]
PM_OLD_USERS = ["legacy", "olddeploy", "deploy1", "tmpops", "migrator", "contractor"]
PM_NEW_USERS = ["release", "deploy2", "current", "prod", "rollout", "stable"]
PM_GRAMMAR = ["spin", "lock", "owner", "orphan", "zombie", "guard", "hup"]
"""The faults a stack can have; ``hard`` composes four to six of them."""
PM_TRAPS = {
    "spin": Trap("ignores SIGTERM", ("SIGTERM", "SIGKILL", "kill -9", "really gone", "ignores")),
    "guard": Trap(
        "a supervisor restarts it", ("come back", "respawn", "supervisor", "restarts it")
    ),
    "lock": Trap("the holder's files are not listed by fuser", ("/proc/locks", "fuser")),
}
PM_HUP_SETTINGS = {
    "max_entries": ["1024", "2048", "4096", "8192", "16384"],
    "ttl_seconds": ["30", "60", "120", "300", "900"],
    "log_level": ["error", "warning", "info", "debug"],
    "eviction": ["lru", "lfu", "fifo", "random"],
    "flush_interval": ["5", "10", "15", "30", "60"],
}

OBSERVE_TIMEOUT_SEC = 150.0
"""The observing hook's limit: 40 s for the stack to boot, then up to 23 s of waits."""


def _pm_program(kind: str, **values: Any) -> str:
    common = fill(read(__file__, "common.py.tmpl"), UPDIR=values["UPDIR"]).rstrip("\n")
    return "#!/usr/bin/env python3\n" + fill(
        read(__file__, f"{kind}.py.tmpl"), COMMON=common, **values
    )


class ProcessSlots(Slots):
    """A small running stack of daemons: the application's name (its programs are called
    <app>-worker, <app>-indexer...) and the queues its workers take jobs from."""

    app: Word = Field(description="the application's name, one word", examples=["tidewatch"])
    queues: list[Word] = Field(
        min_length=3,
        max_length=6,
        description="one-word names of the job queues its workers serve",
        examples=[["berths", "manifests", "permits"]],
    )


@register
class ProcessManagement(Family):
    """Processes started by an ENTRYPOINT script; the agent stops the misbehaving ones (found by
    CPU use, open lock file, owner, parent, zombie children; harder: a supervisor loop that
    respawns its child, a daemon that must be reloaded with SIGHUP) and reports what it
    stopped, while every other process keeps running."""

    name = "process-management"
    title = "Find and stop the misbehaving processes of a running stack, leave the rest alone"
    category = "process-management"
    slots = ProcessSlots

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        app = self.filled("app", None) or rng.choice(APPS)
        appu = app.upper()
        base = f"/opt/{app}"
        bindir = f"{base}/bin"
        state_dir = f"/var/lib/{app}"
        updir = f"{state_dir}/up"
        user = rng.choice(PM_USERS)
        level = difficulty.value
        if level == "easy":
            # One of lock/zombie always: their obvious-but-wrong fix is what "naive" probes.
            first = rng.choice(["lock", "zombie"])
            kinds = [
                first,
                rng.choice([k for k in ("lock", "spin", "owner", "zombie") if k != first]),
            ]
        elif level == "medium":
            kinds = rng.sample(["spin", "lock", "owner", "orphan", "zombie"], 3)
        else:
            kinds = rng.sample(PM_GRAMMAR, rng.randint(4, 6))
        rng.shuffle(kinds)
        stubborn = level != "easy"
        # Hard: the lock holder runs as root or as the service user, whose open files root
        # cannot list here: two ways to find it (fuser, or /proc/locks).
        lock_as_root = level == "easy" or (level == "hard" and rng.random() < 0.5)

        programs: dict[str, str] = {}  # program name -> source
        launches: list[dict[str, Any]] = []  # entrypoint launches
        keepers: list[dict[str, Any]] = []  # processes that must stay alive
        targets: list[str] = []  # normalised command lines that must be gone
        tasks: list[dict[str, Any]] = []  # instruction items, in order
        users = {user}
        hup_tag = ""
        extra_files: dict[str, str] = {}
        ctx: dict[str, Any] = {}
        tag_count = 0

        def prog(role: str, kind: str, **values: Any) -> str:
            pname = f"{app}-{role}"
            programs[pname] = _pm_program(
                kind, APP=app, APPU=appu, ROLE=role, UPDIR=updir, **values
            )
            return f"{bindir}/{pname}"

        def launch(argv: list[str], run_as: str, env: dict[str, str] | None = None, **kw: Any):
            nonlocal tag_count
            tag_count += 1
            launches.append(
                {
                    "tag": f"p{tag_count:02d}",
                    "user": run_as,
                    "argv": argv,
                    "env": env or {},
                    "orphan": kw.get("orphan", False),
                }
            )

        def norm(argv: list[str]) -> str:
            return " ".join(argv[1:] if argv[0] in ("python3", "bash") else argv)

        # Workers: always there, always kept.
        wrole = rng.choice(PM_WORKER_ROLES)
        wpath = prog(wrole, "worker")
        for queue in rng.sample(self.filled("queues", PM_QUEUES), rng.randint(2, 3)):
            argv = ["python3", wpath, "--queue", queue]
            launch(argv, user)
            keepers.append({"cmd": norm(argv), "user": user})
        ctx["worker"] = f"{app}-{wrole}"

        for kind in kinds:
            if kind == "spin":
                role = rng.choice(PM_SPIN_ROLES)
                path = prog(role, "spin")
                names = rng.sample(PM_INDEXES, rng.randint(3, 4))
                bad = rng.choice(names)
                for name in names:
                    argv = ["python3", path, "--index", name]
                    env = {}
                    if name == bad:
                        env[f"{appu}_REBUILD"] = "continuous"
                        if stubborn:
                            env[f"{appu}_GRACEFUL"] = "0"
                        targets.append(norm(argv))
                    else:
                        keepers.append({"cmd": norm(argv), "user": user})
                    launch(argv, user, env)
                tasks.append({"kind": kind, "prog": f"{app}-{role}", "path": path})
                ctx["spin"] = {"path": path, "bad": norm(["python3", path, "--index", bad])}
            elif kind == "lock":
                role = rng.choice(PM_LOCK_ROLES)
                conf = f"/etc/{app}/{role}.ini"
                path = prog(role, "lock", CONF=conf)
                jobs = rng.sample(PM_JOBS, rng.randint(3, 4))
                locks = rng.sample(PM_LOCKS, len(jobs))
                holder = rng.randrange(len(jobs))
                # Easy: run by root, so fuser finds the holder; otherwise by the service user,
                # whose open files root cannot list here (no CAP_SYS_PTRACE): /proc/locks can.
                lock_user = "root" if lock_as_root else user
                lockdir = f"/var/lock/{app}"
                lines = [f"# {app} {role} jobs"]
                for i, (job, lk) in enumerate(zip(jobs, locks, strict=True)):
                    lines += ["", f"[{job}]", f"lock = {lockdir}/{lk}.lock"]
                    argv = ["python3", path, "--job", job]
                    launch(argv, lock_user)
                    if i == holder:
                        targets.append(norm(argv))
                    else:
                        keepers.append({"cmd": norm(argv), "user": lock_user})
                extra_files[f"environment/etc/{role}.ini"] = "\n".join(lines) + "\n"
                lockfile = f"{lockdir}/{locks[holder]}.lock"
                tasks.append({"kind": kind, "lock": lockfile})
                ctx["lock"] = {
                    "file": lockfile,
                    "dir": lockdir,
                    "files": [f"{lockdir}/{lk}.lock" for lk in locks],
                    "conf": conf,
                    "role": role,
                    "user": lock_user,
                }
            elif kind == "owner":
                role = rng.choice(PM_OWNER_ROLES)
                path = prog(role, "owner")
                old, new = rng.choice(PM_OLD_USERS), rng.choice(PM_NEW_USERS)
                users |= {old, new}
                slots = rng.sample(range(1, 10), rng.randint(4, 5))
                n_old = rng.randint(2, len(slots) - 2)
                rng.shuffle(slots)
                for i, slot in enumerate(slots):
                    argv = ["python3", path, "--slot", str(slot)]
                    if i < n_old:
                        launch(argv, old)
                        targets.append(norm(argv))
                    else:
                        launch(argv, new)
                        keepers.append({"cmd": norm(argv), "user": new})
                tasks.append({"kind": kind, "prog": f"{app}-{role}", "old": old, "new": new})
                ctx["owner"] = {"path": path, "old": old}
            elif kind == "orphan":
                parent_role, child_role = rng.choice(PM_POOL_ROLES)
                child_path = f"{bindir}/{app}-{child_role}"
                ppath = prog(parent_role, "pool", CHILD=child_role, CHILDPATH=child_path)
                prog(child_role, "shard", PARENT=f"{app}-{parent_role}")
                numbers = rng.sample(range(1, 13), rng.randint(5, 6))
                n_orphans = rng.randint(2, 3)
                orphans, owned = numbers[:n_orphans], sorted(numbers[n_orphans:])
                pool_argv = ["python3", ppath, "--workers", str(len(owned))]
                launch(pool_argv, user, {f"{appu}_SHARDS": " ".join(map(str, owned))})
                tag_count += len(owned)  # the pool's children report ready too
                keepers.append({"cmd": norm(pool_argv), "user": user})
                for n in owned:
                    argv = ["python3", child_path, f"--{child_role}", str(n)]
                    keepers.append({"cmd": norm(argv), "user": user, "parent": norm(pool_argv)})
                for n in orphans:
                    argv = ["python3", child_path, f"--{child_role}", str(n)]
                    launch(argv, user, orphan=True)
                    targets.append(norm(argv))
                tasks.append(
                    {
                        "kind": kind,
                        "child": f"{app}-{child_role}",
                        "parent": f"{app}-{parent_role}",
                    }
                )
                ctx["orphan"] = {"path": child_path}
            elif kind == "zombie":
                role = rng.choice(PM_PROBE_ROLES)
                zcomm = rng.choice(PM_ZOMBIE_COMMS)
                path = prog(role, "probe", ZCOMM=zcomm)
                names = rng.sample(["db", "cache", "queue", "api", "dns", "smtp", "disk"], 2)
                for i, target in enumerate(names):
                    argv = ["python3", path, "--target", target]
                    env = {f"{appu}_FANOUT": str(rng.randint(3, 6))}
                    if i == 0:
                        targets.append(norm(argv))
                    else:
                        env[f"{appu}_REAP"] = "1"
                        keepers.append({"cmd": norm(argv), "user": user})
                    launch(argv, user, env)
                tasks.append({"kind": kind, "comm": zcomm})
                ctx["zombie"] = {"comm": zcomm, "path": path}
            elif kind == "guard":
                role = rng.choice(PM_GUARDED_ROLES)
                gname = f"{app}-{role}-{rng.choice(PM_GUARD_NAMES)}"
                path = prog(role, "guarded")
                channel = rng.choice(PM_CHANNELS)
                gpath = f"{bindir}/{gname}"
                programs[gname] = fill(
                    read(__file__, "guard.sh.tmpl"),
                    APP=app,
                    ROLE=gname.removeprefix(f"{app}-"),
                    CHILD=f"{app}-{role}",
                    CHILDPATH=path,
                    CHANNEL=channel,
                )
                launch(["bash", gpath], user)
                child = norm(["python3", path, "--channel", channel])
                targets += [gpath, child]
                tasks.append({"kind": kind, "prog": f"{app}-{role}"})
                ctx["guard"] = {"path": gpath, "child": path}
            elif kind == "hup":
                role = rng.choice(PM_HUP_ROLES)
                statefile = f"{state_dir}/{role}.state"
                path = prog(role, "hup", STATE=statefile)
                conf = f"/etc/{app}/{role}.conf"
                keys = rng.sample(sorted(PM_HUP_SETTINGS), 4)
                values = {k: rng.choice(PM_HUP_SETTINGS[k]) for k in keys}
                key = keys[rng.randrange(len(keys))]
                new_value = rng.choice([v for v in PM_HUP_SETTINGS[key] if v != values[key]])
                lines = [f"# {app} {role} settings"] + [f"{k} = {v}" for k, v in values.items()]
                extra_files[f"environment/etc/{role}.conf"] = "\n".join(lines) + "\n"
                argv = ["python3", path, "--config", conf]
                launch(argv, user)
                keepers.append({"cmd": norm(argv), "user": user})
                hup_tag = launches[-1]["tag"]
                tasks.append(
                    {"kind": kind, "prog": f"{app}-{role}", "path": path, "conf": conf}
                    | {"key": key, "value": new_value}
                )
                ctx["hup"] = {
                    "cmd": norm(argv),
                    "conf": conf,
                    "key": key,
                    "value": new_value,
                    "old": values[key],
                    "state": statefile,
                    "path": path,
                    "tag": hup_tag,
                }

        faults = sorted(kinds)
        if "lock" in kinds:
            faults[faults.index("lock")] = "lock-root" if lock_as_root else "lock-user"
        traps = [PM_TRAPS[k] for k in sorted(kinds) if k in PM_TRAPS and stubborn]
        rng.shuffle(launches)
        report = f"/root/{rng.choice(['stopped', 'cleanup', 'killed', 'incident'])}-{app}.txt"
        files = {f"environment/bin/{name}": src for name, src in programs.items()}
        files.update(extra_files)
        context = {
            "app": app,
            "appu": appu,
            "base": base,
            "bindir": bindir,
            "state_dir": state_dir,
            "updir": updir,
            "user": user,
            "users": sorted(users),
            "programs": sorted(programs),
            "launches": launches,
            "ready_count": tag_count,
            "keepers": keepers,
            "targets": targets,
            "tasks": tasks,
            "kinds": kinds,
            "report": report,
            "stubborn": stubborn,
            "level": level,
            "etc_files": sorted(p.removeprefix("environment/etc/") for p in extra_files),
            **ctx,
        }
        context["snapshot"] = snapshot_path("processes.json")
        # The separate verifier cannot see the agent's processes: a hook observes them in the
        # agent's container (shipped/observe.py: the waits and the SIGUSR1 question the checks
        # made there) and the tests judge what it saw, and the report, in a fresh container.
        observed = {
            "state_dir": state_dir,
            "targets": targets,
            "keepers": keepers,
            **{k: ctx.get(k) for k in ("lock", "zombie", "guard", "hup")},
        }
        observe = python_hook(
            "processes.json",
            read(__file__, "observe.py"),
            [json.dumps(observed, sort_keys=True)],
            timeout_sec=OBSERVE_TIMEOUT_SEC,
        )
        mutations = {}
        if "hup" in kinds:
            # The daemon's state file is the agent's to write: rewriting it is no reload.
            mutations["forged-state"] = self.template("solution/solve.sh.j2").render(
                **context, forge_state=True
            )
        return Draft(
            context=context,
            files=files,
            secrets=[t for t in targets if " " in t],
            outputs=[report],
            separate_verifier=True,
            artifacts=[context["snapshot"]],
            collect=[observe],
            tags=["processes", "signals", *kinds],
            faults=faults,
            traps=traps if level == "hard" else [],
            mutations=mutations,
        )
