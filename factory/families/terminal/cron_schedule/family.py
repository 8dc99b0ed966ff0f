"""cron-schedule: write or repair crontab entries from schedules described in words. The cron
semantics (``shipped/cronlib.py``) run here to check schedules and in the hidden tests."""

from __future__ import annotations

import hashlib
import random
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from factory.families.base import Draft, Family, register
from factory.families.names import MONTH_NAMES
from factory.families.slots import Slots, Slug
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.shipped import fill, read
from factory.families.terminal.state_snapshot import STATE_DIR, snapshot_hook, stat_lines
from factory.families.terminal.traps import load_traps, traps_for
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

#: Hard: faults of the file and around the jobs, besides the broken lines (two or three of
#: these per task).
CRON_EXTRA_FAULTS = [
    "env-misplaced",  # an environment line below the first entry: that entry does not get it
    "no-final-newline",  # cron ignores a last line without a newline
    "path-missing",  # the PATH line the jobs need is not there
    "cron-file-mode",  # the file is group-writable: cron skips such files in /etc/cron.d
    "script-crlf",  # a job program was saved with CRLF line ends: '#!/bin/sh\r' is no shell
    "script-not-exec",  # a job program lost its execute bits
]
#: The unannounced ones: what each is, and the words that would give it away (traps.toml).
CRON_TRAPS = load_traps(Path(__file__).parent / "traps.toml", CRON_EXTRA_FAULTS)


def _sed_line(old: str, new: str, path: str) -> str:
    """``sed -i`` replacing the whole line ``old`` of ``path`` by ``new`` (GNU sed, ``#`` as the
    delimiter: crontab entries never hold one)."""
    if "#" in old + new or "\n" in old + new:
        raise ValueError("a crontab entry with '#' or a newline")
    pattern = "".join("\\" + c if c in "\\.*[]^$" else c for c in old)
    replacement = "".join("\\" + c if c in "\\&" else c for c in new)
    return f"sed -i {shlex.quote(f's#^{pattern}$#{replacement}#')} {shlex.quote(path)}"


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
    schedules described in words, with environment lines, the user field and log redirects.
    Hard: an existing /etc/cron.d file must be repaired in place, keeping its other entries:
    two to four broken lines (:data:`CRON_BREAKS`: swapped fields, DOW/DOM mistakes, a missing
    user field, an unescaped %) and two or three faults of the file or around the jobs
    (:data:`CRON_EXTRA_FAULTS`: an environment line below the first entry, no final newline,
    the PATH line missing, a group-writable file, a job program with CRLF line ends or without
    its execute bits; the unannounced ones are traps), plus a job for a user's crontab. The
    reference fixes each fault with its own edit; each hard task carries one near miss per
    fault (the reference with that one left). Tests parse the files like cron and compare the
    schedules by expanding their fire times over two years; they also run each command as its
    user (at hard, the job programs travel to the verifier and must be as shipped)."""

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
        extra: list[str] = []  # hard: faults of the file and around the jobs
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
            breaks = rng.sample(sorted(CRON_BREAKS), rng.randint(2, 4))
            extra = sorted(rng.sample(CRON_EXTRA_FAULTS, rng.randint(2, 3)))
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
        # Hard: the reference's commands, one per fault (the file is repaired in place).
        edits: list[dict[str, str]] = []
        sick: dict[str, str] = {}  # fault -> the job program it concerns
        if existing:
            env_line = f"{var}={var_value}"
            path_line = f"PATH={dict(env)['PATH']}"
            lines: list[str] = [*header]
            if "path-missing" not in extra:
                lines.append(path_line)
            lines.append(f"MAILTO={mailto}" if mailto else 'MAILTO=""')
            job_lines, entry_lines, repairs = set(), [], []
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
                    line = " ".join(x for x in (sched, user, cmd) if x)
                    if brk:
                        good = " ".join((e, j["user"], command(j)))
                        repairs.append({"fault": brk.replace("_", "-"), "old": line, "new": good})
                    job_lines.add(line)
                    entry_lines.append(line)
            entry_lines += [f"{f['schedule']} {f['user']} {f['command']}" for f in foreign]
            rng.shuffle(entry_lines)
            if "env-misplaced" in extra:
                # below the first entry, which runs a job: that job goes without it
                first = next(i for i, x in enumerate(entry_lines) if x in job_lines)
                entry_lines.insert(0, entry_lines.pop(first))
                lines += ["", *entry_lines[:1], env_line, *entry_lines[1:]]
            else:
                lines += [env_line, "", *entry_lines]
            original = "\n".join(lines) + ("" if "no-final-newline" in extra else "\n")
            programs_of = [j for j in jobs if j["file"] == cron_file]
            script_faults = [f for f in extra if f.startswith("script-")]
            chosen = rng.sample(programs_of, len(script_faults))
            for fault, j in zip(script_faults, chosen, strict=True):
                sick[fault] = j["path"]
            cf = shlex.quote(cron_file)
            if "no-final-newline" in extra:
                edits.append({"fault": "no-final-newline", "command": f"echo >> {cf}"})
            for r in repairs:
                edits.append(
                    {"fault": r["fault"], "command": _sed_line(r["old"], r["new"], cron_file)}
                )
            if "env-misplaced" in extra:
                move = f"-e '/^{var}=/d' -e {shlex.quote(f'/^MAILTO=/a {env_line}')}"
                edits.append({"fault": "env-misplaced", "command": f"sed -i {move} {cf}"})
            if "path-missing" in extra:
                insert = shlex.quote(f"/^MAILTO=/i {path_line}")
                edits.append({"fault": "path-missing", "command": f"sed -i {insert} {cf}"})
            if "cron-file-mode" in extra:
                edits.append({"fault": "cron-file-mode", "command": f"chmod 644 {cf}"})
            if "script-crlf" in extra:
                crlf = f"sed -i 's/\\r$//' {sick['script-crlf']}"
                edits.append({"fault": "script-crlf", "command": crlf})
            if "script-not-exec" in extra:
                chmod = f"chmod 755 {sick['script-not-exec']}"
                edits.append({"fault": "script-not-exec", "command": chmod})

        programs = {
            f"environment/bin/{j['name']}": fill(
                read(__file__, "job.sh.tmpl"),
                APP=app,
                NAME=j["name"],
                VAR=var,
            )
            for j in jobs
        }
        digests = {}
        if existing:  # hard: the programs travel to the verifier; none may change
            digests = {
                j["path"]: hashlib.sha256(
                    programs[f"environment/bin/{j['name']}"].encode()
                ).hexdigest()
                for j in jobs
            }
        if "script-crlf" in sick:
            rel = f"environment/bin/{sick['script-crlf'].rsplit('/', 1)[1]}"
            programs[rel] = programs[rel].replace("\n", "\r\n")
        for f in foreign:
            programs[f"environment/foreign/{f['path'].rsplit('/', 1)[1]}"] = (
                f"#!/bin/sh\n# {app} housekeeping\nexit 0\n"
            )
        if original is not None:
            programs["environment/crontab"] = original
        users = sorted({j["user"] for j in jobs if j["user"] != "root"})
        faults = sorted([j["broken"].replace("_", "-") for j in existing if j["broken"]] + extra)
        context: dict[str, Any] = {
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
            "edits": edits,
            "extra": extra,
            "sick": sick,
            "digests": digests,
            "slip": None,
        }
        # Near misses: the reference with one of the task's faults left as it is.
        mutations = near_misses(self, context, faults, name="leave-{}")
        return Draft(
            context=context,
            files=programs,
            secrets=[e for j in jobs for e in j["exprs"]],
            outputs=list(files_spec) + sorted(digests),
            separate_verifier=True,
            artifacts=[STATE_DIR],
            collect=[snapshot_hook({"crontabs.stat": stat_lines(list(files_spec))})],
            tags=["cron", "crontab"] + (["repair"] if existing else []),
            faults=faults,
            traps=traps_for(CRON_TRAPS, extra),
            mutations=mutations,
        )
