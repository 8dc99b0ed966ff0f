"""Systems administration families: processes, cron schedules, users and groups, services."""

from __future__ import annotations

import hashlib
import random
import re
import shlex
import textwrap
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.vocabulary import Difficulty

APPS = [
    "ledger",
    "tidepool",
    "quarry",
    "lantern",
    "orchard",
    "beacon",
    "meridian",
    "cobalt",
    "juniper",
    "pebble",
    "foundry",
    "kestrel",
    "marlin",
    "sextant",
    "halyard",
    "bramble",
    "cinder",
    "drover",
    "ember",
    "garnet",
    "heron",
    "jasper",
    "lumen",
    "nimbus",
]


def _fill(template: str, **values: Any) -> str:
    """Replace @@KEY@@ markers (dedented template) with values."""
    out = textwrap.dedent(template).lstrip("\n")
    for key, value in values.items():
        out = out.replace(f"@@{key}@@", str(value))
    if "@@" in out:
        raise ValueError(f"unfilled marker in template: {out[out.index('@@') :][:40]}")
    return out


# ---------------------------------------------------------------------------------------------
# process-management
# ---------------------------------------------------------------------------------------------

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
PM_HUP_SETTINGS = {
    "max_entries": ["1024", "2048", "4096", "8192", "16384"],
    "ttl_seconds": ["30", "60", "120", "300", "900"],
    "log_level": ["error", "warning", "info", "debug"],
    "eviction": ["lru", "lfu", "fifo", "random"],
    "flush_interval": ["5", "10", "15", "30", "60"],
}

PM_COMMON = """
    import os
    import sys
    import time
    from pathlib import Path


    def ready():
        tag = os.environ.get("BOOT_TAG")
        if tag:
            Path("@@UPDIR@@", tag).touch()


    def idle():
        while True:
            time.sleep(30)


    def arg(name, default=None):
        if name in sys.argv[1:-1]:
            return sys.argv[sys.argv.index(name) + 1]
        return default
"""

PM_PROGRAMS = {
    "worker": '''
        """@@APP@@ @@ROLE@@: consumes jobs from one queue (--queue NAME)."""
        @@COMMON@@

        queue = arg("--queue")
        ready()
        idle()
    ''',
    "spin": '''
        """@@APP@@ @@ROLE@@: keeps one index (--index NAME) up to date."""
        import signal
        @@COMMON@@

        index = arg("--index")
        if os.environ.get("@@APPU@@_REBUILD") == "continuous":
            if os.environ.get("@@APPU@@_GRACEFUL") == "0":
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
            ready()
            while True:
                total = 0
                for i in range(12000):
                    total += i * i
                time.sleep(0.004)
        ready()
        idle()
    ''',
    "lock": '''
        """@@APP@@ @@ROLE@@: runs one synchronisation job (--job NAME) and holds the job's
        lock file while it runs. Jobs and their lock files are listed in @@CONF@@."""
        import configparser
        import fcntl
        @@COMMON@@

        job = arg("--job")
        config = configparser.ConfigParser()
        config.read("@@CONF@@")
        handle = open(config.get(job, "lock"), "a")
        fcntl.flock(handle, fcntl.LOCK_EX)
        ready()
        idle()
    ''',
    "owner": '''
        """@@APP@@ @@ROLE@@: publishes data for one slot (--slot N)."""
        @@COMMON@@

        slot = arg("--slot")
        ready()
        idle()
    ''',
    "pool": '''
        """@@APP@@ @@ROLE@@: starts and owns the @@CHILD@@ processes."""
        import subprocess
        @@COMMON@@

        children = []
        for shard in os.environ.get("@@APPU@@_SHARDS", "").split():
            env = dict(os.environ, BOOT_TAG=os.environ.get("BOOT_TAG", "") + "-" + shard)
            children.append(
                subprocess.Popen(["python3", "@@CHILDPATH@@", "--@@CHILD@@", shard], env=env)
            )
        ready()
        idle()
    ''',
    "shard": '''
        """@@APP@@ @@ROLE@@: serves one @@ROLE@@ (--@@ROLE@@ N); started by @@PARENT@@."""
        @@COMMON@@

        number = arg("--@@ROLE@@")
        ready()
        idle()
    ''',
    "probe": '''
        """@@APP@@ @@ROLE@@: runs health probes (--target NAME) in short-lived children."""
        @@COMMON@@

        target = arg("--target")
        for _ in range(int(os.environ.get("@@APPU@@_FANOUT", "3"))):
            pid = os.fork()
            if pid == 0:
                try:
                    Path("/proc/self/comm").write_text("@@ZCOMM@@")
                except OSError:
                    pass
                os._exit(0)
            if os.environ.get("@@APPU@@_REAP") == "1":
                os.waitpid(pid, 0)
        time.sleep(0.3)
        ready()
        idle()
    ''',
    "guarded": '''
        """@@APP@@ @@ROLE@@: delivers messages of one channel (--channel NAME)."""
        @@COMMON@@

        channel = arg("--channel")
        ready()
        idle()
    ''',
    "hup": '''
        """@@APP@@ @@ROLE@@: in-memory cache daemon.

        Usage: @@ROLE@@ --config FILE

        The configuration file holds `key = value` lines (`#` starts a comment). The daemon
        writes its current state (pid, number of reloads, settings in effect) as JSON to
        @@STATE@@.

        Signals: SIGHUP re-reads the configuration file and applies it in place (the process
        keeps running with the same PID); SIGTERM stops the daemon.
        """
        import json
        import signal
        @@COMMON@@

        config_path = arg("--config")


        def load():
            settings = {}
            for line in Path(config_path).read_text().splitlines():
                line = line.split("#", 1)[0].strip()
                if "=" in line:
                    key, value = line.split("=", 1)
                    settings[key.strip()] = value.strip()
            return settings


        state = {"pid": os.getpid(), "reloads": 0, "settings": load()}


        def write():
            tmp = Path("@@STATE@@.tmp")
            tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\\n")
            os.replace(tmp, "@@STATE@@")


        def reload(signum, frame):
            state["settings"] = load()
            state["reloads"] += 1
            write()


        signal.signal(signal.SIGHUP, reload)
        write()
        ready()
        idle()
    ''',
}

PM_GUARD = """
    #!/bin/bash
    # @@APP@@ @@ROLE@@: keeps @@CHILD@@ running; restarts it one second after it exits.
    while true; do
        python3 @@CHILDPATH@@ --channel @@CHANNEL@@
        sleep 1
    done
"""


def _pm_program(kind: str, **values: Any) -> str:
    common = _fill(PM_COMMON, UPDIR=values["UPDIR"]).rstrip("\n")
    return "#!/usr/bin/env python3\n" + _fill(PM_PROGRAMS[kind], COMMON=common, **values)


@register
class ProcessManagement(Family):
    """Processes started by an ENTRYPOINT script; the agent stops the misbehaving ones (found by
    CPU use, open lock file, owner, parent, zombie children; harder: a supervisor loop that
    respawns its child, a daemon that must be reloaded with SIGHUP) and reports what it
    stopped, while every other process keeps running."""

    name = "process-management"
    title = "Find and stop the misbehaving processes of a running stack, leave the rest alone"
    category = "process-management"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        app = rng.choice(APPS)
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
            kinds = ["guard", "hup", *rng.sample(["spin", "lock", "owner", "orphan", "zombie"], 2)]
        rng.shuffle(kinds)
        stubborn = level != "easy"

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
        for queue in rng.sample(PM_QUEUES, rng.randint(2, 3)):
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
                lock_user = "root" if level == "easy" else user
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
                programs[gname] = _fill(
                    PM_GUARD,
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

        rng.shuffle(launches)
        report = f"/root/{rng.choice(['stopped', 'cleanup', 'killed', 'incident'])}-{app}.txt"
        files = {f"environment/bin/{name}": src for name, src in programs.items()}
        files.update(extra_files)
        return Draft(
            context={
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
                "etc_files": sorted(p.removeprefix("environment/etc/") for p in extra_files),
                **ctx,
            },
            files=files,
            secrets=[t for t in targets if " " in t],
            outputs=[report],
            tags=["processes", "signals", *kinds],
        )


# ---------------------------------------------------------------------------------------------
# cron-schedule
# ---------------------------------------------------------------------------------------------

CRON_LIB = r'''
import datetime
import re

CRON_MONTHS = {n: i for i, n in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}
CRON_DAYS = {n: i for i, n in enumerate("sun mon tue wed thu fri sat".split())}
CRON_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
CRON_START = datetime.date(2027, 1, 1)
CRON_DAYS_SPAN = 731  # 2027 and the leap year 2028


def cron_field(text, lo, hi, names=None):
    """The set of values a cron field matches (Vixie cron / cronie syntax)."""
    values = set()

    def number(token):
        token = token.lower()
        if names and token in names:
            return names[token]
        if not token.isdigit():
            raise ValueError(f"bad value {token!r}")
        return int(token)

    for part in text.split(","):
        step = 1
        if "/" in part:
            part, step_text = part.split("/", 1)
            if not step_text.isdigit() or int(step_text) < 1:
                raise ValueError(f"bad step in {text!r}")
            step = int(step_text)
        if part == "*":
            start, end = lo, hi
        elif "-" in part:
            a, b = part.split("-", 1)
            start, end = number(a), number(b)
        else:
            start = number(part)
            end = hi if step > 1 else start
        if not (lo <= start <= hi and lo <= end <= hi) or start > end:
            raise ValueError(f"out of range: {text!r}")
        values.update(range(start, end + 1, step))
    return values


def cron_fires(expr):
    """Minutes (as integers from CRON_START) at which a 5-field expression fires."""
    expr = CRON_MACROS.get(expr.strip(), expr)
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError(f"need 5 fields: {expr!r}")
    minutes = cron_field(fields[0], 0, 59)
    hours = cron_field(fields[1], 0, 23)
    doms = cron_field(fields[2], 1, 31)
    months = cron_field(fields[3], 1, 12, CRON_MONTHS)
    dows = {d % 7 for d in cron_field(fields[4], 0, 7, CRON_DAYS)}
    dom_star, dow_star = fields[2].startswith("*"), fields[4].startswith("*")
    times = sorted(h * 60 + m for h in hours for m in minutes)
    fires = set()
    for offset in range(CRON_DAYS_SPAN):
        day = CRON_START + datetime.timedelta(days=offset)
        if day.month not in months:
            continue
        dom_ok, dow_ok = day.day in doms, (day.isoweekday() % 7) in dows
        if (dom_ok and dow_ok) if (dom_star or dow_star) else (dom_ok or dow_ok):
            base = offset * 1440
            fires.update(base + t for t in times)
    return fires


def cron_show(minute):
    moment = datetime.datetime.combine(CRON_START, datetime.time()) + datetime.timedelta(minutes=minute)
    return moment.strftime("%a %Y-%m-%d %H:%M")


def cron_command(text):
    """Cron's treatment of '%': the command is the text before the first unescaped '%'
    (backslash-percent stands for a literal '%'); what follows becomes standard input."""
    out, i = "", 0
    while i < len(text):
        if text[i] == "\\" and text[i + 1 : i + 2] == "%":
            out += "%"
            i += 2
            continue
        if text[i] == "%":
            return out, text[i + 1 :].replace("%", "\n") + "\n"
        out += text[i]
        i += 1
    return out, ""


ENV_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def parse_crontab(text, system):
    """Entries of a crontab (system=True: /etc/cron.d format with a user field). Each entry
    carries the environment set by the lines above it. A last line without a newline is
    ignored, as cron does."""
    lines = text.split("\n")
    lines = lines[:-1]  # the text after the last newline (empty when the file ends properly)
    env, entries, errors = {}, [], []
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = ENV_LINE.match(line)
        if match and not stripped.startswith("@"):
            value = match.group(2)
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            env[match.group(1)] = value
            continue
        if stripped.startswith("@"):
            parts = stripped.split(None, 2 if system else 1)
            schedule, rest = parts[0], parts[1:]
            if schedule not in CRON_MACROS:
                errors.append(f"line {number}: unsupported {schedule}")
                continue
        else:
            parts = stripped.split(None, 6 if system else 5)
            schedule, rest = " ".join(parts[:5]), parts[5:]
        if len(rest) != (2 if system else 1):
            errors.append(f"line {number}: incomplete entry")
            continue
        try:
            fires = cron_fires(schedule)
        except ValueError as exc:
            errors.append(f"line {number}: {exc}")
            continue
        entries.append(
            {
                "line": number,
                "schedule": schedule,
                "user": rest[0] if system else None,
                "command": rest[-1],
                "env": dict(env),
                "fires": fires,
            }
        )
    return entries, errors
'''

_cron: dict[str, Any] = {}
exec(compile(CRON_LIB, "<cron-lib>", "exec"), _cron)  # noqa: S102 - our own source, see above

CRON_PROGRAMS = [
    "rotate-logs",
    "backup-db",
    "sync-assets",
    "send-digest",
    "purge-cache",
    "refresh-index",
    "export-metrics",
    "compact-store",
    "check-certs",
    "prune-sessions",
    "build-sitemap",
    "reconcile-payments",
    "snapshot-volumes",
    "warm-cache",
    "mail-reports",
    "vacuum-db",
    "fetch-rates",
    "scan-uploads",
]
CRON_ARGS = [
    ["--keep", "7"],
    ["--keep", "14"],
    ["--target", "archive"],
    ["--since", "24h"],
    ["--batch", "500"],
    ["--quiet"],
    ["--region", "eu-west"],
    ["--full"],
    ["--max-age", "30d"],
    ["--dry-run=false"],
    [],
]
CRON_DATE_ARGS = [("--stamp", "%F", "DATE_F"), ("--label", "%Y%m%d", "DATE_YMD")]
CRON_USERS = ["reporter", "archiver", "etl", "batch", "mailer"]
DAYNAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
MONTHNAMES = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
CRON_EASY = ["every_n", "daily", "weekdays", "weekly", "hourly", "monthly", "weekend"]
CRON_MEDIUM = CRON_EASY + [
    "business",
    "every_h",
    "quarterly",
    "yearly",
    "twice_daily",
    "night",
    "mwf",
    "twice_monthly",
]
CRON_HARD = CRON_MEDIUM + ["dom_or_dow"]
# Hard: ways an existing line is wrong, and the schedule kinds each applies to.
CRON_BREAKS = {
    "swap_hm": ["daily_small"],
    "star_minute": ["daily", "weekdays"],
    "dom_month": ["quarterly"],
    "dow_shift": ["weekdays", "business"],
    "no_user": ["daily", "weekly", "monthly", "every_h"],
    "percent": ["daily", "weekdays", "weekly"],
}


def _hhmm(h: int, m: int) -> str:
    return f"{h:02d}:{m:02d}"


def _cron_schedule(kind: str, rng: random.Random) -> tuple[str, list[str]]:
    """(description in words, cron expressions whose union is the schedule)."""
    h, m = rng.randint(0, 23), rng.choice([0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 7, 13])
    at = _hhmm(h, m)
    if kind == "every_n":
        n = rng.choice([5, 10, 15, 20, 30])
        return f"every {n} minutes, around the clock (at :00, :{n:02d}, ...)", [f"*/{n} * * * *"]
    if kind == "business":
        n, h1, h2 = rng.choice([10, 15, 20, 30]), rng.choice([7, 8, 9]), rng.choice([16, 17, 18])
        return (
            f"every {n} minutes from {h1:02d}:00 through {h2:02d}:{60 - n:02d}, Monday to Friday",
            [f"*/{n} {h1}-{h2} * * 1-5"],
        )
    if kind in ("daily", "daily_small"):
        if kind == "daily_small":  # minute < 24 and != hour, so swapping them stays valid
            m = rng.randint(1, 23)
            h = rng.choice([x for x in range(24) if x != m])
            at = _hhmm(h, m)
        return f"every day at {at}", [f"{m} {h} * * *"]
    if kind == "weekdays":
        return f"at {at} every Monday to Friday", [f"{m} {h} * * 1-5"]
    if kind == "weekly":
        d = rng.randrange(7)
        return f"every {DAYNAMES[d]} at {at}", [f"{m} {h} * * {d}"]
    if kind == "weekend":
        return f"at {at} on Saturdays and Sundays", [f"{m} {h} * * 6,0"]
    if kind == "hourly":
        m = rng.randint(1, 59)
        return f"once an hour, at {m} minutes past every hour", [f"{m} * * * *"]
    if kind == "every_h":
        n = rng.choice([2, 3, 4, 6, 8, 12])
        return (
            f"every {n} hours at {m} minutes past the hour, starting at 00:{m:02d} "
            f"(00:{m:02d}, {n:02d}:{m:02d}, ...)",
            [f"{m} */{n} * * *"],
        )
    if kind == "monthly":
        d = rng.randint(2, 28)
        return f"at {at} on day {d} of every month", [f"{m} {h} {d} * *"]
    if kind == "twice_monthly":
        return f"at {at} on the 1st and on the 15th of every month", [f"{m} {h} 1,15 * *"]
    if kind == "quarterly":
        return (
            f"at {at} on the first day of each calendar quarter (January, April, July, October)",
            [f"{m} {h} 1 1,4,7,10 *"],
        )
    if kind == "yearly":
        mon, d = rng.randint(1, 12), rng.randint(1, 28)
        return f"once a year, at {at} on {MONTHNAMES[mon - 1]} {d}", [f"{m} {h} {d} {mon} *"]
    if kind == "twice_daily":
        h2, m2 = (h + rng.randint(6, 12)) % 24, rng.choice([x for x in range(0, 60, 5) if x != m])
        return f"every day at {at} and again at {_hhmm(h2, m2)}", [
            f"{m} {h} * * *",
            f"{m2} {h2} * * *",
        ]
    if kind == "night":
        n = rng.choice([10, 15, 20, 30])
        return f"every {n} minutes from 22:00 through 05:{60 - n:02d}, every night", [
            f"*/{n} 22-23,0-5 * * *"
        ]
    if kind == "mwf":
        return f"at {at} on Mondays, Wednesdays and Fridays", [f"{m} {h} * * 1,3,5"]
    if kind == "dom_or_dow":
        d = rng.randrange(1, 7)
        return (
            f"at {at} on the 1st of every month, and also at {at} every {DAYNAMES[d]} "
            "(whatever the date)",
            [f"{m} {h} 1 * {d}"],
        )
    raise ValueError(kind)


def _cron_break(kind: str, expr: str) -> str:
    f = expr.split()
    if kind == "swap_hm":
        f[0], f[1] = f[1], f[0]
    elif kind == "star_minute":
        f[0] = "*"
    elif kind == "dom_month":
        f[2], f[3] = f[3], f[2]
    elif kind == "dow_shift":
        f[4] = "0-4"
    return " ".join(f)


def _cron_slip(expr: str) -> str:
    """A plausible wrong version of an expression (for the wrong-schedule mutation)."""
    f = expr.split()
    for candidate in (
        ["*", *f[1:]] if f[0] != "*" and not f[0].startswith("*/") else None,
        [f[0], "*", *f[2:]] if f[1] not in ("*",) else None,
        [f[0], f[1], f[2], f[3], "1-5" if f[4] != "1-5" else "0-4"],
    ):
        if candidate and _cron["cron_fires"](" ".join(candidate)) != _cron["cron_fires"](expr):
            return " ".join(candidate)
    raise ValueError(expr)


def _crontab_text(
    header: list[str],
    env: list[tuple[str, str]],
    lines: list[tuple[str, str | None, str]],
    *,
    env_first: bool = True,
    newline: bool = True,
) -> str:
    """A crontab from env assignments and (schedule, user or None, command) entries."""

    def env_line(k: str, v: str) -> str:
        return f'{k}="{v}"' if v == "" or " " in v else f"{k}={v}"

    env_lines = [env_line(k, v) for k, v in env]
    entry_lines = [" ".join(x for x in (s, u, c) if x) for s, u, c in lines]
    body = header + (env_lines + [""] + entry_lines if env_first else entry_lines + env_lines)
    return "\n".join(body) + ("\n" if newline else "")


@register
class CronSchedule(Family):
    """Write crontab entries (/etc/cron.d and a user's crontab) that run given commands on
    schedules described in words, with environment lines, the user field and log redirects;
    harder: repair an existing /etc/cron.d file (swapped fields, DOW/DOM mistakes, missing user
    field, unescaped %, an environment line in the wrong place, a missing final newline) while
    keeping its other entries. Tests parse the files like cron and compare the schedules by
    expanding their fire times over two years; they also run each command as its user."""

    name = "cron-schedule"
    title = "Write or repair crontab entries from schedules described in words"
    category = "scheduling"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        app = rng.choice(APPS)
        appu = app.upper().replace("-", "_")
        level = difficulty.value
        bindir = f"/opt/{app}/bin"
        logdir = f"/var/log/{app}"
        cron_file = f"/etc/cron.d/{app}{rng.choice(['', '-jobs', '-maintenance', '-batch'])}"
        var = f"{appu}_{rng.choice(['ENV', 'STAGE', 'PROFILE', 'TIER'])}"
        var_value = rng.choice(["production", "staging", "qa", "canary", "preprod"])
        mailto = rng.choice(["", f"ops@{app}.example.com", f"cron-alerts@{app}.example.org"])
        env: list[tuple[str, str]] = [("MAILTO", mailto), (var, var_value)]
        if level != "easy":
            env.insert(0, ("PATH", f"/usr/local/bin:/usr/bin:/bin:{bindir}"))
        spool_user = rng.choice(CRON_USERS) if level != "easy" else None
        spool_file = f"/var/spool/cron/crontabs/{spool_user}" if spool_user else None
        sys_users = ["root", app]
        names = iter(rng.sample(CRON_PROGRAMS, 10))
        used_kinds: set[str] = set()

        def job(kind: str, *, user: str, file: str, date: bool = False) -> dict[str, Any]:
            name = next(names)
            desc, exprs = _cron_schedule(kind, rng)
            used_kinds.add(kind)
            args = list(rng.choice(CRON_ARGS))
            date_arg = None
            if date:
                flag, fmt, placeholder = rng.choice(CRON_DATE_ARGS)
                args += [flag, f"@{placeholder}@"]
                date_arg = {"flag": flag, "fmt": fmt}
            return {
                "name": name,
                "path": f"{bindir}/{name}",
                "args": args,
                "date": date_arg,
                "desc": desc,
                "exprs": exprs,
                "user": user,
                "file": file,
                "log": f"{logdir}/{name}.log",
                "broken": None,
            }

        kinds_pool = {"easy": CRON_EASY, "medium": CRON_MEDIUM, "hard": CRON_HARD}[level]
        jobs: list[dict[str, Any]] = []
        existing: list[dict[str, Any]] = []  # hard: jobs already in the file
        foreign: list[dict[str, Any]] = []  # hard: other entries that must stay
        if level == "easy":
            for kind in rng.sample(kinds_pool, rng.randint(2, 3)):
                jobs.append(job(kind, user=rng.choice(sys_users), file=cron_file))
        elif level == "medium":
            kinds = rng.sample(kinds_pool, 4)
            if "twice_daily" not in kinds and rng.random() < 0.5:
                kinds[0] = "twice_daily"
            date_at = rng.randrange(4)
            for i, kind in enumerate(kinds):
                file, user = (
                    (spool_file, spool_user) if i == 3 else (cron_file, rng.choice(sys_users))
                )
                jobs.append(job(kind, user=user, file=file, date=i == date_at))
        else:
            breaks = rng.sample(sorted(CRON_BREAKS), 3)
            for brk in breaks:
                j = job(
                    rng.choice(CRON_BREAKS[brk]),
                    user=rng.choice(sys_users),
                    file=cron_file,
                    date=brk == "percent",
                )
                j["broken"] = brk
                existing.append(j)
            for kind in rng.sample([k for k in kinds_pool if k not in used_kinds], 2):
                existing.append(job(kind, user=rng.choice(sys_users), file=cron_file))
            rng.shuffle(existing)
            jobs += existing
            kind = rng.choice([k for k in kinds_pool if k not in used_kinds])
            jobs.append(job(kind, user=spool_user, file=spool_file))
            for word in rng.sample(["heartbeat", "disk-report", "tmp-clean", "ntp-check"], 2):
                desc, exprs = _cron_schedule(rng.choice(["hourly", "every_n", "daily"]), rng)
                foreign.append(
                    {
                        "schedule": exprs[0],
                        "user": "root",
                        "command": f"/usr/local/bin/{app}-{word} >/dev/null 2>&1",
                        "path": f"/usr/local/bin/{app}-{word}",
                    }
                )

        def command(j: dict[str, Any], *, escape: bool = True, redirect: str = ">> {log} 2>&1"):
            parts = [j["path"]]
            for a in j["args"]:
                if a.startswith("@DATE"):
                    fmt = j["date"]["fmt"].replace("%", "\\%" if escape else "%")
                    parts.append(f"$(date +{fmt})")
                else:
                    parts.append(a)
            return " ".join(parts) + " " + redirect.format(log=j["log"])

        header = [f"# {app} scheduled jobs"]
        files_spec = {cron_file: {"system": True, "owner": "root", "mode": "644"}}
        if spool_file:
            files_spec[spool_file] = {"system": False, "owner": spool_user, "mode": "600"}

        def solution(
            *,
            env_first: bool = True,
            newline: bool = True,
            user_field: bool = True,
            redirect: str = ">> {log} 2>&1",
            override: dict[str, list[str]] | None = None,
        ) -> dict[str, str]:
            """The crontab files of the reference solution, or of a near miss."""
            out = {}
            for file, spec in files_spec.items():
                lines: list[tuple[str, str | None, str]] = []
                for j in jobs:
                    if j["file"] == file:
                        for e in (override or {}).get(j["name"], j["exprs"]):
                            user = j["user"] if spec["system"] and user_field else None
                            lines.append((e, user, command(j, redirect=redirect)))
                if spec["system"]:
                    lines += [(f["schedule"], f["user"], f["command"]) for f in foreign]
                hdr = header if spec["system"] else [f"# crontab of {spool_user}"]
                out[file] = _crontab_text(
                    hdr, env, lines, env_first=env_first, newline=newline or not spec["system"]
                )
            return out

        oracle = solution()
        first = jobs[0]
        mutants = {
            "env-after-entries": solution(env_first=False),
            "truncating-redirect": solution(redirect="> {log} 2>&1"),
            "stdout-only": solution(redirect=">> {log}"),
            "no-final-newline": solution(newline=False),
            "no-user-field": solution(user_field=False),
            "wrong-schedule": solution(
                override={first["name"]: [_cron_slip(first["exprs"][0]), *first["exprs"][1:]]}
            ),
        }

        original = None
        if existing:
            lines: list[str] = [*header, f"MAILTO={mailto}" if mailto else 'MAILTO=""', ""]
            entry_lines = []
            for j in existing:
                for e in j["exprs"]:
                    brk = j["broken"]
                    sched = (
                        _cron_break(brk, e)
                        if brk in ("swap_hm", "star_minute", "dom_month", "dow_shift")
                        else e
                    )
                    user = None if brk == "no_user" else j["user"]
                    cmd = command(j, escape=brk != "percent")
                    entry_lines.append(" ".join(x for x in (sched, user, cmd) if x))
            entry_lines += [f"{f['schedule']} {f['user']} {f['command']}" for f in foreign]
            rng.shuffle(entry_lines)
            lines += entry_lines[:1] + [f"{var}={var_value}"] + entry_lines[1:]
            original = "\n".join(lines)  # no final newline: cron ignores the last line

        programs = {
            f"environment/bin/{j['name']}": _fill(
                """
                #!/bin/sh
                # @@APP@@ job @@NAME@@ (stub): reports how it was run.
                echo "@@NAME@@: args=$*"
                echo "@@NAME@@: @@VAR@@=${@@VAR@@-<unset>}"
                echo "@@NAME@@: finished (stderr)" >&2
                """,
                APP=app,
                NAME=j["name"],
                VAR=var,
            )
            for j in jobs
        }
        for f in foreign:
            programs[f"environment/foreign/{f['path'].rsplit('/', 1)[1]}"] = (
                f"#!/bin/sh\n# {app} housekeeping\nexit 0\n"
            )
        if original is not None:
            programs["environment/crontab"] = original
        users = sorted({j["user"] for j in jobs if j["user"] != "root"})
        return Draft(
            context={
                "app": app,
                "bindir": bindir,
                "logdir": logdir,
                "cron_file": cron_file,
                "spool_file": spool_file,
                "spool_user": spool_user,
                "env": env,
                "var": var,
                "var_value": var_value,
                "jobs": jobs,
                "new_jobs": [j for j in jobs if j not in existing],
                "existing": existing,
                "foreign": foreign,
                "users": users,
                "files_spec": files_spec,
                "oracle": oracle,
                "mutants": mutants,
                "has_original": original is not None,
                "cron_lib": CRON_LIB,
            },
            files=programs,
            secrets=[e for j in jobs for e in j["exprs"]],
            outputs=list(files_spec),
            tags=["cron", "crontab"] + (["repair"] if existing else []),
        )


# ---------------------------------------------------------------------------------------------
# users-groups
# ---------------------------------------------------------------------------------------------

UG_PEOPLE = [
    "alice",
    "bruno",
    "chen",
    "dara",
    "emeka",
    "farah",
    "goran",
    "hana",
    "ivan",
    "jules",
    "kofi",
    "lena",
    "mateo",
    "nadia",
    "omar",
    "priya",
    "quinn",
    "rosa",
    "sven",
    "tariq",
    "uma",
    "vera",
    "wei",
    "yara",
    "zane",
]
UG_TEAMS = ["analytics", "platform", "billing", "research", "support", "infra", "design", "data"]
UG_EXTRA_GROUPS = ["auditors", "deployers", "oncall", "backup-ops", "vpn-users", "release-mgrs"]
UG_SERVICES = ["metricsd", "ingestd", "queue-agent", "backupd", "indexerd", "mailrelay"]
UG_WORDS = ["otter", "maple", "comet", "harbor", "violet", "granite", "ember", "falcon", "cedar"]
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
        people = iter(rng.sample(UG_PEOPLE, 12))
        uids = iter(rng.sample(range(2001, 2999), 12))
        gids = iter(rng.sample(range(3001, 3999), 8))
        teams = rng.sample(UG_TEAMS, 3)
        extras = rng.sample(UG_EXTRA_GROUPS, 3)
        onboarding = f"/srv/{org}-onboarding"

        setup: list[str] = []  # Dockerfile commands (the state the agent finds)
        solve: list[str] = []  # reference solution commands
        groups: dict[str, dict[str, Any]] = {}  # name -> {gid, members (final)}
        users: dict[str, dict[str, Any]] = {}  # name -> final spec checked by the tests
        steps: list[dict[str, Any]] = []  # instruction items
        files: dict[str, str] = {}

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
                    f"{rng.choice(UG_WORDS).capitalize()}-{rng.choice(UG_WORDS)}-"
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
            svc = rng.choice(UG_SERVICES)
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
            setup += [
                f"useradd -m -u {l_uid} -U -s /bin/bash -G {teams[0]} {leaver}",
                f"groupmod -g {l_uid} {leaver}",
                f"usermod -p '{l_hash}' {leaver}",
            ]
            groups[leaver] = {"gid": l_uid, "members": set()}
            users[leaver] = {
                "uid": l_uid,
                "group": leaver,
                "groups": [teams[0]],
                "shell": "/bin/bash",
                "home": f"/home/{leaver}",
                "hash": "!" + l_hash,
            }
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
            setup += [
                f"useradd -m -u {dup_uid} -U -s /bin/bash {keep}",
                f"groupmod -g {dup_uid} {keep}",
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
            groups[keep] = {"gid": dup_uid, "members": set()}
            groups[clone] = {"gid": clone_gid, "members": set()}
            users[keep] = {
                "uid": dup_uid,
                "group": keep,
                "groups": [],
                "shell": "/bin/bash",
                "home": f"/home/{keep}",
                "owned": [f"/home/{keep}", f"/home/{keep}/notes.txt", f"/var/cache/{keep}"],
            }
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
            setup += [
                f"useradd -M -u {h_uid} -U -s /bin/bash -d /home/{homeless} {homeless}",
                f"groupmod -g {h_uid} {homeless}",
            ]
            groups[homeless] = {"gid": h_uid, "members": set()}
            users[homeless] = {
                "uid": h_uid,
                "group": homeless,
                "groups": [],
                "shell": "/bin/bash",
                "home": f"/home/{homeless}",
                "home_mode": h_mode,
                "skel": True,
            }
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
        return Draft(
            context={
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
            tags=["useradd", "groups", "shadow"] + (["repair"] if level == "hard" else []),
        )


def _sh(text: str) -> str:
    return shlex.quote(text)


# ---------------------------------------------------------------------------------------------
# service-config
# ---------------------------------------------------------------------------------------------

SC_ROLES = ["catalog", "quotes", "inventory", "pricing", "geo", "registry", "status", "stock"]
SC_FRONT_ROLES = ["gateway", "dashboard", "aggregator", "portal", "summary"]
SC_NOUNS = ["items", "products", "regions", "tickers", "skus", "zones", "feeds", "plans"]
SC_WORDS = [
    "alpha",
    "amber",
    "basalt",
    "cobalt",
    "delta",
    "ember",
    "fjord",
    "garnet",
    "harbor",
    "indigo",
    "jade",
    "krypton",
    "lagoon",
    "mesa",
    "nickel",
    "onyx",
    "prairie",
    "quartz",
    "ridge",
    "sierra",
    "tundra",
    "umber",
    "vertex",
    "willow",
]
SC_HEALTH = ["/health", "/healthz", "/ping", "/-/ready", "/status/health", "/livez"]
SC_SECTIONS = {
    "server": ["server", "http", "listen"],
    "app": ["app", "service", "content"],
    "auth": ["auth", "security", "access"],
    "log": ["logging", "log", "audit"],
    "upstream": ["upstream", "backend", "origin"],
}
SC_KEYS = {
    "bind": ["bind", "host", "address", "listen_address"],
    "port": ["port", "listen_port", "http_port"],
    "name": ["name", "service_name", "display_name"],
    "data": ["data_file", "source_file", "items_file"],
    "maintenance": ["maintenance", "maintenance_mode", "read_only_banner"],
    "token_file": ["token_file", "bearer_token_file", "secret_file"],
    "token": ["token", "bearer_token", "secret"],
    "log_file": ["file", "access_log", "path"],
    "url": ["url", "base_url", "endpoint"],
    "up_token_file": ["token_file", "credentials_file", "bearer_file"],
}
SC_FORMATS = {"ini": "conf", "toml": "toml", "yaml": "yaml", "env": "env"}
SC_FORMAT_DOC = {
    "ini": "an INI file: [section] headers, `key = value` lines, `;` or `#` comments",
    "toml": "a TOML file: [section] tables; strings quoted, integers and booleans bare",
    "yaml": "a YAML-style file: an unindented `section:` line, then indented `key: value` lines",
    "env": "an environment-style file: `SECTION_KEY=value` lines (no sections), `#` comments",
}
SC_FAULTS = ["port", "bind", "data", "maintenance", "no_auth", "typo"]

SC_PARSERS = {
    "ini": """
        def parse(text):
            import configparser

            parser = configparser.ConfigParser(interpolation=None)
            try:
                parser.read_string(text)
            except configparser.Error as exc:
                fail(f"config: {exc}")
            return {(s, k): v for s in parser.sections() for k, v in parser.items(s)}
    """,
    "toml": """
        def parse(text):
            import tomllib

            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                fail(f"config: {exc}")
            out = {}
            for section, table in data.items():
                if not isinstance(table, dict):
                    fail(f"config: {section} must be a [table]")
                for key, value in table.items():
                    out[(section, key)] = value
            return out
    """,
    "yaml": """
        def parse(text):
            out, section = {}, None
            for number, line in enumerate(text.splitlines(), 1):
                body = line.split(" #", 1)[0].rstrip()
                if not body.strip() or body.lstrip().startswith("#"):
                    continue
                if not line[0].isspace():
                    if not body.endswith(":"):
                        fail(f"config line {number}: expected 'section:'")
                    section = body[:-1].strip()
                    continue
                key, sep, value = body.strip().partition(":")
                if not sep or section is None:
                    fail(f"config line {number}: expected 'key: value' under a section")
                value = value.strip()
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\\"":
                    value = value[1:-1]
                out[(section, key.strip())] = value
            return out
    """,
    "env": """
        def parse(text):
            out = {}
            for number, line in enumerate(text.splitlines(), 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                if line.startswith("export "):
                    line = line[len("export "):]
                key, sep, value = line.partition("=")
                if not sep:
                    fail(f"config line {number}: expected KEY=value")
                value = value.strip()
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\\"":
                    value = value[1:-1]
                out[("", key.strip())] = value
            return out
    """,
}

SC_COMMON = '''
    import hmac
    import json
    import os
    import sys
    import urllib.error
    import urllib.request
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    PROG = "@@SVC@@"


    def fail(message):
        sys.exit(f"{PROG}: {message}")


    @@PARSER@@


    def setting_name(section, key):
        return f"{section}_{key}".upper() if "@@FORMAT@@" == "env" else f"[{section}] {key}"


    def load(path, schema):
        """schema: logical name -> (section, key, type, default); default None = required."""
        try:
            with open(path, encoding="utf-8") as fh:
                raw = parse(fh.read())
        except OSError as exc:
            fail(f"cannot read config {path}: {exc.strerror}")
        names = {}
        for logical, (section, key, kind, default) in schema.items():
            where = ("", f"{section}_{key}".upper()) if "@@FORMAT@@" == "env" else (section, key)
            names[where] = logical
        for where in raw:
            if where not in names:
                fail(f"unknown setting {setting_name(*where) if where[0] else where[1]}")
        cfg = {}
        for where, logical in names.items():
            section, key, kind, default = schema[logical]
            label = setting_name(section, key)
            if where not in raw:
                if default is None:
                    fail(f"missing required setting {label}")
                cfg[logical] = default
                continue
            value = raw[where]
            if kind == "int":
                try:
                    value = int(value)
                except (TypeError, ValueError):
                    fail(f"{label}: not an integer: {value!r}")
            elif kind == "bool":
                if not isinstance(value, bool):
                    text = str(value).strip().lower()
                    if text not in ("true", "false", "yes", "no", "on", "off", "1", "0"):
                        fail(f"{label}: not a boolean: {value!r}")
                    value = text in ("true", "yes", "on", "1")
            else:
                value = str(value).strip()
            cfg[logical] = value
        return cfg


    def read_secret(path, label):
        try:
            with open(path, encoding="utf-8") as fh:
                secret = fh.read().strip()
        except OSError as exc:
            fail(f"{label}: cannot read {path}: {exc.strerror}")
        if not secret:
            fail(f"{label}: {path} is empty")
        return secret


    class Handler(BaseHTTPRequestHandler):
        server_version = PROG
        log_file = None

        def send(self, code, body, ctype="text/plain"):
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_request(self, code="-", size="-"):
            if self.log_file is not None:
                self.log_file.write(f"{self.client_address[0]} {self.command} {self.path} {code}\\n")
                self.log_file.flush()

        def log_message(self, fmt, *args):
            pass


    def serve(bind, port, handler):
        try:
            server = ThreadingHTTPServer((bind, port), handler)
        except OSError as exc:
            fail(f"cannot listen on {bind}:{port}: {exc.strerror}")
        print(f"{PROG}: listening on {bind}:{port}", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
'''

SC_BACKEND = '''
    #!/usr/bin/env python3
    """@@SVC@@: serves the @@NOUN@@ list over HTTP.

    Configuration: @@FORMAT_DOC@@. Path: $@@SVCU@@_CONFIG if set, else @@CONFIG@@.@@ENV_DOC@@

    Settings (@@NAMING@@):
    @@SETTINGS_DOC@@

    Endpoints:
      GET @@HEALTH@@  -> 200 "ok"
      GET @@ROUTE@@  -> 200 {"service": <name>, "@@NOUN@@": [<non-empty lines of the data file>]}
                      401 unless the request carries "Authorization: Bearer <token>" (when a
                      token is configured); 503 while the maintenance flag is on
    Every request is appended to the access log file, when one is configured.
    """
    @@COMMON@@

    SCHEMA = @@SCHEMA@@


    def main():
        cfg = load(os.environ.get("@@SVCU@@_CONFIG", "@@CONFIG@@"), SCHEMA)
        @@PORT_OVERRIDE@@
        try:
            with open(cfg["data"], encoding="utf-8") as fh:
                items = [line.strip() for line in fh if line.strip()]
        except OSError as exc:
            fail(f"cannot read data file {cfg['data']}: {exc.strerror}")
        token = None
        if cfg["token_file"] and cfg["token"]:
            fail("set either the token or the token file, not both")
        if cfg["token_file"]:
            token = read_secret(cfg["token_file"], "token file")
        elif cfg["token"]:
            token = cfg["token"]
        log_file = None
        if cfg.get("log_file"):
            try:
                log_file = open(cfg["log_file"], "a", encoding="utf-8")
            except OSError as exc:
                fail(f"cannot open access log {cfg['log_file']}: {exc.strerror}")

        class Backend(Handler):
            def do_GET(self):
                if self.path == "@@HEALTH@@":
                    return self.send(200, "ok")
                if self.path != "@@ROUTE@@":
                    return self.send(404, "not found")
                if token is not None:
                    given = self.headers.get("Authorization", "")
                    if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                        return self.send(401, "unauthorized")
                if cfg["maintenance"]:
                    return self.send(503, "down for maintenance")
                body = json.dumps({"service": cfg["name"], "@@NOUN@@": items})
                return self.send(200, body, "application/json")

        Backend.log_file = log_file
        serve(cfg["bind"], cfg["port"], Backend)


    if __name__ == "__main__":
        main()
'''

SC_FRONTEND = '''
    #!/usr/bin/env python3
    """@@SVC@@: summarises the @@NOUN@@ of its upstream @@UPSTREAM@@ service.

    Configuration: @@FORMAT_DOC@@. Path: @@CONFIG@@.

    Settings (@@NAMING@@):
    @@SETTINGS_DOC@@

    Endpoints:
      GET @@HEALTH@@  -> 200 "ok"
      GET @@ROUTE@@  -> 200 {"service": <name>, "upstream": <the upstream's service name>,
                            "count": <number of @@NOUN@@>}
                      It fetches GET <upstream url>@@UP_ROUTE@@ with the header
                      "Authorization: Bearer <token read from the upstream token file>";
                      502 when that fails.
    """
    @@COMMON@@

    SCHEMA = @@SCHEMA@@


    def main():
        cfg = load("@@CONFIG@@", SCHEMA)
        token = read_secret(cfg["up_token_file"], "upstream token file")

        class Frontend(Handler):
            def do_GET(self):
                if self.path == "@@HEALTH@@":
                    return self.send(200, "ok")
                if self.path != "@@ROUTE@@":
                    return self.send(404, "not found")
                request = urllib.request.Request(
                    cfg["url"].rstrip("/") + "@@UP_ROUTE@@",
                    headers={"Authorization": f"Bearer {token}"},
                )
                try:
                    with urllib.request.urlopen(request, timeout=5) as resp:
                        data = json.loads(resp.read())
                except (OSError, ValueError) as exc:
                    return self.send(502, f"upstream failed: {exc}")
                body = json.dumps(
                    {"service": cfg["name"], "upstream": data.get("service"),
                     "count": len(data.get("@@NOUN@@", []))}
                )
                return self.send(200, body, "application/json")

        serve(cfg["bind"], cfg["port"], Frontend)


    if __name__ == "__main__":
        main()
'''

SC_DOCS = {
    "bind": ("str", "address to listen on (default 0.0.0.0, all interfaces)"),
    "port": ("int", "TCP port (required)"),
    "name": ("str", "service name reported by the API (default: the program name)"),
    "data": ("str", "file listing the entries, one per line (required)"),
    "maintenance": ("bool", "true/false: answer 503 on the API route (default false)"),
    "token_file": ("str", "file holding the bearer token that protects the API route"),
    "token": ("str", "the bearer token itself (alternative to the token file)"),
    "log_file": ("str", "access log file, one line per request (default: no log)"),
    "url": ("str", "base URL of the upstream service, e.g. http://host:port (required)"),
    "up_token_file": ("str", "file holding the upstream's bearer token (required)"),
}


def _sc_render(fmt: str, svc: str, values: dict[str, dict[str, Any]]) -> str:
    """Render {section: {key: value}} in one of the config formats."""

    def scalar(v: Any, quote: bool) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int) or not quote:
            return str(v)
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = [f"# {svc} configuration"]
    for section, table in values.items():
        if not table:
            continue
        if fmt == "env":
            lines += [f"{section}_{k}".upper() + f"={scalar(v, False)}" for k, v in table.items()]
            continue
        lines.append("")
        if fmt == "yaml":
            lines.append(f"{section}:")
            lines += [f"  {k}: {scalar(v, False)}" for k, v in table.items()]
        else:
            lines.append(f"[{section}]")
            lines += [f"{k} = {scalar(v, fmt == 'toml')}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


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
    common = _fill(SC_COMMON, PARSER=_fill(SC_PARSERS[fmt]).rstrip("\n"), FORMAT=fmt, **values)
    return _fill(
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

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        app = rng.choice(APPS)
        role = rng.choice(SC_ROLES)
        svc = f"{app}-{role}"
        svcu = svc.upper().replace("-", "_")
        fmt = rng.choice(sorted(SC_FORMATS))
        ext = SC_FORMATS[fmt]
        config = f"/etc/{svc}/{svc}.{ext}"
        noun = rng.choice(SC_NOUNS)
        health = rng.choice(SC_HEALTH)
        route = rng.choice([f"/api/v1/{noun}", f"/{noun}", f"/v2/{noun}", f"/api/{noun}/all"])
        port, wrong_port, port2, wrong_port2 = rng.sample(range(8100, 9900), 4)
        name = f"{rng.choice(SC_WORDS)}-{role}"
        data = f"/srv/{svc}/{noun}.txt"
        items = rng.sample(SC_WORDS, rng.randint(4, 9))
        token = "".join(rng.choice("0123456789abcdef") for _ in range(32))
        token_file = f"/etc/{svc}/token"
        user = f"{role}d" if level != "easy" else "root"
        logdir = f"/var/log/{svc}"
        log = f"{logdir}/access.log" if level != "easy" else ""

        sec = {k: rng.choice(v) for k, v in SC_SECTIONS.items()}
        key = {k: rng.choice(v) for k, v in SC_KEYS.items()}
        schema = {
            "bind": (sec["server"], key["bind"], "str", "0.0.0.0"),
            "port": (sec["server"], key["port"], "int", None),
            "name": (sec["app"], key["name"], "str", svc),
            "data": (sec["app"], key["data"], "str", None),
            "maintenance": (sec["app"], key["maintenance"], "bool", False),
            "token_file": (sec["auth"], key["token_file"], "str", ""),
            "token": (sec["auth"], key["token"], "str", ""),
            "log_file": (sec["log"], key["log_file"], "str", ""),
        }

        def values(**v: Any) -> dict[str, dict[str, Any]]:
            """Backend config from logical settings (None: leave the setting out)."""
            out: dict[str, dict[str, Any]] = {}
            for logical, value in v.items():
                if value is None:
                    continue
                section, k = schema[logical][0], schema[logical][1]
                out.setdefault(section, {})[k] = value
            return out

        good = {
            "bind": "127.0.0.1",
            "port": port,
            "name": name,
            "data": data,
            "maintenance": False,
            "token_file": token_file,
            "log_file": log or None,
        }
        n_faults = {"easy": 3, "medium": 3, "hard": 4}[level]
        faults = rng.sample([*SC_FAULTS, "name"], n_faults)
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
        initial_config = _sc_render(fmt, svc, values(**bad))
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
        good_config = _sc_render(fmt, svc, values(**good))

        env_faults: list[str] = []
        env_file = f"/etc/default/{svc}"
        good_env = initial_env = None
        if level != "easy":
            env_faults = (
                ["override", "config_path"]
                if level == "hard"
                else [rng.choice(["override", "config_path"])]
            )
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
            SC_BACKEND,
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
            files[f"environment/{svc}/run"] = _fill(
                """
                #!/bin/sh
                # Starts @@SVC@@ as the init system would: environment from @@ENVFILE@@, then
                # the program as user @@USER@@. Do not modify.
                set -a
                [ -r @@ENVFILE@@ ] && . @@ENVFILE@@
                set +a
                exec setpriv --reuid "$(id -u @@USER@@)" --regid "$(id -g @@USER@@)" --init-groups \\
                    python3 /opt/@@SVC@@/@@SVC@@.py
                """,
                SVC=svc,
                ENVFILE=env_file,
                USER=user,
            )
            launchers.append(f"/usr/local/bin/{svc}-run")

        front = None
        if level == "hard":
            frole = rng.choice(SC_FRONT_ROLES)
            svc2 = f"{app}-{frole}"
            config2 = f"/etc/{svc2}/{svc2}.{ext}"
            route2 = rng.choice([f"/summary/{noun}", f"/api/{frole}", "/overview", "/v1/summary"])
            name2 = f"{rng.choice(SC_WORDS)}-{frole}"
            schema2 = {
                "bind": (sec["server"], key["bind"], "str", "0.0.0.0"),
                "port": (sec["server"], key["port"], "int", None),
                "name": (sec["app"], key["name"], "str", svc2),
                "url": (sec["upstream"], key["url"], "str", None),
                "up_token_file": (sec["upstream"], key["up_token_file"], "str", None),
            }

            def values2(**v: Any) -> dict[str, dict[str, Any]]:
                out: dict[str, dict[str, Any]] = {}
                for logical, value in v.items():
                    section, k = schema2[logical][0], schema2[logical][1]
                    out.setdefault(section, {})[k] = value
                return out

            good2 = {
                "bind": "127.0.0.1",
                "port": port2,
                "name": name2,
                "url": f"http://127.0.0.1:{port}",
                "up_token_file": token_file,
            }
            bad2 = dict(good2, url=f"http://127.0.0.1:{wrong_port}")
            bad2["up_token_file"] = f"/etc/{svc2}/upstream.token"
            if rng.random() < 0.5:
                bad2["bind"] = "0.0.0.0"
            else:
                bad2["port"] = wrong_port2
            files[f"environment/{svc2}/{svc2}.py"] = _sc_program(
                SC_FRONTEND,
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
            files[f"environment/{svc2}/config"] = _sc_render(fmt, svc2, values2(**bad2))
            files[f"environment/{svc2}/run"] = _fill(
                """
                #!/bin/sh
                # Starts @@SVC@@ as user @@USER@@, as the init system would. Do not modify.
                exec setpriv --reuid "$(id -u @@USER@@)" --regid "$(id -g @@USER@@)" --init-groups \\
                    python3 /opt/@@SVC@@/@@SVC@@.py
                """,
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
                "good_config": _sc_render(fmt, svc2, values2(**good2)),
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
            "bind-all": _sc_render(fmt, svc, values(**dict(good, bind="0.0.0.0"))),
            "token-inline": _sc_render(
                fmt, svc, values(**dict(good, token_file=None, token=token))
            ),
            "maintenance-on": _sc_render(fmt, svc, values(**dict(good, maintenance=True))),
            "wrong-port": _sc_render(fmt, svc, values(**dict(good, port=wrong_port))),
        }
        return Draft(
            context={
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
            },
            files=files,
            secrets=[token],
            forbidden_strings=[],
            outputs=[config] + ([front["config"]] if front else []),
            tags=["http", "config", fmt] + (["privileges", "env-file"] if level != "easy" else []),
        )
