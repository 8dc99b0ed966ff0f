"""log-report: answer a question about a service's access logs (several formats, time zones,
rotated and gzipped files) as an exact report. The logs are generated in :mod:`.logs`; the
answer is computed here from the same requests."""

from __future__ import annotations

import gzip
import lzma
import random
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from factory.datafiles import load_toml_model
from factory.families.base import Draft, Family, register
from factory.families.slots import Slots, Slug
from factory.families.terminal.import_job import IMPORT_FAULTS, ImportJob, Wiring, reachable_folder
from factory.families.terminal.knobs import pick
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.text_tasks import (
    EASY,
    HARD,
    MEDIUM,
    OUT_DIRS,
    csv_text,
    sha256_hex,
    text_draft,
)
from factory.families.terminal.traps import load_traps
from factory.vocabulary import Difficulty

from .logs import (
    LR_FORMATS,
    LR_STATUS,
    LR_WORDS,
    Req,
    World,
    draw_request,
    draw_world,
    log_line,
    stack_trace,
)


def _top_lines(items: list[tuple[str, int]], style: str, names: tuple[str, str]) -> str:
    lines = []
    if style == "csv":
        lines.append(f"{names[0]},{names[1]}")
    for rank, (key, count) in enumerate(items, 1):
        lines.append(
            {
                "count-first": f"{count} {key}",
                "tab": f"{key}\t{count}",
                "csv": f"{key},{count}",
                "ranked": f"{rank}. {key} ({count})",
            }[style]
        )
    return "\n".join(lines) + "\n"


def _ip_key(ip: str) -> tuple[int, ...]:
    return tuple(int(x) for x in ip.split("."))


def _lr_answer(reqs: list[Req], q: dict[str, Any], bug: str = "", gz_part: int = 2) -> str:
    """The expected content of the output file (with one bug switched on, the wrong one).
    ``gz_part``: the rotation that is gzip-compressed (hard)."""
    kind = q["kind"]
    ok = [r for r in reqs if not r.truncated]
    if kind == "status-count":
        cls, svc = q["cls"], q["service"]
        n = sum(
            1
            for r in ok
            if (r.svc == svc or bug == "all-services")
            and (
                r.status >= 400
                if bug == "all-errors"
                else r.status == cls * 100
                if bug == "exact-code"
                else r.status // 100 == cls
            )
        )
        return f"{n}\n"
    if kind == "prefix-bytes":
        prefix = q["prefix"].rstrip("/") if bug == "loose-prefix" else q["prefix"]
        total = sum(
            r.nbytes
            for r in ok
            if r.path.startswith(prefix)
            and (
                200 <= r.status < 300
                if bug == "all-2xx"
                else True
                if bug == "any-status"
                else r.status == 200
            )
        )
        return f"{total}\n"
    if kind == "distinct-ips":
        code = q["code"]
        hits = [
            r.ip
            for r in ok
            if (
                r.status // 100 == 4
                if bug == "any-4xx"
                else True
                if bug == "all-ips"
                else r.status == code
            )
        ]
        return f"{len(hits) if bug == 'count-lines' else len(dict.fromkeys(hits))}\n"
    if kind in ("top-clients", "top-endpoints"):
        if kind == "top-clients":
            keys = [r.ip for r in ok if bug == "ignore-status" or r.status // 100 == q["cls"]]
            order: Callable[[str], Any] = (lambda k: k) if bug == "ip-as-text" else _ip_key
        elif bug == "split-methods":
            counts = Counter(f"{r.method} {r.endpoint}" for r in ok)
            top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: q["n"]]
            return _top_lines([(k.split(" ", 1)[1], c) for k, c in top], q["style"], q["names"])
        else:
            keys = [r.path if bug == "keep-query" else r.endpoint for r in ok]
            order = lambda k: k  # noqa: E731
        counts = Counter(keys)
        if bug == "first-seen-ties":
            items = counts.most_common(q["n"])
        else:
            items = sorted(counts.items(), key=lambda kv: (-kv[1], order(kv[0])))[: q["n"]]
        return _top_lines(items, q["style"], q["names"])
    # hard
    use = [r for r in reqs if (not r.truncated or bug == "keep-truncated")]
    if bug == "skip-rotated":
        use = [r for r in use if r.part != gz_part]

    def when(r: Req) -> datetime:
        return r.local.replace(tzinfo=timezone.utc) if bug == "local-time" else r.utc

    if kind == "error-windows":
        width = q["minutes"]
        total: Counter[datetime] = Counter()
        errors: Counter[datetime] = Counter()
        for r in use:
            t = when(r)
            start = t.replace(minute=t.minute - t.minute % width, second=0)
            total[start] += 1
            errors[start] += 0 if r.truncated else int(r.status >= 500)
        rows = [["window_start", "requests", "errors", "error_rate"]]
        for start in sorted(total):
            rows.append(
                [
                    f"{start:%Y-%m-%dT%H:%M}Z",
                    total[start],
                    errors[start],
                    f"{errors[start] / total[start]:.4f}",
                ]
            )
        return csv_text(rows)
    lo, hi, pct = q["lo"], q["hi"], q["pct"]
    groups: dict[tuple[str, str], list[int]] = {}
    for r in use:
        if not r.truncated and lo <= when(r) < hi:
            groups.setdefault((r.svc, r.endpoint), []).append(r.ms)
    rows = [["service", "endpoint", "requests", f"p{pct}_ms"]]
    for (svc, ep), values in sorted(groups.items()):
        values.sort()
        n = len(values)
        idx = pct * (n - 1) // 100 if bug == "percentile-index" else -(-pct * n // 100) - 1
        rows.append([svc, ep, n, values[idx]])
    return csv_text(rows)


class _Bugs(BaseModel):
    """The near misses of the questions (bugs.toml)."""

    model_config = ConfigDict(extra="forbid")

    bugs: dict[str, list[str]]
    """Per question kind: the wrong readings a task's answer must not equal."""
    notes: dict[str, str]
    """Per wrong reading: what it gets wrong."""

    @model_validator(mode="after")
    def _noted(self) -> _Bugs:
        for kind, bugs in self.bugs.items():
            for bug in bugs:
                if bug not in self.notes:
                    raise ValueError(f"bugs.{kind}: '{bug}' has no entry in notes")
        return self


_BUGS = load_toml_model(Path(__file__).parent / "bugs.toml", _Bugs, "log-report bugs")
LR_BUGS = _BUGS.bugs
LR_BUG_NOTES = _BUGS.notes


def _lr_tie(rng: random.Random, w: World, reqs: list[Req], q: dict[str, Any]) -> None:
    """Make the last two printed rows and the first unprinted one tie, and label them so
    that text order and first-seen order both disagree with the required order."""
    n = q["n"]
    if q["kind"] == "top-clients":
        counts = Counter(r.ip for r in reqs if r.status // 100 == q["cls"])
        pool = sorted(w.ips, key=lambda k: (-counts[k], _ip_key(k)))
    else:
        counts = Counter(r.endpoint for r in reqs)
        pool = sorted(
            (p for eps in w.endpoints.values() for p, _ in eps), key=lambda k: (-counts[k], k)
        )
    group = pool[n - 2 : n + 1]
    target = max(1, counts[group[0]])
    for key in group:
        for _ in range(target - counts[key]):
            if q["kind"] == "top-clients":
                status = rng.choice([c for c, _ in LR_STATUS["GET"] if c // 100 == q["cls"]])
                reqs.append(draw_request(rng, w, status=status, ip=key))
            else:
                reqs.append(draw_request(rng, w, path=key, status=200, query_p=0))
    reqs.sort(key=lambda r: r.utc)
    if q["kind"] == "top-clients":
        stream = [r.ip for r in reqs if r.status // 100 == q["cls"]]
    else:
        stream = [r.endpoint for r in reqs]
    first_seen = sorted(group, key=stream.index)
    if q["kind"] == "top-clients":
        while True:
            d1 = rng.randint(3, 9)
            d2 = rng.randint(10, d1 * 10 - 1)
            d3 = rng.randint(100, min(254, d1 * 100 - 1))
            base = rng.choice(w.prefixes)
            labels = [f"{base}.{d}" for d in (d1, d2, d3)]
            if all(lab not in w.ips for lab in labels):
                break
    else:
        labels = sorted(group)
    rename = dict(zip(first_seen, reversed(labels), strict=True))
    for r in reqs:
        if q["kind"] == "top-clients" and r.ip in rename:
            r.ip = rename[r.ip]
        elif q["kind"] == "top-endpoints" and r.endpoint in rename:
            r.path = rename[r.endpoint] + r.path[len(r.endpoint) :]
            r.svc = next(
                s for s, eps in w.endpoints.items() if any(p == r.endpoint for p, _ in eps)
            )
            r.off = w.offsets[r.svc]


def _lr_question(rng: random.Random, w: World, level: Difficulty, reqs: list[Req]) -> dict:
    if level is EASY:
        kind = rng.choice(["status-count", "prefix-bytes", "distinct-ips"])
    elif level is MEDIUM:
        kind = rng.choice(["top-clients", "top-endpoints"])
    else:
        kind = rng.choice(["error-windows", "latency-percentile"])
    q: dict[str, Any] = {"kind": kind}
    if kind == "status-count":
        svc = rng.choice(w.services)
        cls = rng.choice([4, 5])
        q.update(service=svc, cls=cls)
        other = rng.choice([s for s in w.services if s != svc])
        odd = {5: [502, 503, 504], 4: [401, 403, 404, 429]}[cls]
        reqs.append(draw_request(rng, w, svc=svc, status=rng.choice(odd)))
        reqs.append(draw_request(rng, w, svc=other, status=cls * 100 + rng.choice([0, 3, 4])))
        reqs.append(
            draw_request(rng, w, svc=svc, status=rng.choice({5: [404, 403], 4: [500, 503]}[cls]))
        )
    elif kind == "prefix-bytes":
        svc = rng.choice(w.services)
        v = rng.randint(1, 3)
        prefix = f"/api/v{v}/"
        res = rng.sample(
            [
                x
                for x in LR_WORDS.resources
                if all(x not in p for s in w.services for p, _ in w.endpoints[s])
            ],
            2,
        )
        w.endpoints[svc].append((f"{prefix}{res[0]}", ["GET", "POST"]))
        decoy = f"/api/v{v}{rng.choice(['beta', '0', '-legacy', 'x'])}/{res[1]}"
        w.endpoints[rng.choice(w.services)].append((decoy, ["GET"]))
        for _ in range(rng.randint(6, 14)):
            reqs.append(draw_request(rng, w, path=f"{prefix}{res[0]}"))
        for _ in range(rng.randint(2, 5)):
            reqs.append(draw_request(rng, w, path=decoy, status=200))
        reqs.append(draw_request(rng, w, path=f"{prefix}{res[0]}", status=201))
        reqs.append(draw_request(rng, w, path=f"{prefix}{res[0]}", status=404))
        q.update(prefix=prefix)
    elif kind == "distinct-ips":
        code = rng.choice([404, 403, 401, 429])
        q.update(code=code)
        a, b = rng.sample(w.ips, 2)
        for ip in (a, a, b):
            reqs.append(draw_request(rng, w, status=code, ip=ip))
        holders = {r.ip for r in reqs if r.status == code}
        spare = [ip for ip in w.ips if ip not in holders and ip != b] or [b]
        reqs.append(
            draw_request(
                rng,
                w,
                status=rng.choice([c for c in (400, 401, 403, 404, 429) if c != code]),
                ip=spare[0],
            )
        )
    elif kind in ("top-clients", "top-endpoints"):
        q.update(
            n=rng.randint(3, 7),
            style=rng.choice(["count-first", "tab", "csv", "ranked"]),
        )
        if kind == "top-clients":
            q.update(cls=rng.choice([4, 5, 2]), names=("client", "requests"))
        else:
            q.update(names=("endpoint", "requests"))
        _lr_tie(rng, w, reqs, q)
    elif kind == "error-windows":
        q.update(minutes=rng.choice([15, 30, 60]))
    else:
        # Wide enough that every rotation holds requests of the interval (each one counts).
        lo = w.start + timedelta(minutes=int(w.span_min * rng.uniform(0.02, 0.08)))
        hi = lo + timedelta(minutes=int(w.span_min * rng.uniform(0.75, 0.88)))
        q.update(lo=lo.replace(second=0), hi=hi.replace(second=0), pct=rng.choice([90, 95, 99]))
    return q


def _lr_spec(q: dict[str, Any]) -> dict[str, Any]:
    """The question as plain template values (strings, numbers)."""
    spec = {k: v for k, v in q.items() if k not in ("lo", "hi")}
    if "lo" in q:
        spec["lo"] = f"{q['lo']:%Y-%m-%dT%H:%M:%S}Z"
        spec["hi"] = f"{q['hi']:%Y-%m-%dT%H:%M:%S}Z"
    if "names" in q:
        spec["names"] = list(q["names"])
    return spec


#: Hard: the sub-problems a task composes (two to four of them): four about the inputs (where
#: the rotations are and how they are stored), the rest about the report's consumer, an import
#: job run by cron as another account (:mod:`..import_job`).
LR_INPUT_FAULTS = [
    "utf16-rotation",  # the .1 rotation came back from a Windows collector in UTF-16
    "olddir",  # logrotate moves the rotations to an archive folder (olddir)
    "xz-rotation",  # the newest compressed rotation is xz (compresscmd changed), older is gzip
    "copytruncate-dup",  # copytruncate copied the last lines of .1 into the live log again
]
LR_HARD_FAULTS = LR_INPUT_FAULTS + IMPORT_FAULTS
LR_TRAPS = load_traps(Path(__file__).parent / "traps.toml", LR_INPUT_FAULTS)
"""The input faults the instruction does not announce: fault -> Trap (traps.toml)."""
LR_ARCHIVES = ["archive", "old", "rotated", "history"]


def _lr_logrotate(path: str, archive: str | None, xz: bool) -> str:
    lines = [f"{path} {{", "    daily", "    rotate 7", "    missingok", "    notifempty"]
    lines += ["    compress", "    delaycompress", "    copytruncate"]
    if xz:
        lines += ["    compresscmd /usr/bin/xz", "    uncompresscmd /usr/bin/unxz"]
        lines += ["    compressext .xz"]
    if archive:
        lines.append(f"    olddir {archive}")
    return "\n".join(lines + ["}"]) + "\n"


class LogSlots(Slots):
    """The setting of a web front end's access log: the front end's name and the names of
    the backend services it forwards requests to."""

    app: Slug = Field(
        description="the name of the front-end proxy that writes the log", examples=["edge-proxy"]
    )
    services: list[Slug] = Field(
        min_length=6,
        max_length=8,
        description="short names of the backend services behind it",
        examples=[["billing", "auth", "catalog", "search", "media", "orders"]],
    )


@register
class LogReport(Family):
    """A generated service/access log in one of four formats. Easy: one count or sum with a
    filter; medium: a top-N report in an exact format with a tie-breaking rule; hard: per-window
    or per-endpoint aggregates over rotated (gzip) logs with hosts in several UTC offsets,
    stack traces and truncated entries to skip."""

    name = "log-report"
    title = "Answer questions about a service access log and write an exact report"
    category = "log-analysis"
    slots = LogSlots

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty
        fmt = rng.choice(LR_FORMATS)
        app = self.filled("app", None) or rng.choice(LR_WORDS.apps)
        zone = rng.choice(LR_WORDS.zones)
        base = rng.choice(["access.log", "requests.log", f"{app}.log", "http.log"])
        outdir = rng.choice(OUT_DIRS)
        faults: list[str] = []
        if level is HARD:
            faults = sorted(rng.sample(LR_HARD_FAULTS, rng.randint(2, 4)))
            outdir = reachable_folder(rng, outdir, OUT_DIRS)
        xz = "xz-rotation" in faults
        rotations = 4 if xz else 3  # the live log, .1, then compressed ones
        gz_part = rotations - 1
        dup_reqs: list[Req] = []
        for _ in range(60):
            w = draw_world(rng, level, self.filled("services", LR_WORDS.services))
            reqs = [
                draw_request(rng, w)
                for _ in range(pick(rng, level, (120, 220), (260, 420), (650, 950)))
            ]
            q = _lr_question(rng, w, level, reqs)
            reqs.sort(key=lambda r: r.utc)
            if level is HARD:
                bounds = sorted(rng.uniform(0.15, 0.8) for _ in range(rotations - 1))
                cuts = [int(len(reqs) * b) for b in bounds]
                for i, r in enumerate(reqs):
                    r.part = rotations - 1 - sum(1 for c in cuts if i >= c)
                    r.truncated = rng.random() < 0.03
                in_1 = [r for r in reqs if r.part == 1]
                dup_reqs = in_1[-rng.randint(3, 8) :] if "copytruncate-dup" in faults else []
            expected = _lr_answer(reqs, q, gz_part=gz_part)
            bugs = LR_BUGS[q["kind"]]
            # Each planted input fault, left unfixed, must change the answer too.
            dropped = {
                "utf16-rotation": {1},
                "olddir": set(range(1, rotations)),
                "xz-rotation": {2},
            }
            misses = [
                _lr_answer([r for r in reqs if r.part not in dropped[f]], q, gz_part=gz_part)
                for f in faults
                if f in dropped
            ]
            if dup_reqs:
                misses.append(_lr_answer(reqs + dup_reqs, q, gz_part=gz_part))
            complete = [
                log_line(r, fmt, zone)[0] for r in reqs if not r.truncated and level is HARD
            ]
            # (two identical complete entries would be one request logged twice)
            if (
                all(_lr_answer(reqs, q, b, gz_part) != expected for b in bugs)
                and all(m != expected for m in misses)
                and (level is not HARD or len(set(complete)) == len(complete))
                and expected.strip()
            ):
                break
        else:  # pragma: no cover - the traps are planted, this does not happen
            raise RuntimeError("log-report: could not draw data that exposes every near miss")
        logdir = f"/var/log/{app}"
        archive = f"{logdir}/{rng.choice(LR_ARCHIVES)}" if "olddir" in faults else None
        files: dict[str, bytes] = {}
        names = {0: base, 1: f"{base}.1", 2: f"{base}.2.{'xz' if xz else 'gz'}"}
        if rotations == 4:
            names[3] = f"{base}.3.gz"
        where = {n: (archive if archive and n else logdir) for n in names}
        parts = list(range(rotations - 1, -1, -1)) if level is HARD else [0]
        example = ""
        written: dict[int, list[str]] = {}
        for part in parts:
            lines: list[str] = []
            dup_from = None
            for r in reqs:
                if level is not HARD:
                    r.part = 0
                if r.part != part:
                    continue
                line, ts_end, status_at = log_line(r, fmt, zone)
                if dup_reqs and r is dup_reqs[0]:
                    dup_from = len(lines)
                if r.truncated:
                    line = line[: rng.randint(ts_end + 1, status_at - 1)]
                elif not example and r.status == 200:
                    example = line
                lines.append(line)
                if level is HARD and not r.truncated and r.status >= 500 and rng.random() < 0.4:
                    lines.extend(stack_trace(rng, r.svc))
                if level is HARD and rng.random() < 0.01:
                    lines.append("")
            if part == 1 and dup_from is not None:
                written[1] = lines[dup_from:]
            if part == 0 and dup_reqs:
                lines = written[1] + lines  # copytruncate: copied, then truncated too late
            text = "\n".join(lines) + "\n"
            name = names[part]
            if part == 1 and "utf16-rotation" in faults:
                data = b"\xff\xfe" + text.encode("utf-16-le")
            elif name.endswith(".gz"):
                data = gzip.compress(text.encode(), mtime=0)
            elif name.endswith(".xz"):
                data = lzma.compress(text.encode(), format=lzma.FORMAT_XZ)
            else:
                data = text.encode()
            files[f"environment/{'archive' if where[part] != logdir else 'logs'}/{name}"] = data
        out = f"{outdir}/{rng.choice(['answer', 'result', 'report', 'summary'])}"
        out += ".txt" if level is EASY else ".csv" if q.get("style") in ("csv", None) else ".txt"
        spec = _lr_spec(q)
        digests = {
            f"{where[p]}/{names[p]}": sha256_hex(
                files[f"environment/{'archive' if where[p] != logdir else 'logs'}/{names[p]}"]
            )
            for p in sorted(parts)
        }
        context: dict[str, Any] = {
            "app": app,
            "fmt": fmt,
            "logdir": logdir,
            "base": base,
            "files": [names[p] for p in parts],
            "example": example,
            "outdir": outdir,
            "out": out,
            "q": spec,
            "bugs": bugs,
            "bug_notes": [LR_BUG_NOTES[b] for b in bugs],
            "expected": expected,
            "digests": digests,
            "faults": faults,
            "hard": level is HARD,
        }
        wiring = Wiring.none()
        tags = ["logs", fmt, q["kind"]]
        if level is HARD:
            job = ImportJob.draw(rng, app, out, expected.split("\n", 1)[0], faults)
            context.update(
                job=job.context(),
                work=f"/tmp/{app}-logs",
                archive=archive,
                rotations=[
                    {"n": n, "path": f"{where[n]}/{names[n]}", "name": names[n]}
                    for n in range(rotations)
                ],
                logrotate=f"/etc/logrotate.d/{app}",
            )
            files["environment/etc/logrotate"] = _lr_logrotate(f"{logdir}/{base}", archive, xz)
            files.update(job.files())
            unfixed = near_misses(self, context, faults, difficulty=level.value)
            wiring = job.wire(faults, LR_TRAPS, unfixed)
            tags += ["logrotate", "cron"]
        answers = [expected.strip(), expected] if level is EASY else [expected]
        return text_draft(self, level, context, files, faults, wiring, answers, [out], tags)
