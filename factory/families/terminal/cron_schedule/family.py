"""cron-schedule: write or repair crontab entries from schedules described in words. The cron
semantics (``shipped/cronlib.py``) run here to check schedules and in the hidden tests."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from factory.families.base import Draft, Family, register
from factory.families.names import MONTH_NAMES
from factory.families.slots import Slots, Slug
from factory.families.terminal.shipped import fill, read
from factory.families.terminal.state_snapshot import STATE_DIR, snapshot_hook, stat_lines
from factory.families.terminal.words import APPS
from factory.vocabulary import Difficulty

from .shipped import cronlib

# The cron semantics: imported here, and their source embedded in the hidden tests.
CRON_LIB = "\n" + read(__file__, "cronlib.py")

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
        return f"once a year, at {at} on {MONTH_NAMES[mon - 1]} {d}", [f"{m} {h} {d} {mon} *"]
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
        if candidate and cronlib.cron_fires(" ".join(candidate)) != cronlib.cron_fires(expr):
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


class CronSlots(Slots):
    """An application whose maintenance jobs run from cron: its name (its scripts live in
    /opt/<app>/bin and its cron file is /etc/cron.d/<app>)."""

    app: Slug = Field(description="the application's short name", examples=["tide-board"])


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
    slots = CronSlots

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        app = self.filled("app", None) or rng.choice(APPS)
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
            f"environment/bin/{j['name']}": fill(
                read(__file__, "job.sh.tmpl"),
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
                "state": f"{STATE_DIR}/crontabs.stat",
            },
            files=programs,
            secrets=[e for j in jobs for e in j["exprs"]],
            outputs=list(files_spec),
            separate_verifier=True,
            artifacts=[STATE_DIR],
            collect=[snapshot_hook({"crontabs.stat": stat_lines(list(files_spec))})],
            tags=["cron", "crontab"] + (["repair"] if existing else []),
        )
