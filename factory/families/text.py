"""Text processing families: log reports, regex extraction, sed/awk-style transforms and
CSV/JSON wrangling.

Every family draws its data from ``rng``, computes the expected outcome here (embedded in the
hidden tests), and lists near-miss bugs per task: each mutation template renders the reference
solution with one bug switched on, and the draft checks that every bug really changes the
outcome on the generated data (redrawing or planting trap records until it does).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from factory.families.base import Draft, Family, register
from factory.vocabulary import Difficulty

EASY, MEDIUM, HARD = Difficulty.EASY, Difficulty.MEDIUM, Difficulty.HARD
AGENT_TIMEOUT = {EASY: 300.0, MEDIUM: 600.0, HARD: 900.0}

# --------------------------------------------------------------------------- shared helpers


def _mentioned(text: str, secret: str) -> bool:
    """Same rule as the leak check: a word-like secret must appear as a whole word."""
    if re.fullmatch(r"[\w.\-]+", secret):
        return re.search(rf"(?<![\w.\-]){re.escape(secret)}(?![\w\-]|\.\w)", text) is not None
    return secret in text


def _secrets(
    family: Family, context: dict[str, Any], level: Difficulty, answers: list[str]
) -> list:
    """The answers that the instruction does not mention by coincidence (a status code that
    happens to equal a count is no leak)."""
    text = family.template("instruction.md.j2").render(
        **context, difficulty=level.value, task_id="t"
    )
    return [a for a in answers if a and not _mentioned(text, a)]


def _pick(rng: random.Random, level: Difficulty, easy: Any, medium: Any, hard: Any) -> Any:
    value = {EASY: easy, MEDIUM: medium, HARD: hard}[level]
    return rng.randint(*value) if isinstance(value, tuple) else value


def _csv_text(rows: list[list[Any]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


OUT_DIRS = [
    "/root/reports",
    "/srv/reports",
    "/opt/ops/out",
    "/home/analyst/out",
    "/var/tmp/analysis",
    "/data/results",
    "/workspace/output",
    "/srv/exports",
]

# --------------------------------------------------------------------------- log-report

LR_SERVICES = [
    "billing",
    "auth",
    "catalog",
    "search",
    "checkout",
    "inventory",
    "profile",
    "notify",
    "media",
    "orders",
    "payments",
    "reports",
    "shipping",
    "ledger",
    "sessions",
    "pricing",
    "reviews",
    "accounts",
    "tracking",
    "recommend",
]
LR_RESOURCES = [
    "users",
    "orders",
    "items",
    "carts",
    "invoices",
    "tokens",
    "products",
    "reviews",
    "images",
    "accounts",
    "payments",
    "shipments",
    "coupons",
    "events",
    "sessions",
    "refunds",
    "addresses",
    "wishlists",
    "labels",
    "quotes",
    "tickets",
    "plans",
]
LR_SUBS = ["export", "batch", "summary", "lookup", "status", "history", "bulk", "preview"]
LR_ZONES = ["svc.local", "prod.internal", "corp.lan", "eu1.cluster", "int.example.net", "dc2.lan"]
LR_APPS = ["edge-proxy", "api-gateway", "frontdoor", "ingress", "lb-main", "webtier", "haproxy"]
LR_OFFSETS = [0, 60, 120, 180, -180, -240, -300, -420, 330, 540, 600, -360, 345, 480]
LR_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
LR_STATUS = {
    "GET": [(200, 70), (304, 5), (301, 2), (400, 3), (401, 3), (403, 3), (404, 8), (429, 2)]
    + [(500, 3), (502, 2), (503, 2), (504, 1)],
    "POST": [(201, 50), (200, 15), (400, 10), (409, 3), (422, 5), (500, 4), (503, 2)],
    "PUT": [(200, 60), (204, 10), (400, 8), (404, 6), (409, 4), (500, 3)],
    "DELETE": [(204, 60), (404, 15), (403, 8), (500, 4)],
}
LR_FORMATS = ["combined", "kv", "pipe", "json"]
LR_PY_ERRORS = [
    ("ValueError", "invalid literal for int() with base 10: ''"),
    ("KeyError", "'customer_id'"),
    ("TimeoutError", "upstream did not answer within 5.0s"),
    ("ConnectionResetError", "[Errno 104] Connection reset by peer"),
]
LR_JAVA_ERRORS = [
    ("java.lang.IllegalStateException", "pool exhausted"),
    ("java.net.SocketTimeoutException", "Read timed out"),
    ("java.lang.NullPointerException", 'Cannot invoke "Order.total()" on null'),
]


@dataclass
class _Req:
    utc: datetime
    svc: str
    off: int
    ip: str
    method: str
    path: str
    status: int
    nbytes: int
    ms: int
    truncated: bool = False
    part: int = 0
    """Hard: which rotated file holds it (0 = oldest, the .gz one)."""

    @property
    def local(self) -> datetime:
        return (self.utc + timedelta(minutes=self.off)).replace(tzinfo=None)

    @property
    def endpoint(self) -> str:
        return self.path.split("?", 1)[0]


def _offset(off: int, iso: bool) -> str:
    if iso and off == 0:
        return "Z"
    hh, mm = divmod(abs(off), 60)
    return f"{'+' if off >= 0 else '-'}{hh:02d}{':' if iso else ''}{mm:02d}"


def _lr_line(r: _Req, fmt: str, zone: str) -> tuple[str, int, int]:
    """(line, end of the timestamp part, start of the status field)."""
    loc = r.local
    if fmt == "combined":
        stamp = f"{loc.day:02d}/{LR_MONTHS[loc.month - 1]}/{loc.year}:{loc:%H:%M:%S}"
        head = f"{r.svc}.{zone} {r.ip} - - [{stamp} {_offset(r.off, False)}]"
        mid = f' "{r.method} {r.path} HTTP/1.1" '
        tail = f"{r.status} {r.nbytes} {r.ms / 1000:.3f}"
    elif fmt == "kv":
        head = f"ts={loc:%Y-%m-%dT%H:%M:%S}{_offset(r.off, True)}"
        mid = f" service={r.svc} client={r.ip} method={r.method} path={r.path} "
        tail = f"status={r.status} bytes={r.nbytes} duration_ms={r.ms}"
    elif fmt == "pipe":
        head = f"{loc:%Y-%m-%d %H:%M:%S} {_offset(r.off, False)} |"
        mid = f" {r.svc} | {r.ip} | {r.method} {r.path} | "
        tail = f"{r.status} | {r.nbytes} B | {r.ms} ms"
    else:
        stamp = f"{loc:%Y-%m-%dT%H:%M:%S}{_offset(r.off, True)}"
        line = json.dumps(
            {
                "ts": stamp,
                "service": r.svc,
                "client": r.ip,
                "request": f"{r.method} {r.path}",
                "status": r.status,
                "bytes": r.nbytes,
                "latency_ms": r.ms,
            }
        )
        return line, len('{"ts": "') + len(stamp) + 1, line.index('"status"')
    return head + mid + tail, len(head), len(head) + len(mid)


def _lr_trace(rng: random.Random, svc: str) -> list[str]:
    if rng.random() < 0.5:
        exc, msg = rng.choice(LR_PY_ERRORS)
        mod = rng.choice(["handlers", "views", "db", "client", "worker"])
        return [
            "Traceback (most recent call last):",
            f'  File "/srv/{svc}/app/{mod}.py", line {rng.randint(20, 400)}, in handle',
            f"    return self.{rng.choice(['process', 'dispatch', 'load'])}(request)",
            f"{exc}: {msg}",
        ]
    exc, msg = rng.choice(LR_JAVA_ERRORS)
    cls = rng.choice(["OrderService", "Repository", "HttpClient", "Handler"])
    return [f"{exc}: {msg}"] + [
        f"\tat com.example.{svc}.{cls}.{fn}({cls}.java:{rng.randint(10, 900)})"
        for fn in rng.sample(["run", "call", "apply", "execute", "fetch", "save"], 3)
    ]


def _weights(rng: random.Random, n: int) -> list[float]:
    weights = [1 / (i + 1) ** 0.7 for i in range(n)]
    rng.shuffle(weights)
    return weights


def _ip_ok(ip: str, used: list[str]) -> bool:
    return ip not in used


@dataclass
class _World:
    services: list[str]
    offsets: dict[str, int]
    endpoints: dict[str, list[tuple[str, list[str]]]]
    """service -> [(path, methods)]."""
    ips: list[str]
    prefixes: list[str]
    start: datetime
    span_min: int


def _lr_endpoint(rng: random.Random, res: str) -> str:
    v, sub = rng.randint(1, 3), rng.choice(LR_SUBS)
    return rng.choice(
        [f"/api/v{v}/{res}", f"/api/v{v}/{res}/{sub}", f"/{res}", f"/internal/{res}/{sub}"]
    )


def _lr_world(rng: random.Random, level: Difficulty) -> _World:
    services = rng.sample(LR_SERVICES, _pick(rng, level, (3, 4), (4, 5), (5, 6)))
    offs = rng.sample(LR_OFFSETS, len(services))
    if sum(1 for o in offs if o) < 2:
        offs[0], offs[1] = 120, -300
    endpoints: dict[str, list[tuple[str, list[str]]]] = {}
    used: list[str] = []
    for svc in services:
        endpoints[svc] = []
        for _ in range(rng.randint(3, 5)):
            path = _lr_endpoint(rng, rng.choice(LR_RESOURCES))
            if path in used:
                continue
            used.append(path)
            methods = ["GET"]
            for method, p in (("POST", 0.5), ("PUT", 0.25), ("DELETE", 0.2)):
                if rng.random() < p:
                    methods.append(method)
            endpoints[svc].append((path, methods))
    prefixes = []
    for _ in range(rng.randint(2, 3)):
        prefixes.append(
            rng.choice(
                [
                    f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}",
                    f"192.168.{rng.randint(0, 255)}",
                    f"172.{rng.randint(16, 31)}.{rng.randint(0, 255)}",
                    f"203.0.{rng.randint(100, 120)}",
                    f"100.{rng.randint(64, 127)}.{rng.randint(0, 255)}",
                ]
            )
        )
    ips: list[str] = []
    while len(ips) < _pick(rng, level, (12, 20), (20, 32), (24, 40)):
        ip = f"{rng.choice(prefixes)}.{rng.randint(1, 254)}"
        if _ip_ok(ip, ips):
            ips.append(ip)
    start = datetime(
        rng.randint(2022, 2025),
        rng.randint(1, 12),
        rng.randint(1, 28),
        rng.randint(0, 23),
        rng.randint(0, 59),
        tzinfo=UTC,
    )
    span = _pick(rng, level, (90, 240), (180, 480), (360, 720))
    return _World(
        services, dict(zip(services, offs, strict=True)), endpoints, ips, prefixes, start, span
    )


def _lr_request(
    rng: random.Random,
    w: _World,
    svc: str | None = None,
    path: str | None = None,
    status: int | None = None,
    ip: str | None = None,
    query_p: float = 0.25,
) -> _Req:
    if path is not None:
        svc = next(s for s, eps in w.endpoints.items() if any(p == path for p, _ in eps))
    svc = svc or rng.choices(w.services, _svc_weights(w))[0]
    if path is None:
        path, methods = rng.choice(w.endpoints[svc])
    else:
        methods = next(m for p, m in w.endpoints[svc] if p == path)
    method = rng.choices(methods, [6] + [1] * (len(methods) - 1))[0]
    if status is None:
        codes, weights = zip(*LR_STATUS[method], strict=True)
        status = rng.choices(codes, weights)[0]
    elif status in (201,):
        method = "POST" if "POST" in methods else method
    if method == "GET" and rng.random() < query_p:
        path += rng.choice(
            [f"?page={rng.randint(2, 9)}", f"?limit={rng.choice([10, 50, 100])}", "?sort=desc"]
        )
    nbytes = 0 if status in (204, 304) else int(rng.lognormvariate(7.5, 1.1)) + 40
    return _Req(
        utc=w.start + timedelta(seconds=rng.randint(0, w.span_min * 60)),
        svc=svc,
        off=w.offsets[svc],
        ip=ip or rng.choices(w.ips, _ip_weights(w))[0],
        method=method,
        path=path,
        status=status,
        nbytes=nbytes,
        ms=min(29000, int(rng.lognormvariate(4.2, 0.9)) + 2),
    )


def _svc_weights(w: _World) -> list[float]:
    return [1.0 + (i % 3) for i in range(len(w.services))]


def _ip_weights(w: _World) -> list[float]:
    return [1 / (i + 1) ** 0.6 for i in range(len(w.ips))]


def _lr_status_ok(status: int | None, cls: int) -> bool:
    return status is not None and status // 100 == cls


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


def _lr_answer(reqs: list[_Req], q: dict[str, Any], bug: str = "") -> str:
    """The expected content of the output file (with one bug switched on, the wrong one)."""
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
        use = [r for r in use if r.part != 0]

    def when(r: _Req) -> datetime:
        return r.local.replace(tzinfo=UTC) if bug == "local-time" else r.utc

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
        return _csv_text(rows)
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
    return _csv_text(rows)


LR_BUGS = {
    "status-count": ["all-services", "all-errors", "exact-code"],
    "prefix-bytes": ["loose-prefix", "all-2xx", "any-status"],
    "distinct-ips": ["count-lines", "any-4xx", "all-ips"],
    "top-clients": ["ip-as-text", "first-seen-ties", "ignore-status"],
    "top-endpoints": ["keep-query", "first-seen-ties", "split-methods"],
    "error-windows": ["local-time", "keep-truncated", "skip-rotated"],
    "latency-percentile": ["local-time", "percentile-index", "skip-rotated"],
}
LR_BUG_NOTES = {
    "all-services": "counts the status class over every service, not just the one asked",
    "all-errors": "counts every status >= 400 instead of the one class",
    "exact-code": "counts only the round code (500 / 400), not the whole class",
    "loose-prefix": "matches the prefix without its trailing slash (catches look-alike paths)",
    "all-2xx": "sums every 2xx response instead of status 200 only",
    "any-status": "ignores the status filter",
    "count-lines": "counts matching lines instead of distinct clients",
    "any-4xx": "counts clients with any 4xx status",
    "all-ips": "counts every distinct client",
    "ip-as-text": "breaks ties by comparing addresses as text",
    "first-seen-ties": "leaves ties in first-seen order (Counter.most_common)",
    "ignore-status": "ranks clients on all requests, ignoring the status filter",
    "keep-query": "keeps the query string as part of the endpoint",
    "split-methods": "counts each method+path separately",
    "local-time": "buckets by the local wall-clock time, ignoring the UTC offset",
    "keep-truncated": "counts truncated lines whose timestamp still parses",
    "skip-rotated": "reads only the plain-text files, not the compressed rotation",
    "percentile-index": "takes the value at index P*(n-1)//100 instead of the nearest rank",
}


def _lr_tie(rng: random.Random, w: _World, reqs: list[_Req], q: dict[str, Any]) -> None:
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
                reqs.append(_lr_request(rng, w, status=status, ip=key))
            else:
                reqs.append(_lr_request(rng, w, path=key, status=200, query_p=0))
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


def _lr_question(rng: random.Random, w: _World, level: Difficulty, reqs: list[_Req]) -> dict:
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
        reqs.append(_lr_request(rng, w, svc=svc, status=rng.choice(odd)))
        reqs.append(_lr_request(rng, w, svc=other, status=cls * 100 + rng.choice([0, 3, 4])))
        reqs.append(
            _lr_request(rng, w, svc=svc, status=rng.choice({5: [404, 403], 4: [500, 503]}[cls]))
        )
    elif kind == "prefix-bytes":
        svc = rng.choice(w.services)
        v = rng.randint(1, 3)
        prefix = f"/api/v{v}/"
        res = rng.sample(
            [
                x
                for x in LR_RESOURCES
                if all(x not in p for s in w.services for p, _ in w.endpoints[s])
            ],
            2,
        )
        w.endpoints[svc].append((f"{prefix}{res[0]}", ["GET", "POST"]))
        decoy = f"/api/v{v}{rng.choice(['beta', '0', '-legacy', 'x'])}/{res[1]}"
        w.endpoints[rng.choice(w.services)].append((decoy, ["GET"]))
        for _ in range(rng.randint(6, 14)):
            reqs.append(_lr_request(rng, w, path=f"{prefix}{res[0]}"))
        for _ in range(rng.randint(2, 5)):
            reqs.append(_lr_request(rng, w, path=decoy, status=200))
        reqs.append(_lr_request(rng, w, path=f"{prefix}{res[0]}", status=201))
        reqs.append(_lr_request(rng, w, path=f"{prefix}{res[0]}", status=404))
        q.update(prefix=prefix)
    elif kind == "distinct-ips":
        code = rng.choice([404, 403, 401, 429])
        q.update(code=code)
        a, b = rng.sample(w.ips, 2)
        for ip in (a, a, b):
            reqs.append(_lr_request(rng, w, status=code, ip=ip))
        holders = {r.ip for r in reqs if r.status == code}
        spare = [ip for ip in w.ips if ip not in holders and ip != b] or [b]
        reqs.append(
            _lr_request(
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
        lo = w.start + timedelta(minutes=int(w.span_min * rng.uniform(0.1, 0.3)))
        hi = lo + timedelta(minutes=int(w.span_min * rng.uniform(0.35, 0.55)))
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


@register
class LogReport(Family):
    """A generated service/access log in one of four formats. Easy: one count or sum with a
    filter; medium: a top-N report in an exact format with a tie-breaking rule; hard: per-window
    or per-endpoint aggregates over rotated (gzip) logs with hosts in several UTC offsets,
    stack traces and truncated entries to skip."""

    name = "log-report"
    title = "Answer questions about a service access log and write an exact report"
    category = "log-analysis"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty
        fmt = rng.choice(LR_FORMATS)
        app = rng.choice(LR_APPS)
        zone = rng.choice(LR_ZONES)
        base = rng.choice(["access.log", "requests.log", f"{app}.log", "http.log"])
        outdir = rng.choice(OUT_DIRS)
        for _ in range(60):
            w = _lr_world(rng, level)
            reqs = [
                _lr_request(rng, w)
                for _ in range(_pick(rng, level, (120, 220), (260, 420), (650, 950)))
            ]
            q = _lr_question(rng, w, level, reqs)
            reqs.sort(key=lambda r: r.utc)
            if level is HARD:
                cut1, cut2 = (
                    int(len(reqs) * rng.uniform(0.25, 0.35)),
                    int(len(reqs) * rng.uniform(0.6, 0.7)),
                )
                for i, r in enumerate(reqs):
                    r.part = 0 if i < cut1 else 1 if i < cut2 else 2
                    r.truncated = rng.random() < 0.03
            expected = _lr_answer(reqs, q)
            bugs = LR_BUGS[q["kind"]]
            if all(_lr_answer(reqs, q, b) != expected for b in bugs) and expected.strip():
                break
        else:  # pragma: no cover - the traps are planted, this does not happen
            raise RuntimeError("log-report: could not draw data that exposes every near miss")
        logdir = f"/var/log/{app}"
        files: dict[str, bytes] = {}
        parts = [0, 1, 2] if level is HARD else [2]
        names = {0: f"{base}.2.gz", 1: f"{base}.1", 2: base} if level is HARD else {2: base}
        example = ""
        for part in parts:
            lines: list[str] = []
            for r in reqs:
                if level is not HARD:
                    r.part = 2
                if r.part != part:
                    continue
                line, ts_end, status_at = _lr_line(r, fmt, zone)
                if r.truncated:
                    line = line[: rng.randint(ts_end + 1, status_at - 1)]
                elif not example and r.status == 200:
                    example = line
                lines.append(line)
                if level is HARD and not r.truncated and r.status >= 500 and rng.random() < 0.4:
                    lines.extend(_lr_trace(rng, r.svc))
                if level is HARD and rng.random() < 0.01:
                    lines.append("")
            data = ("\n".join(lines) + "\n").encode()
            if names[part].endswith(".gz"):
                data = gzip.compress(data, mtime=0)
            files[f"environment/logs/{names[part]}"] = data
        out = f"{outdir}/{rng.choice(['answer', 'result', 'report', 'summary'])}"
        out += ".txt" if level is EASY else ".csv" if q.get("style") in ("csv", None) else ".txt"
        spec = _lr_spec(q)
        context = {
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
            "digests": {
                f"{logdir}/{k.rsplit('/', 1)[1]}": _sha256(v) for k, v in sorted(files.items())
            },
        }
        answers = [expected.strip(), expected] if level is EASY else [expected]
        return Draft(
            context=context,
            files=files,
            secrets=_secrets(self, context, level, answers),
            outputs=[out],
            tags=["logs", fmt, q["kind"]],
            agent_timeout_sec=AGENT_TIMEOUT[level],
        )


def _sha256(data: bytes | str) -> str:
    import hashlib

    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


# --------------------------------------------------------------------------- regex-extract

RX_FIRST = ["jane", "omar", "li", "priya", "lukas", "ana", "kofi", "mei", "sven", "noor", "ivan"]
RX_FIRST += ["chloe", "mateo", "yuki", "amara", "felix", "zara", "tomas", "ines", "raj", "elif"]
RX_LAST = ["doe", "haddad", "wei", "sharma", "berg", "silva", "mensah", "tanaka", "novak"]
RX_LAST += ["okafor", "costa", "klein", "rossi", "dubois", "larsen", "moreau", "petrov", "ali"]
RX_TEAMS = ["ops", "billing", "support", "noc", "sales", "security", "infra", "payroll", "qa"]
RX_DOMAINS = ["acme", "globex", "initech", "umbrella", "hooli", "vandelay", "stark", "wayne"]
RX_DOMAINS += ["tyrell", "cyberdyne", "oscorp", "wonka", "soylent", "aperture", "massive"]
RX_TLDS = ["com", "org", "net", "io", "dev", "co.uk", "de", "com.au", "fr", "tech"]
RX_PREFIXES = ["ORD", "INV", "PO", "TKT", "SHP", "RMA", "REQ", "CASE", "BK", "SO"]
RX_WORDS = [
    "the",
    "a",
    "please",
    "see",
    "our",
    "we",
    "customer",
    "ticket",
    "reported",
    "that",
    "issue",
    "since",
    "yesterday",
    "and",
    "it",
    "was",
    "fixed",
    "after",
    "restart",
    "update",
    "rollout",
    "note",
    "also",
    "check",
    "with",
    "team",
    "on",
    "server",
    "host",
    "deploy",
    "migration",
    "failed",
    "again",
    "retry",
    "scheduled",
    "from",
    "to",
    "for",
    "about",
    "regarding",
    "follow",
    "up",
    "confirmed",
    "pending",
    "review",
    "attached",
    "log",
    "below",
    "above",
    "thanks",
    "regards",
    "hello",
    "hi",
    "meeting",
    "notes",
    "agenda",
    "action",
    "item",
    "owner",
    "status",
    "done",
    "blocked",
    "waiting",
    "vendor",
    "invoice",
    "shipment",
    "delayed",
    "warehouse",
    "incident",
    "postmortem",
    "latency",
    "spike",
    "alert",
    "cleared",
    "backup",
    "nightly",
    "job",
    "config",
    "changed",
]
RX_WRAPS = ["<{}>", "({})", '"{}"', "{},", "{}.", "{};", "[{}]", "'{}'", "({}).", "{}:", "{}!"]
RX_LEAD = "([{<\"'"
RX_TRAIL = ")]}>\"'.,;:!?"
RX_KIND_NAMES = {
    "email": "email",
    "order": "order_id",
    "endpoint": "endpoint",
    "date": "date",
    "version": "version",
}
RX_BUGS = ["edges", "validation", "listing"]
RX_BUG_NOTES = {
    "edges": "splits on whitespace but does not strip the surrounding punctuation",
    "validation": "accepts anything shaped roughly like an item (no range/calendar/label rules)",
    "listing": {
        "easy": "drops repeated items",
        "medium": "keeps repeated items",
        "hard": "counts raw spellings before normalising them",
    },
}
RX_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

_EMAIL = re.compile(
    r"[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}"
)
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)"
_ENDPOINT = re.compile(
    rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}:(?:[1-9]\d{{0,3}}|[1-5]\d{{4}}|6[0-4]\d{{3}}"
    r"|65[0-4]\d\d|655[0-2]\d|6553[0-5])"
)
_VERSION = re.compile(
    r"[vV]?(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?"
)


def _rx_date(token: str, hard: bool) -> str | None:
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)", token)
    y = mo = d = None
    if m:
        y, mo, d = (int(x) for x in m.groups())
    elif hard and (m := re.fullmatch(r"(\d\d)/(\d\d)/(\d{4})", token)):
        d, mo, y = (int(x) for x in m.groups())
    elif hard and (m := re.fullmatch(r"(\d\d)-([A-Za-z]{3})-(\d{4})", token)):
        if m.group(2).lower() not in RX_MONTHS:
            return None
        d, mo, y = int(m.group(1)), RX_MONTHS.index(m.group(2).lower()) + 1, int(m.group(3))
    else:
        return None
    try:
        return date(y, mo, d).isoformat()
    except ValueError:
        return None


def _rx_strict(kind: str, token: str, pfx: str, hard: bool) -> str | None:
    """The normalised item when ``token`` is a valid item of ``kind``, else None."""
    if kind == "email":
        return token.lower() if _EMAIL.fullmatch(token) else None
    if kind == "order":
        flags = re.IGNORECASE if hard else 0
        return token.upper() if re.fullmatch(rf"{pfx}-\d{{4}}-\d{{6}}", token, flags) else None
    if kind == "endpoint":
        return token if _ENDPOINT.fullmatch(token) else None
    if kind == "date":
        return _rx_date(token, hard)
    if _VERSION.fullmatch(token) and (hard or token[0] not in "vV"):
        return token.lstrip("vV")
    return None


def _rx_loose(kind: str, token: str, pfx: str, hard: bool) -> str | None:
    """The near miss: the rough shape is enough."""
    strict = _rx_strict(kind, token, pfx, hard)
    if strict is not None:
        return strict
    if kind == "order":
        m = re.search(rf"{pfx}-\d+-\d+", token, re.IGNORECASE)
        return m.group(0).upper() if m else None
    shapes = {
        "email": r"[^\s@]+@[^\s@]+",
        "endpoint": r"\d+\.\d+\.\d+\.\d+:\d+",
        "date": r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{4}|\d{1,2}-[A-Za-z]{3}-\d{4}",
        "version": r"[vV]?\d+(?:\.\d+)+(?:-[0-9A-Za-z.]+)?",
    }
    return token if re.fullmatch(shapes[kind], token) else None


def _rx_items(
    texts: list[str], kinds: list[str], pfx: str, level: Difficulty, bug: str = ""
) -> list[tuple[str, str, str]]:
    """(kind, raw token, value) of every item, in reading order."""
    hard = level is HARD
    found = []
    for text in texts:
        for raw in text.split():
            token = raw if bug == "edges" else raw.lstrip(RX_LEAD).rstrip(RX_TRAIL)
            for kind in kinds:
                check = _rx_loose if bug == "validation" else _rx_strict
                value = check(kind, token, pfx, hard)
                if value is not None:
                    found.append((kind, token, value))
                    break
    return found


def _rx_output(texts: list[str], kinds: list[str], pfx: str, level: Difficulty, bug: str = ""):
    found = _rx_items(texts, kinds, pfx, level, bug)
    listing = bug == "listing"
    if level is EASY:
        values = [v for _, _, v in found]
        return "".join(f"{v}\n" for v in (dict.fromkeys(values) if listing else values))
    if level is MEDIUM:
        values = sorted(v for _, _, v in found)
        return "".join(f"{v}\n" for v in (values if listing else dict.fromkeys(values)))
    if listing:
        raw = Counter((k, t) for k, t, _ in found)
        norm = {(k, t): v for k, t, v in found}
        rows = sorted((RX_KIND_NAMES[k], norm[(k, t)], n) for (k, t), n in raw.items())
    else:
        counts = Counter((RX_KIND_NAMES[k], v) for k, _, v in found)
        rows = sorted((k, v, n) for (k, v), n in counts.items())
    return _csv_text([["kind", "value", "count"], *[list(r) for r in rows]])


def _rx_valid(rng: random.Random, kind: str, pfx: str) -> str:
    """A canonical valid item."""
    if kind == "email":
        first, last = rng.choice(RX_FIRST), rng.choice(RX_LAST)
        local = rng.choice(
            [
                f"{first}.{last}",
                f"{first[0]}{last}",
                f"{first}_{last}",
                f"{first}+{rng.choice(RX_TEAMS)}",
                f"{rng.choice(RX_TEAMS)}-{rng.choice(['alerts', 'desk', 'team', 'oncall'])}",
                f"{first}{rng.randint(1, 99)}",
            ]
        )
        sub = rng.choice(["", "", "mail.", "eu.", "corp-"])
        dom = f"{sub}{rng.choice(RX_DOMAINS)}"
        return f"{local}@{dom}.{rng.choice(RX_TLDS)}"
    if kind == "order":
        return f"{pfx}-{rng.randint(2018, 2026)}-{rng.randint(1, 999999):06d}"
    if kind == "endpoint":
        ip = rng.choice(
            [
                f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                f"172.{rng.randint(16, 31)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            ]
        )
        port = rng.choice([22, 80, 443, 3000, 5432, 6379, 8080, 8443, 9090, 27017, 11211])
        return f"{ip}:{port if rng.random() < 0.6 else rng.randint(1024, 65535)}"
    if kind == "date":
        day = date(rng.randint(2015, 2030), 1, 1) + timedelta(days=rng.randint(0, 364))
        return day.isoformat()
    pre = rng.choice(["", "", "", "-rc.1", "-beta.2", "-alpha", "-rc2"])
    return f"{rng.randint(0, 12)}.{rng.randint(0, 30)}.{rng.randint(0, 60)}{pre}"


def _rx_variant(rng: random.Random, kind: str, value: str) -> str:
    """Hard: another spelling of the same item (normalises back to ``value``)."""
    if kind == "email":
        local, dom = value.split("@")
        return rng.choice([f"{local.capitalize()}@{dom}", f"{local}@{dom.upper()}", value.upper()])
    if kind == "order":
        return rng.choice([value.lower(), value.capitalize()])
    if kind == "date":
        y, m, d = value.split("-")
        mon = RX_MONTHS[int(m) - 1]
        return rng.choice([f"{d}/{m}/{y}", f"{d}-{mon.capitalize()}-{y}", f"{d}-{mon.upper()}-{y}"])
    if kind == "version":
        return rng.choice(["v", "V"]) + value
    return value


RX_DECOYS = {
    "email": ["double-dot", "dot-end", "no-dot-domain", "short-tld", "hyphen-label", "underscore"],
    "order": ["five-digits", "seven-digits", "short-year", "letter-prefix", "letter-suffix"],
    "endpoint": ["octet-range", "port-range", "port-zero", "leading-zero"],
    "date": ["bad-day", "bad-month", "unpadded"],
    "version": ["two-part", "four-part", "leading-zero"],
}


def _rx_decoy(rng: random.Random, kind: str, kind_of: str, pfx: str, hard: bool) -> str:
    """An almost-item of ``kind`` (decoy type ``kind_of``) that the rules reject."""
    if kind == "email":
        first, last = rng.choice(RX_FIRST), rng.choice(RX_LAST)
        dom = f"{rng.choice(RX_DOMAINS)}.{rng.choice(['com', 'org', 'net'])}"
        return {
            "double-dot": f"{first}..{last}@{dom}",
            "dot-end": f"{first}.@{dom}",
            "no-dot-domain": f"{first}@{rng.choice(['localhost', 'intranet', 'mailhost'])}",
            "short-tld": f"{first}.{last}@{rng.choice(RX_DOMAINS)}.{rng.choice('cxz')}",
            "hyphen-label": f"{last}@{rng.choice(['-', ''])}{rng.choice(RX_DOMAINS)}-.com",
            "underscore": f"{first}@{rng.choice(RX_DOMAINS)}_{rng.choice(RX_TEAMS)}.com",
        }[kind_of]
    if kind == "order":
        y, n = rng.randint(2018, 2026), rng.randint(1, 99999)
        return {
            "five-digits": f"{pfx}-{y}-{n:05d}",
            "seven-digits": f"{pfx}-{y}-{n:07d}",
            "short-year": f"{pfx}-{y % 100:02d}-{n:06d}",
            "letter-prefix": f"{rng.choice('XQZ')}{pfx}-{y}-{n:06d}",
            "letter-suffix": f"{pfx}-{y}-{n:06d}{rng.choice('abx')}",
        }[kind_of]
    if kind == "endpoint":
        o = [rng.randint(1, 254) for _ in range(4)]
        port = rng.choice([80, 443, 8080, 5432])
        if kind_of == "octet-range":
            o[rng.randint(0, 3)] = rng.randint(256, 999)
        elif kind_of == "leading-zero":
            i = rng.randint(1, 3)
            o[i] = f"0{rng.randint(0, 99)}"  # type: ignore[call-overload]
        elif kind_of == "port-range":
            port = rng.randint(65536, 99999)
        else:
            port = 0
        return ".".join(str(x) for x in o) + f":{port}"
    if kind == "date":
        y = rng.choice([2019, 2021, 2022, 2023, 2025])
        if kind_of == "bad-day":
            m, d = rng.choice([(2, 29), (2, 30), (4, 31), (6, 31), (9, 31), (11, 31)])
        elif kind_of == "bad-month":
            m, d = rng.choice([13, 14, 0, 20]), rng.randint(1, 28)
        else:
            m, d = rng.randint(1, 9), rng.randint(1, 9)
            return f"{y}-{m}-{d}"
        if hard and rng.random() < 0.5 and m <= 12:
            return f"{d:02d}/{m:02d}/{y}"
        return f"{y}-{m:02d}-{d:02d}"
    a, b, c = rng.randint(0, 9), rng.randint(1, 9), rng.randint(0, 40)
    return {
        "two-part": f"{a}.{b}",
        "four-part": f"{a}.{b}.{c}.{rng.randint(0, 9)}",
        "leading-zero": f"{a}.0{b}.{c}",
    }[kind_of]


def _rx_sentence(rng: random.Random, items: list[str], corpus: str) -> str:
    words = [rng.choice(RX_WORDS) for _ in range(rng.randint(5, 12))]
    if rng.random() < 0.3:
        words.insert(rng.randint(0, len(words)), str(rng.randint(2, 9999)))
    for item in items:
        words.insert(rng.randint(0, len(words)), item)
    words[0] = words[0].capitalize()
    prefix = rng.choice(RX_PREFIXES_BY_CORPUS[corpus]).format(
        who=rng.choice(RX_FIRST), hh=f"{rng.randint(0, 23):02d}", mm=f"{rng.randint(0, 59):02d}"
    )
    return (f"{prefix} " if prefix else "") + " ".join(words) + rng.choice([".", ".", "!", "?", ""])


RX_CORPORA = [
    ("support tickets", "/srv/support/tickets", ["ticket-{n}.txt"]),
    ("mail archive", "/var/mail/archive", ["{y}-{m:02d}-{w}.eml"]),
    ("chat export", "/srv/chat/export", ["{w}.log", "channel-{w}.log"]),
    ("team notes", "/home/analyst/notes", ["{w}.md", "{w}-notes.md"]),
    ("incident reports", "/opt/incidents", ["inc-{n}.txt", "{w}-report.txt"]),
]
RX_PREFIXES_BY_CORPUS = {
    "support tickets": ["Customer:", "Agent:", "Update:", "Internal note:", "", ""],
    "mail archive": ["Subject:", ">", "> >", "", "", "PS:"],
    "chat export": ["<{who}>", "[{hh}:{mm}] {who}:", "* {who}"],
    "team notes": ["-", "*", "TODO:", "", "##"],
    "incident reports": ["Impact:", "Timeline:", "Root cause:", "Action item:", ""],
}
RX_DIRS = ["2023", "2024", "archive", "team-a", "team-b", "escalated", "old", "inbox"]


@register
class RegexExtract(Family):
    """Messy text files with items (emails, order ids, ip:port endpoints, dates, versions)
    in the middle of prose, wrapped in punctuation. Easy: one kind in one file, every
    occurrence in order; medium: several files, near-miss decoys, distinct sorted values;
    hard: two kinds over a nested tree, more decoys, spellings to normalise and counts."""

    name = "regex-extract"
    title = "Extract and normalise structured items from messy text files"
    category = "text-processing"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty
        hard = level is HARD
        corpus, root, patterns = rng.choice(RX_CORPORA)
        kinds = rng.sample(list(RX_DECOYS), 2 if hard else 1)
        kinds.sort(key=list(RX_DECOYS).index)
        pfx = rng.choice(RX_PREFIXES)
        outdir = rng.choice(OUT_DIRS)
        for _ in range(40):
            names: list[str] = []
            n_files = _pick(rng, level, (1, 1), (3, 5), (5, 8))
            while len(names) < n_files:
                name = rng.choice(patterns).format(
                    n=rng.randint(100, 9999),
                    y=rng.randint(2021, 2025),
                    m=rng.randint(1, 12),
                    w=rng.choice(RX_TEAMS + ["general", "random", "releases", "oncall"]),
                )
                if hard and rng.random() < 0.7:
                    name = f"{rng.choice(RX_DIRS)}/{name}"
                if hard and rng.random() < 0.25:
                    name = f"{rng.choice(RX_DIRS)}/{name}"
                if name not in names:
                    names.append(name)
            # the items, then the decoys, each with the file it goes to
            planted: list[tuple[int, str, bool]] = []
            per_kind = _pick(rng, level, (6, 10), (10, 18), (10, 18))
            for kind in kinds:
                values = [_rx_valid(rng, kind, pfx) for _ in range(per_kind)]
                for value in values:
                    planted.append((rng.randrange(n_files), value, True))
                for value in rng.sample(values, 2):  # repeats (other spellings when hard)
                    raw = _rx_variant(rng, kind, value) if hard else value
                    planted.append((rng.randrange(n_files), raw, True))
                n_decoys = _pick(rng, level, (2, 3), (4, 6), (5, 8))
                types = rng.sample(RX_DECOYS[kind], 1 if level is EASY else 3)
                if hard:
                    types = rng.sample(RX_DECOYS[kind], len(RX_DECOYS[kind]))
                for i in range(n_decoys):
                    decoy = _rx_decoy(rng, kind, types[i % len(types)], pfx, hard)
                    planted.append((rng.randrange(n_files), decoy, False))
            rng.shuffle(planted)
            # wrap some of them in punctuation (always at least one valid item)
            tokens = []
            first = next(i for i, p in enumerate(planted) if p[2])
            for i, (f, item, _) in enumerate(planted):
                if i == first or rng.random() < 0.35:
                    item = rng.choice(RX_WRAPS).format(item)
                tokens.append((f, item))
            texts = []
            for f in range(n_files):
                mine = [t for g, t in tokens if g == f]
                lines = []
                while mine or len(lines) < 6:
                    take = [mine.pop(0) for _ in range(min(len(mine), rng.choice([0, 1, 1, 2])))]
                    lines.append(_rx_sentence(rng, take, corpus))
                    if rng.random() < 0.15:
                        lines.append("")
                eol = "\r\n" if hard and rng.random() < 0.3 else "\n"
                texts.append(eol.join(lines) + eol)
            expected = _rx_output(texts, kinds, pfx, level)
            found = _rx_items(texts, kinds, pfx, level)
            sane = len(found) == sum(1 for p in planted if p[2])
            if sane and all(_rx_output(texts, kinds, pfx, level, b) != expected for b in RX_BUGS):
                break
        else:  # pragma: no cover
            raise RuntimeError("regex-extract: could not draw data that exposes every near miss")
        out = f"{outdir}/{'items' if hard else kinds[0] + 's'}.{'csv' if hard else 'txt'}"
        files = {
            f"environment/corpus/{name}": text for name, text in zip(names, texts, strict=True)
        }
        context = {
            "corpus": corpus,
            "root": root,
            "names": names,
            "kinds": kinds,
            "kind_names": RX_KIND_NAMES,
            "pfx": pfx,
            "outdir": outdir,
            "out": out,
            "expected": expected,
            "bugs": RX_BUGS,
            "bug_notes": [
                RX_BUG_NOTES["edges"],
                RX_BUG_NOTES["validation"],
                RX_BUG_NOTES["listing"][level.value],  # type: ignore[index]
            ],
            "digests": {f"{root}/{n}": _sha256(t) for n, t in zip(names, texts, strict=True)},
        }
        return Draft(
            context=context,
            files=files,
            secrets=_secrets(self, context, level, [expected]),
            outputs=[out],
            tags=["regex", *kinds],
            agent_timeout_sec=AGENT_TIMEOUT[level],
        )


# --------------------------------------------------------------------------- text-transform

TT_FIRST = ["Mary Ann", "John", "Aiko", "Pedro", "Fatima", "Lars", "Grace", "Chen", "Olga"]
TT_FIRST += ["Kwame", "Sofia", "Jean Luc", "Hannah", "Ravi", "Elena", "Tomasz", "Nia", "Diego"]
TT_LAST = ["Lee", "van der Berg", "Okonkwo", "Smith", "Garcia Lopez", "Nakamura", "Ivanova"]
TT_LAST += ["Murphy", "da Silva", "Kowalski", "Haddad", "Nguyen", "O'Brien", "Schmidt", "Patel"]
TT_CITIES = ["New York", "Oslo", "Rio de Janeiro", "Lyon", "Cape Town", "Osaka", "Austin"]
TT_CITIES += ["Kuala Lumpur", "Porto", "Leeds", "San Jose", "Tallinn", "Buenos Aires", "Graz"]
TT_DEPTS = ["Finance", "Research", "Sales", "Legal", "Operations", "IT Support", "Marketing"]
TT_PRODUCTS = ["Blue Widget XL", "Steel Bracket", "Hex Bolt M8", "Cable Tie Pack", "Gear Oil"]
TT_PRODUCTS += ["Copper Pipe", "Safety Gloves", "LED Panel", "Drill Bit Set", "Pallet Wrap"]
TT_HARD_PRODUCTS = ['Pipe 12" steel', "Bolts, M8 (100 pcs)", 'Hose 3/4" x 50 ft', "Nuts, hex"]
TT_COMPANIES = ["Globex", "Initech", "Stark & Sons", "Wayne Logistics", "Umbrella Trading"]
TT_COMPANIES += ["Vandelay Imports", "Hooli", "Tyrell Freight", "Soylent Foods", "Acme Tools"]
TT_HARD_COMPANIES = ["Acme, Inc.", 'The "Blue" Shop', "Smith, Jones & Co", "Kiwi, Ltd."]
TT_SCHEMAS = {
    "staff": [
        ("id", "EMP ID", "int"),
        ("name", "NAME", "name"),
        ("dept", "DEPARTMENT", "dept"),
        ("city", "OFFICE", "city"),
        ("start_date", "START DATE", "date"),
        ("salary", "SALARY", "amount"),
    ],
    "inventory": [
        ("sku", "SKU", "code"),
        ("description", "DESCRIPTION", "product"),
        ("warehouse", "WAREHOUSE", "city"),
        ("quantity", "QTY", "int"),
        ("updated", "LAST UPDATE", "date"),
        ("unit_price", "UNIT PRICE", "amount"),
    ],
    "shipments": [
        ("tracking", "TRACKING NO", "code"),
        ("customer", "CUSTOMER", "company"),
        ("origin", "FROM", "city"),
        ("destination", "TO", "city"),
        ("shipped", "SHIPPED", "date"),
        ("charge", "CHARGE", "amount"),
    ],
    "accounts": [
        ("account", "ACCOUNT", "code"),
        ("holder", "HOLDER", "name"),
        ("branch", "BRANCH", "city"),
        ("opened", "OPENED", "date"),
        ("balance", "BALANCE", "amount"),
    ],
}
TT_DATE_FORMATS = {"dmy-dot": "DD.MM.YYYY", "mdy-slash": "MM/DD/YYYY", "dmy-dash": "DD-MM-YYYY"}
TT_REPORT_BUGS = {
    "easy": ["split-on-spaces", "no-trim", "keep-ruler"],
    "medium": ["date-order", "keep-page-headers", "split-on-spaces"],
    "hard": ["no-quoting", "amount-sign", "date-order"],
}
TT_CONFIG_BUGS = {
    "easy": ["substring", "first-only", "reserialize"],
    "medium": ["substring", "all-sections", "reserialize"],
    "hard": ["touch-comments", "touch-backups", "all-sections"],
}
TT_BUG_NOTES = {
    "split-on-spaces": "splits rows on whitespace (awk style) instead of by character position",
    "no-trim": "cuts the columns but keeps the padding spaces",
    "keep-ruler": "treats the ruler line as a data row",
    "date-order": "reads the date with day and month swapped",
    "keep-page-headers": "treats every non-blank line after the first ruler as a data row",
    "no-quoting": "joins fields with commas without CSV quoting",
    "amount-sign": "drops the parentheses of negative amounts, losing the sign",
    "substring": "replaces the name as a substring everywhere (sed s/old/new/g)",
    "first-only": "renames only the first occurrence",
    "reserialize": "rewrites the file with configparser (comments and layout lost)",
    "all-sections": "sets the value in every section, not only the one asked",
    "touch-comments": "also rewrites commented-out settings",
    "touch-backups": "also edits the backup/example files",
}


def _tt_value(rng: random.Random, typ: str, hard: bool) -> str:
    if typ == "int":
        return str(rng.randint(1, 99999))
    if typ == "name":
        return f"{rng.choice(TT_FIRST)} {rng.choice(TT_LAST)}"
    if typ == "dept":
        return rng.choice(TT_DEPTS)
    if typ == "city":
        return rng.choice(TT_CITIES)
    if typ == "code":
        return f"{rng.choice(['SKU', 'TRK', 'AC', 'ZX'])}-{rng.randint(10000, 999999)}"
    if typ == "product":
        return rng.choice(TT_HARD_PRODUCTS if hard and rng.random() < 0.3 else TT_PRODUCTS)
    if typ == "company":
        return rng.choice(TT_HARD_COMPANIES if hard and rng.random() < 0.3 else TT_COMPANIES)
    raise ValueError(typ)


def _tt_date_text(day: date, fmt: str) -> str:
    return {
        "dmy-dot": f"{day.day:02d}.{day.month:02d}.{day.year}",
        "mdy-slash": f"{day.month:02d}/{day.day:02d}/{day.year}",
        "dmy-dash": f"{day.day:02d}-{day.month:02d}-{day.year}",
    }[fmt]


def _tt_amount_text(cents: int, hard: bool) -> str:
    text = f"{abs(cents) / 100:,.2f}" if hard else f"{abs(cents) / 100:.2f}"
    return f"({text})" if cents < 0 else text


def _tt_parse_report(text: str, spec: dict[str, Any], bug: str = "") -> list[list[str]]:
    """The CSV rows (header first) the reference solution writes, with one bug on."""
    cols, out_cols, level = spec["cols"], spec["out_cols"], spec["level"]
    lines = text.split("\n")[:-1]
    rows = []
    seen_ruler = False
    for idx, line in enumerate(lines):
        s = line.lstrip("\f")
        ruler = bool(s.strip()) and set(s) <= {"-", " "}
        if bug == "keep-ruler":
            if idx == 0:
                continue
        elif not seen_ruler:
            seen_ruler = ruler
            continue
        if not s.strip():
            continue
        if bug != "keep-page-headers":
            if ruler and bug != "keep-ruler":
                continue
            if s.rstrip() == spec["header"].rstrip() or s.startswith(spec["title"]):
                continue
            if s.startswith("Total:") or s.startswith("#"):
                continue
        if bug == "split-on-spaces":
            cells = (s.split() + [""] * len(cols))[: len(cols)]
        else:
            cells = [s[a:b] if bug == "no-trim" else s[a:b].strip() for a, b in cols]
        rows.append(cells)
    out = [[c["name"] for c in out_cols]]
    for cells in rows:
        row = []
        for c in out_cols:
            value = cells[c["src"]]
            if c["kind"] == "date" and level != "easy" and value.strip():
                parts = re.split(r"[./-]", value.strip())
                if len(parts) == 3:
                    a, b, y = parts
                    d, m = (b, a) if spec["date_format"] == "mdy-slash" else (a, b)
                    if bug == "date-order":
                        d, m = m, d
                    value = f"{y}-{m}-{d}"
            elif c["kind"] == "amount" and level == "hard" and value:
                negative = value.startswith("(") and bug != "amount-sign"
                value = ("-" if negative else "") + value.strip("()").replace(",", "")
            row.append(value)
        out.append(row)
    if bug == "no-quoting":
        return list(csv.reader(io.StringIO("".join(",".join(r) + "\n" for r in out))))
    return out


def _tt_report(rng: random.Random, level: Difficulty) -> dict[str, Any]:
    hard = level is HARD
    dataset = rng.choice(list(TT_SCHEMAS))
    schema = TT_SCHEMAS[dataset]
    date_format = rng.choice(list(TT_DATE_FORMATS))
    n_rows = _pick(rng, level, (8, 14), (25, 40), (30, 50))
    records = []
    for _ in range(n_rows):
        rec = []
        for _key, _title, typ in schema:
            if typ == "date":
                day = date(rng.randint(2005, 2024), 1, 1) + timedelta(days=rng.randint(0, 364))
                rec.append(_tt_date_text(day, date_format))
            elif typ == "amount":
                cents = rng.randint(100, 25000000)
                if hard and rng.random() < 0.2:
                    cents = -cents
                rec.append(_tt_amount_text(cents, hard))
            elif typ == "city" and hard and rng.random() < 0.1:
                rec.append("")
            else:
                rec.append(_tt_value(rng, typ, hard))
        records.append(rec)
    # traps the near misses need: a negative amount, a value to quote, a date with day != month
    types = [t for _, _, t in schema]
    if hard:
        records[rng.randrange(n_rows)][types.index("amount")] = _tt_amount_text(
            -rng.randint(100, 9999999), True
        )
        quoted = next((i for i, t in enumerate(types) if t in ("name", "company", "product")))
        pool = {
            "name": [f"{rng.choice(TT_LAST)}, {rng.choice(TT_FIRST)}"],
            "company": TT_HARD_COMPANIES,
            "product": TT_HARD_PRODUCTS,
        }[types[quoted]]
        records[rng.randrange(n_rows)][quoted] = rng.choice(pool)
    widths = [
        max(len(title), *(len(r[i]) for r in records)) + rng.randint(2, 4)
        for i, (_, title, _) in enumerate(schema)
    ]
    right = [t in ("int", "amount") for t in types]

    def fmt_line(cells: list[str]) -> str:
        return "".join(
            c.rjust(w - 2) + "  " if r else c.ljust(w)
            for c, w, r in zip(cells, widths, right, strict=True)
        ).rstrip()

    cols, pos = [], 0
    for w in widths:
        cols.append((pos, pos + w))
        pos += w
    header = fmt_line([title for _, title, _ in schema])
    ruler = " ".join("-" * (w - 1) for w in widths)
    company = rng.choice(["ACME CORP", "NORTHWIND", "CONTOSO", "FABRIKAM", "GLOBEX"])
    title = f"{company} {dataset.upper()} REPORT"
    lines = []
    per_page = n_rows if level is EASY else rng.randint(9, 14)
    for i, rec in enumerate(records):
        if i % per_page == 0:
            if level is not EASY:
                page = f"{title}{' ' * rng.randint(6, 20)}PAGE {i // per_page + 1}"
                lines += [("\f" if i else "") + page, ""]
            lines += [header, ruler]
        if hard and rng.random() < 0.06:
            lines.append(f"# corrected by {rng.choice(['ops', 'audit', 'jdoe'])} on re-run")
        lines.append(fmt_line(rec))
    if level is not EASY:
        lines += ["", f"Total: {n_rows} records"]
    text = "\n".join(lines) + "\n"
    src_cols = [
        {"name": key, "title": title_, "kind": typ, "src": i, "start": a + 1, "end": b}
        for i, ((key, title_, typ), (a, b)) in enumerate(zip(schema, cols, strict=True))
    ]
    if level is EASY:
        out_cols = src_cols
    else:
        must = [c for c in src_cols if c["kind"] in ("date", "amount")]
        if hard:
            must.append(src_cols[quoted])
        rest = [c for c in src_cols if c not in must]
        out_cols = must + rng.sample(rest, rng.randint(1, len(rest)))
        rng.shuffle(out_cols)
    # the last column runs to the end of the line
    cols[-1] = (cols[-1][0], max(len(x) for x in lines))
    src_cols[-1]["end"] = None
    spec = {
        "cols": cols,
        "out_cols": out_cols,
        "level": level.value,
        "header": header,
        "title": title,
        "date_format": date_format,
    }
    return {
        "dataset": dataset,
        "text": text,
        "spec": spec,
        "src_cols": src_cols,
        "records": records,
        "date_format_doc": TT_DATE_FORMATS[date_format],
    }


TT_APPS = ["orion", "hermes", "atlas", "nimbus", "quartz", "falcon", "zephyr", "tundra", "vega"]
TT_SECTIONS = ["database", "cache", "server", "logging", "queue", "auth", "metrics", "storage"]
TT_SECTIONS += ["smtp", "scheduler", "api", "worker"]
TT_RENAMES = [
    ("timeout", "timeout_ms", "request_timeout"),
    ("retries", "retries_backoff", "max_retries"),
    ("user", "user_agent", "username"),
    ("ttl", "ttl_jitter", "expire_after"),
    ("workers", "workers_max", "worker_count"),
    ("buffer", "buffer_size", "queue_buffer"),
    ("path", "path_prefix", "data_dir"),
    ("limit", "limit_burst", "rate_limit"),
    ("interval", "interval_jitter", "poll_interval"),
    ("secret", "secret_file", "api_secret"),
    ("url", "url_fallback", "upstream_url"),
    ("pool", "pool_size", "pool_name"),
]
TT_SETS = [
    ("log_level", ["info", "debug", "error"], "warn"),
    ("max_size", ["64M", "128M", "1G"], "256M"),
    ("port", ["5432", "6379", "8080", "9000"], "6543"),
    ("mode", ["relaxed", "auto", "passive"], "strict"),
    ("enabled", ["true", "yes"], "false"),
    ("batch", ["50", "100", "1000"], "500"),
    ("compress", ["false", "no"], "true"),
    ("region", ["us-east-1", "eu-central-1"], "eu-west-3"),
]
TT_DELETES = ["debug", "legacy_mode", "trace_sql", "dev_banner", "insecure_skip_verify"]
TT_FILLERS = {
    "host": ["db1.internal", "10.0.4.12", "cache.local", "mq.prod", "localhost"],
    "name": ["primary", "reports", "edge", "main"],
    "format": ["json", "text", "logfmt"],
    "driver": ["postgres", "redis", "sqlite", "kafka"],
    "verify_tls": ["true", "false"],
    "lifetime": ["30m", "1h", "90s"],
    "codec": ["zstd", "gzip", "none"],
    "owner": ["ops", "platform", "data"],
    "threads": ["2", "4", "8", "16"],
    "listen": ["0.0.0.0:8080", "127.0.0.1:9100", "[::]:443"],
    "charset": ["utf8", "latin1"],
    "backlog": ["128", "512", "1024"],
}
TT_COMMENTS = [
    "# managed by ops, changes need a ticket",
    "# see the runbook before editing",
    "; values below were tuned in the last load test",
    "# keep in sync with the staging file",
    "; do not commit secrets here",
]


def _tt_rename_value(rng: random.Random, key: str, hard: bool) -> str:
    if "_" in key:  # the look-alike sibling (timeout_ms, pool_size, ...)
        return rng.choice([str(rng.randint(2, 900)), rng.choice(["on", "off", "auto"])])
    if key in ("secret",) and hard:
        return rng.choice(['"k#9=Zq"', '"p=w#d"', '"a;b#c"'])
    return {
        "timeout": str(rng.randint(5, 120)),
        "retries": str(rng.randint(1, 9)),
        "user": rng.choice(["svc_app", "reader", "etl"]),
        "ttl": str(rng.choice([60, 300, 3600])),
        "workers": str(rng.randint(2, 32)),
        "buffer": rng.choice(["4k", "64k", "1M"]),
        "path": rng.choice(["/var/lib/app", "/srv/data", "/tmp/spool"]),
        "limit": str(rng.randint(10, 5000)),
        "interval": rng.choice(["5s", "30s", "2m"]),
        "secret": rng.choice(["changeme", "s3cr3t", "vault:app/key"]),
        "url": rng.choice(["http://10.0.0.5:8000", "https://api.internal/v2"]),
        "pool": rng.choice(["default", "bulk", "fast"]),
    }[key]


@dataclass
class _Cfg:
    name: str
    live: bool
    items: list[dict[str, Any]]


def _tt_kv(rng: random.Random, section: str, key: str, value: str, hard: bool) -> dict:
    indent, sep = "", " = "
    if hard:
        indent = rng.choice(["", "", "", "    ", "\t"])
        sep = rng.choice([" = ", " = ", "=", " =", "= ", "  =  "])
    inline = ""
    if hard and rng.random() < 0.2:
        inline = rng.choice(
            ["  # default", " # tuned", "\t# see ticket OPS-" + str(rng.randint(10, 999))]
        )
    return {
        "t": "kv",
        "section": section,
        "indent": indent,
        "key": key,
        "sep": sep,
        "value": value,
        "inline": inline,
    }


def _tt_render(items: list[dict[str, Any]]) -> str:
    lines = []
    for it in items:
        if it["t"] == "kv":
            lines.append(f"{it['indent']}{it['key']}{it['sep']}{it['value']}{it['inline']}")
        else:
            lines.append(it["text"])
    return "\n".join(lines) + "\n"


def _tt_config(rng: random.Random, level: Difficulty) -> dict[str, Any]:
    hard = level is HARD
    app = rng.choice(TT_APPS)
    old, sibling, new = rng.choice(TT_RENAMES)
    k3, k3_values, v3 = rng.choice(TT_SETS)
    k4 = rng.choice(TT_DELETES)
    sections = rng.sample(TT_SECTIONS, 6)
    s3, s4 = sections[0], sections[1]
    n_files = _pick(rng, level, (1, 1), (3, 4), (3, 5))
    names = rng.sample(
        ["main", "database", "cache", "workers", "edge", "reporting", "batch", "api"], n_files
    )
    cfgs: list[_Cfg] = []
    for fi, fname in enumerate(names):
        file_sections = rng.sample(sections, rng.randint(3, 4))
        if fi == 0 and s3 not in file_sections:
            file_sections[0] = s3
        if fi == 0 and hard and s4 not in file_sections:
            file_sections[1 if file_sections[0] == s3 else 0] = s4
        items: list[dict[str, Any]] = [
            {"t": "comment", "text": f"# {app} configuration ({fname})"},
            {"t": "comment", "text": rng.choice(TT_COMMENTS)},
            {"t": "blank", "text": ""},
        ]
        for si, sec in enumerate(file_sections):
            keys = rng.sample(list(TT_FILLERS), rng.randint(2, 4))
            # planted keys: the one to rename (in most sections of the files that have it)
            has_old = (fi == 0) or (fi == 1 and n_files > 2) or rng.random() < 0.4
            if fi == n_files - 1 and n_files > 2:
                has_old = False  # a live file with nothing to rename
            if has_old and (si < 2 or rng.random() < 0.5):
                keys.insert(rng.randint(0, len(keys)), old)
            if fi == 0 and si == 0 or rng.random() < 0.25:
                keys.insert(rng.randint(0, len(keys)), sibling)
            if sec == s3 or (fi == 0 and si == len(file_sections) - 1) or rng.random() < 0.3:
                keys.insert(rng.randint(0, len(keys)), k3)
            if hard and (sec == s4 or rng.random() < 0.25):
                keys.insert(rng.randint(0, len(keys)), k4)
            items.append({"t": "section", "text": f"[{sec}]", "name": sec})
            if rng.random() < 0.3:
                items.append({"t": "comment", "text": rng.choice(TT_COMMENTS)})
            if hard and has_old and si == 0:
                items.append(
                    {
                        "t": "comment",
                        "text": f"{rng.choice(['#', ';', '# '])}{old} = {_tt_rename_value(rng, old, False)}",
                    }
                )
            for key in dict.fromkeys(keys):
                if key in (old, sibling):
                    value = _tt_rename_value(rng, key, hard)
                elif key == k3:
                    value = rng.choice(k3_values)
                elif key == k4:
                    value = rng.choice(["true", "1", "on"])
                else:
                    value = rng.choice(TT_FILLERS[key])
                items.append(_tt_kv(rng, sec, key, value, hard))
            if si == 0 and rng.random() < 0.5:
                items.append({"t": "comment", "text": f"# {old} is tuned per environment"})
            items.append({"t": "blank", "text": ""})
        items.pop()  # no blank line at the very end
        cfgs.append(_Cfg(f"{fname}.conf", True, items))
    if hard:
        # look-alike files that are not live: a backup and an example
        for suffix in rng.sample([".conf.bak", ".conf.example", ".conf.disabled", ".conf.orig"], 2):
            src = rng.choice(cfgs[: len(names)])
            items = [dict(it) for it in src.items]
            items.insert(3, {"t": "section", "text": f"[{s3}]", "name": s3})
            items.insert(4, _tt_kv(rng, s3, old, _tt_rename_value(rng, old, False), False))
            items.insert(5, _tt_kv(rng, s3, k3, rng.choice(k3_values), False))
            items.insert(6, {"t": "blank", "text": ""})
            cfgs.append(_Cfg(src.name.replace(".conf", suffix), False, items))
    return {
        "app": app,
        "dir": f"/etc/{app}",
        "cfgs": cfgs,
        "old": old,
        "sibling": sibling,
        "new": new,
        "k3": k3,
        "s3": s3,
        "v3": v3,
        "k4": k4 if hard else None,
        "s4": s4 if hard else None,
    }


def _tt_apply(cfg: dict[str, Any], c: _Cfg, bug: str = "") -> str:
    """The file after the edits (with one bug on)."""
    if not c.live and bug != "touch-backups":
        return _tt_render(c.items)
    out, renamed = [], 0
    for it in c.items:
        it = dict(it)
        if it["t"] == "comment" and bug == "touch-comments":
            it["text"] = re.sub(
                rf"^(\s*[#;]\s*){cfg['old']}(\s*=)", rf"\g<1>{cfg['new']}\g<2>", it["text"]
            )
        if it["t"] == "kv":
            if it["key"] == cfg["k4"] and it["section"] == cfg["s4"]:
                continue
            if it["key"] == cfg["k3"] and (it["section"] == cfg["s3"] or bug == "all-sections"):
                it["value"] = cfg["v3"]
            if it["key"] == cfg["old"] and not (bug == "first-only" and renamed):
                it["key"] = cfg["new"]
                renamed += 1
        out.append(it)
    text = _tt_render(out)
    if bug == "substring":
        text = text.replace(cfg["old"], cfg["new"])
    return text


def _tt_expected_rows(r: dict[str, Any]) -> list[list[str]]:
    spec = r["spec"]
    rows = [[c["name"] for c in spec["out_cols"]]]
    for rec in r["records"]:
        row = []
        for c in spec["out_cols"]:
            value = rec[c["src"]]
            if c["kind"] == "date" and spec["level"] != "easy":
                a, b, y = re.split(r"[./-]", value)
                d, m = (b, a) if spec["date_format"] == "mdy-slash" else (a, b)
                value = f"{y}-{m}-{d}"
            elif c["kind"] == "amount" and spec["level"] == "hard":
                sign = "-" if value.startswith("(") else ""
                value = sign + value.strip("()").replace(",", "")
            row.append(value)
        rows.append(row)
    return rows


@register
class TextTransform(Family):
    """sed/awk-style rewriting. Either a fixed-width report to convert to CSV (easy: same
    columns, trimmed; medium: pages with repeated headers, chosen columns, dates rewritten;
    hard: CSV quoting, accounting amounts, empty cells, annotations), or INI-style config
    files to edit in place (easy: rename a key in one file; medium: rename across files and
    set a value in one section only; hard: commented-out look-alikes, inline comments,
    spacing variants, a key to delete and backup files that must stay untouched)."""

    name = "text-transform"
    title = "Reformat a fixed-width report or edit config files in place, preserving layout"
    category = "text-processing"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty
        outdir = rng.choice(OUT_DIRS)
        shape = "config" if rng.random() < 0.5 else "report"
        if shape == "report":
            bugs = TT_REPORT_BUGS[level.value]
            for _ in range(40):
                r = _tt_report(rng, level)
                expected = _tt_expected_rows(r)
                if _tt_parse_report(r["text"], r["spec"]) == expected and all(
                    _tt_parse_report(r["text"], r["spec"], b) != expected for b in bugs
                ):
                    break
            else:  # pragma: no cover
                raise RuntimeError("text-transform: could not draw a report exposing every bug")
            srcdir = rng.choice(["/srv/legacy/exports", "/data/mainframe", "/opt/reports/in"])
            stem = f"{r['dataset']}_{rng.choice(['q1', 'q3', 'weekly', 'eom', '2024'])}"
            context = {
                "shape": shape,
                "src": f"{srcdir}/{stem}.txt",
                "srcdir": srcdir,
                "outdir": outdir,
                "out": f"{outdir}/{stem}.csv",
                "columns": r["src_cols"],
                "out_cols": r["spec"]["out_cols"],
                "date_format_doc": r["date_format_doc"],
                "title": r["spec"]["title"],
                "spec": r["spec"],
                "expected": expected,
                "digests": {f"{srcdir}/{stem}.txt": _sha256(r["text"])},
            }
            files = {f"environment/data/{stem}.txt": r["text"]}
            outputs = [context["out"]]
            secret = _csv_text(expected)
        else:
            bugs = TT_CONFIG_BUGS[level.value]
            for _ in range(40):
                cfg = _tt_config(rng, level)
                paths = [f"{cfg['dir']}/{c.name}" for c in cfg["cfgs"]]
                expected_files = {
                    p: _tt_apply(cfg, c) for p, c in zip(paths, cfg["cfgs"], strict=True)
                }
                originals = {
                    p: _tt_render(c.items) for p, c in zip(paths, cfg["cfgs"], strict=True)
                }
                # (reserialize always differs: every file has comments, configparser drops them)
                if all(
                    {p: _tt_apply(cfg, c, b) for p, c in zip(paths, cfg["cfgs"], strict=True)}
                    != expected_files
                    for b in bugs
                    if b != "reserialize"
                ):
                    break
            else:  # pragma: no cover
                raise RuntimeError("text-transform: could not draw configs exposing every bug")
            changed = [p for p in expected_files if expected_files[p] != originals[p]]
            context = {
                "shape": shape,
                "app": cfg["app"],
                "dir": cfg["dir"],
                "live": [c.name for c in cfg["cfgs"] if c.live],
                "others": [c.name for c in cfg["cfgs"] if not c.live],
                **{k: cfg[k] for k in ("old", "new", "k3", "s3", "v3", "k4", "s4")},
                "expected": expected_files,
                "outdir": outdir,
            }
            files = {
                f"environment/conf/{c.name}": originals[f"{cfg['dir']}/{c.name}"]
                for c in cfg["cfgs"]
            }
            outputs = changed
            secret = "".join(expected_files[p] for p in changed)
        context["bugs"] = bugs
        context["bug_notes"] = [TT_BUG_NOTES[b] for b in bugs]
        return Draft(
            context=context,
            files=files,
            secrets=_secrets(self, context, level, [secret]),
            outputs=outputs,
            tags=[shape, "sed", "awk"],
            agent_timeout_sec=AGENT_TIMEOUT[level],
        )


# --------------------------------------------------------------------------- csv-json-wrangle

CJ_DOMAINS = [
    {
        "parent": "customers",
        "pid": "customer_id",
        "pname": "name",
        "names": "person",
        "groups": {
            "region": ["EMEA", "APAC", "AMER", "LATAM", "ANZ"],
            "segment": ["retail", "enterprise", "smb", "public", "education"],
        },
        "child": "orders",
        "cid": "order_id",
        "date": "order_date",
        "measure": "amount",
        "status": ["paid", "shipped", "cancelled"],
        "flag": "gift_wrap",
        "scale": (5, 2500),
    },
    {
        "parent": "products",
        "pid": "product_id",
        "pname": "title",
        "names": "product",
        "groups": {
            "category": ["tools", "garden", "kitchen", "toys", "office"],
            "brand": ["Northwind", "Contoso", "Fabrikam", "Litware", "Tailspin"],
        },
        "child": "sales",
        "cid": "sale_id",
        "date": "sold_on",
        "measure": "revenue",
        "status": ["settled", "pending", "voided"],
        "flag": "promo",
        "scale": (2, 1800),
    },
    {
        "parent": "employees",
        "pid": "employee_id",
        "pname": "full_name",
        "names": "person",
        "groups": {
            "department": ["finance", "research", "sales", "legal", "support"],
            "site": ["Lisbon", "Austin", "Osaka", "Leeds", "Graz"],
        },
        "child": "timesheets",
        "cid": "entry_id",
        "date": "work_date",
        "measure": "hours",
        "status": ["approved", "submitted", "rejected"],
        "flag": "overtime",
        "scale": (1, 12),
    },
    {
        "parent": "stations",
        "pid": "station_id",
        "pname": "label",
        "names": "place",
        "groups": {
            "city": ["Porto", "Tallinn", "Cape Town", "San Jose", "Oslo"],
            "network": ["north", "south", "coastal", "urban", "alpine"],
        },
        "child": "readings",
        "cid": "reading_id",
        "date": "taken_on",
        "measure": "rainfall_mm",
        "status": ["ok", "suspect", "invalid"],
        "flag": "calibrated",
        "scale": (0, 160),
    },
]
CJ_LDOMAINS = [
    {
        "file": "events",
        "id": "event_id",
        "ts": "ts",
        "kind": "type",
        "kinds": ["click", "purchase", "signup", "refund", "view"],
        "who": "user",
        "who_fields": ["id", "name", "plan"],
        "who_values": ["free", "pro", "team", "enterprise"],
        "num": "amount",
        "tags": "tags",
        "tag_values": ["mobile", "web", "promo", "beta", "eu", "returning", "ab-test"],
        "flag": "ok",
    },
    {
        "file": "tickets",
        "id": "ticket_id",
        "ts": "created_at",
        "kind": "priority",
        "kinds": ["low", "normal", "high", "urgent"],
        "who": "requester",
        "who_fields": ["id", "name", "tier"],
        "who_values": ["bronze", "silver", "gold"],
        "num": "minutes_spent",
        "tags": "labels",
        "tag_values": ["billing", "login", "bug", "refund", "vip", "api", "mobile"],
        "flag": "escalated",
    },
    {
        "file": "deliveries",
        "id": "delivery_id",
        "ts": "dispatched_at",
        "kind": "state",
        "kinds": ["delivered", "failed", "returned", "in_transit"],
        "who": "courier",
        "who_fields": ["id", "name", "vehicle"],
        "who_values": ["bike", "van", "truck", "foot"],
        "num": "distance_km",
        "tags": "flags",
        "tag_values": ["fragile", "cold", "signature", "bulky", "express", "night"],
        "flag": "signed",
    },
]
CJ_BUGS = {
    ("join", "easy"): ["strings", "no-filter", "bool-as-string"],
    ("join", "medium"): ["no-filter", "rows-not-distinct", "sort-as-text"],
    ("join", "hard"): ["keep-duplicates", "skip-missing", "naive-split"],
    ("flatten", "easy"): ["python-bools", "missing-as-none", "key-order"],
    ("flatten", "medium"): ["no-filter", "tags-repr", "no-sort"],
    ("flatten", "hard"): ["keep-duplicates", "naive-time", "no-quoting"],
}
CJ_BUG_NOTES = {
    "strings": "copies every value as a string (no type conversion)",
    "no-filter": "forgets to drop the excluded rows",
    "bool-as-string": "leaves the true/false column as strings",
    "rows-not-distinct": "counts rows instead of distinct parents",
    "sort-as-text": "sorts the totals as text",
    "keep-duplicates": "keeps every row of a repeated id instead of the last one",
    "skip-missing": "drops rows whose measure is missing instead of counting them",
    "naive-split": "splits CSV lines on commas, ignoring quoting",
    "python-bools": "writes booleans as Python's True/False",
    "missing-as-none": "writes missing values as None",
    "key-order": "keeps the JSON key order instead of the requested column order",
    "tags-repr": "writes lists as Python list literals",
    "no-sort": "keeps the input order",
    "naive-time": "keeps and sorts the timestamps as written, without converting to UTC",
    "no-quoting": "joins fields with commas without CSV quoting",
}


def _cj_solve(texts: dict[str, str], spec: dict, bug: str = "") -> str:
    """The reference solution (its source is embedded in solve.sh): input file texts by
    name -> output file text. ``bug`` switches on one near miss."""
    import csv
    import io
    import json
    from datetime import datetime, timezone

    level = spec["level"]

    def rows_of(text):
        if bug == "naive-split":
            lines = [line for line in text.split("\n") if line]
            header = lines[0].split(",")
            return [dict(zip(header, line.split(","), strict=False)) for line in lines[1:]]
        return list(csv.DictReader(io.StringIO(text, newline="")))

    def num(value):
        try:
            return float((value or "").strip().replace(",", ""))
        except ValueError:
            return None

    if spec["shape"] == "join":
        child = rows_of(texts[spec["child_file"]])
        bad, measure = spec["bad"], spec["measure"]
        if level == "easy":
            out = []
            for row in child:
                if row[spec["status"]] == bad and bug != "no-filter":
                    continue
                obj = {}
                for col, typ in spec["types"]:
                    value = row[col]
                    if bug != "strings":
                        if typ == "int":
                            value = int(value)
                        elif typ == "float":
                            value = float(value)
                        elif typ == "bool" and bug != "bool-as-string":
                            value = value == "true"
                    obj[col] = value
                out.append(obj)
            return json.dumps(out, indent=2) + "\n"
        parents = {row[spec["pid"]]: row for row in rows_of(texts[spec["parent_file"]])}
        if level == "medium":
            groups: dict = {}
            for row in child:
                if row[spec["status"]] == bad and bug != "no-filter":
                    continue
                parent = parents[row[spec["pid"]]]
                g = groups.setdefault(parent[spec["group"]], {"n": 0, "parents": [], "total": 0.0})
                g["n"] += 1
                g["parents"].append(row[spec["pid"]])
                g["total"] += num(row[measure]) or 0.0
            out = [
                {
                    spec["group"]: name,
                    spec["child"]: g["n"],
                    spec["parent"]: len(
                        g["parents"] if bug == "rows-not-distinct" else set(g["parents"])
                    ),
                    f"total_{measure}": round(g["total"], 2),
                }
                for name, g in groups.items()
            ]
            if bug == "sort-as-text":
                out.sort(key=lambda o: str(o[f"total_{measure}"]), reverse=True)
            else:
                out.sort(key=lambda o: (-o[f"total_{measure}"], o[spec["group"]]))
            return json.dumps(out, indent=2) + "\n"
        if bug != "keep-duplicates":
            last = {}
            for row in child:
                last[row[spec["cid"]]] = row
            child = list(last.values())
        per_parent: dict = {}
        unmatched = []
        for row in child:
            if row.get(spec["status"]) == bad:
                continue
            if row[spec["pid"]] not in parents:
                unmatched.append(int(row[spec["cid"]]))
                continue
            value = num(row.get(measure))
            if value is None and bug == "skip-missing":
                continue
            p = per_parent.setdefault(row[spec["pid"]], {"n": 0, "total": 0.0})
            p["n"] += 1
            p["total"] += value or 0.0
        groups = {}
        for pid, p in per_parent.items():
            parent = parents[pid]
            groups.setdefault(parent[spec["group"]], []).append(
                {
                    spec["pid"]: int(pid),
                    spec["pname"]: parent[spec["pname"]],
                    spec["child"]: p["n"],
                    f"total_{measure}": round(p["total"], 2),
                    "_raw": p["total"],
                }
            )
        out_groups = []
        for name in sorted(groups):
            members = sorted(groups[name], key=lambda m: (-m[f"total_{measure}"], m[spec["pid"]]))
            total = round(sum(m.pop("_raw") for m in members), 2)
            out_groups.append(
                {spec["group"]: name, f"total_{measure}": total, spec["parent"]: members}
            )
        result = {"groups": out_groups, f"unmatched_{spec['child']}": sorted(unmatched)}
        return json.dumps(result, indent=2) + "\n"

    # flatten: JSON lines -> CSV
    records = [json.loads(line) for line in texts[spec["file"]].split("\n") if line.strip()]

    def utc(ts):
        if bug == "naive-time":
            return ts
        t = datetime.fromisoformat(ts.replace("Z", "+00:00")).astimezone(timezone.utc)
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")

    if level == "hard" and bug != "keep-duplicates":
        last = {}
        for rec in records:
            last[rec[spec["id"]]] = rec
        records = list(last.values())
    if level != "easy" and bug != "no-filter":
        records = [r for r in records if r.get(spec["kind"]) == spec["keep"]]
    if level != "easy" and bug != "no-sort":
        if level == "hard":
            records.sort(key=lambda r: (utc(r[spec["ts"]]), r[spec["id"]]))
        else:
            records.sort(key=lambda r: (r[spec["ts"]], r[spec["id"]]))
    columns = spec["columns"]
    if bug == "key-order":
        columns = [k for k in records[0] if k in columns]

    def cell(rec, col):
        value = rec
        for part in col.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if bug == "missing-as-none" and value is None:
            return "None"
        if value is None:
            return ""
        if isinstance(value, bool):
            return str(value) if bug == "python-bools" else ("true" if value else "false")
        if isinstance(value, list):
            return str(value) if bug == "tags-repr" else ";".join(value)
        if col == spec["ts"] and level == "hard":
            return utc(value)
        if col == spec["num"] and level == "hard":
            return f"{float(value):.2f}"
        if isinstance(value, (int, float)):
            return json.dumps(value)
        return value

    rows = [columns] + [[cell(r, c) for c in columns] for r in records]
    if bug == "no-quoting":
        return "".join(",".join(r) + "\n" for r in rows)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _cj_same(got: Any, want: Any) -> bool:
    """Structural equality for JSON: exact types for ints, booleans and strings, a tolerance
    of half a cent for floats (an integral float may be written as an integer)."""
    if isinstance(want, bool) or want is None:
        return got is want
    if isinstance(want, int):
        return type(got) is int and got == want
    if isinstance(want, float):
        return type(got) in (int, float) and abs(got - want) <= 0.005
    if isinstance(want, str):
        return isinstance(got, str) and got == want
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(_cj_same, got, want))
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and sorted(got) == sorted(want)
            and all(_cj_same(got[k], want[k]) for k in want)
        )
    return False


def _cj_name(rng: random.Random, kind: str, hard: bool) -> str:
    if kind == "person":
        first, last = rng.choice(TT_FIRST), rng.choice(TT_LAST)
        return f"{last}, {first}" if hard and rng.random() < 0.25 else f"{first} {last}"
    if kind == "product":
        pool = TT_PRODUCTS + (TT_HARD_PRODUCTS if hard else [])
        return f"{rng.choice(pool)} {rng.choice(['S', 'M', 'L', 'XL', 'Pro', 'Mini', '2'])}"
    city = rng.choice(TT_CITIES)
    suffix = rng.choice(["North", "East", "Harbor", "Airport", "Hill", "Dam", "Pier"])
    return f"{city}, {suffix}" if hard and rng.random() < 0.3 else f"{city} {suffix}"


def _cj_join(rng: random.Random, level: Difficulty) -> tuple[dict, dict[str, str]]:
    hard = level is HARD
    dom = rng.choice(CJ_DOMAINS)
    group = rng.choice(list(dom["groups"]))
    gvals = rng.sample(dom["groups"][group], rng.randint(3, 5))
    lo, hi = dom["scale"]
    good, bad = dom["status"][:2], dom["status"][2]
    pids = rng.sample(range(1, 1000), _pick(rng, level, (6, 10), (8, 14), (10, 16)))
    parents = []
    gweights = [rng.choice([1, 2, 4, 8]) for _ in gvals]
    for i, pid in enumerate(pids):
        g = gvals[i] if i < len(gvals) else rng.choices(gvals, gweights)[0]
        parents.append([str(pid), _cj_name(rng, dom["names"], hard), g])
    if hard and not any("," in p[1] for p in parents):
        parents[0][1] = (
            "Nuts, hex"
            if dom["names"] == "product"
            else f"{rng.choice(TT_LAST)}, {rng.choice(TT_FIRST)}"
        )
    comma_pid = next((p[0] for p in parents if "," in p[1]), None)
    n_c = _pick(rng, level, (12, 20), (40, 70), (60, 90))
    cids = rng.sample(range(1, 100000), n_c + 10)
    start = date(rng.randint(2021, 2025), rng.randint(1, 12), 1)
    pweights = [rng.choice([1, 1, 2, 3, 6]) for _ in parents]
    rows = []

    def measure(value: float) -> str:
        text = f"{value:.2f}"
        if hard and value >= 1000 and rng.random() < 0.6:
            text = f"{value:,.2f}"
        if hard and rng.random() < 0.1:
            text = f" {text} "
        return text

    for i in range(n_c):
        parent = rng.choices(parents, pweights)[0] if i else parents[0]
        if hard and i == 1 and comma_pid:
            parent = next(p for p in parents if p[0] == comma_pid)
        value = round(rng.uniform(lo, hi), 2)
        status = rng.choices(good + [bad], [5, 3, 2])[0] if i > 1 else good[0]
        day = start + timedelta(days=rng.randint(0, 89))
        rows.append(
            [
                str(cids[i]),
                parent[0],
                day.isoformat(),
                measure(value),
                status,
                rng.choice(["true", "false"]),
            ]
        )
    if hard:
        spare = [x for x in range(1, 1000) if str(x) not in [p[0] for p in parents]]
        for k in range(rng.randint(2, 4)):  # orphans
            rows.append(
                [
                    str(cids[n_c + k]),
                    str(rng.choice(spare)),
                    start.isoformat(),
                    measure(round(rng.uniform(lo, hi), 2)),
                    good[0],
                    "false",
                ]
            )
        for _ in range(rng.randint(3, 6)):  # missing measures
            rows[rng.randrange(2, len(rows))][3] = rng.choice(["", "N/A", "null", "-"])
        rng.shuffle(rows)
        for _ in range(rng.randint(3, 5)):  # corrections: the same id again, later
            src = rows[rng.randrange(len(rows) // 2)]
            fixed = list(src)
            fixed[3] = measure(round(rng.uniform(lo, hi), 2))
            fixed[4] = rng.choice(good + [bad])
            rows.append(fixed)
        rows[-1][4] = good[0]
    else:
        rng.shuffle(rows)
    cols = [dom["cid"], dom["pid"], dom["date"], dom["measure"], "status", dom["flag"]]
    types = ["int", "int", "str", "float", "str", "bool"]
    if level is not EASY:
        cols, types, rows = cols[:5], types[:5], [r[:5] for r in rows]
    spec = {
        "shape": "join",
        "level": level.value,
        "child_file": f"{dom['child']}.csv",
        "parent_file": f"{dom['parent']}.csv",
        "child": dom["child"],
        "parent": dom["parent"],
        "cid": dom["cid"],
        "pid": dom["pid"],
        "pname": dom["pname"],
        "group": group,
        "measure": dom["measure"],
        "status": "status",
        "bad": bad,
        "types": list(zip(cols, types, strict=True)),
    }
    texts = {f"{dom['child']}.csv": _csv_text([cols, *rows])}
    if level is not EASY:
        texts[f"{dom['parent']}.csv"] = _csv_text([[dom["pid"], dom["pname"], group], *parents])
    return spec, texts


def _cj_flatten(rng: random.Random, level: Difficulty) -> tuple[dict, dict[str, str]]:
    hard = level is HARD
    dom = rng.choice(CJ_LDOMAINS)
    n = _pick(rng, level, (10, 16), (25, 40), (35, 55))
    keep = rng.choice(dom["kinds"])
    ids = rng.sample(range(100, 99999), n)
    t0 = datetime(rng.randint(2022, 2025), rng.randint(1, 12), rng.randint(1, 28), tzinfo=UTC)
    who, wf = dom["who"], dom["who_fields"]
    people = [
        {
            wf[0]: rng.randint(1, 500),
            wf[1]: _cj_name(rng, "person", hard),
            wf[2]: rng.choice(dom["who_values"]),
        }
        for _ in range(rng.randint(5, 9))
    ]
    if hard and not any("," in p[wf[1]] for p in people):
        people[0][wf[1]] = f"{rng.choice(TT_LAST)}, {rng.choice(TT_FIRST)}"
    recs = []
    for i in range(n):
        t = t0 + timedelta(minutes=rng.randint(0, 7 * 24 * 60), seconds=rng.randint(0, 59))
        if hard:
            off = rng.choice([0, 60, 120, -300, 330, 540])
            stamp = f"{(t + timedelta(minutes=off)).replace(tzinfo=None).isoformat()}{_offset(off, True)}"
        else:
            stamp = t.strftime("%Y-%m-%dT%H:%M:%SZ")
        kind = keep if i < 3 else rng.choice(dom["kinds"])
        value: Any = rng.choice([rng.randint(1, 300), round(rng.uniform(0.5, 500), 2)])
        if isinstance(value, float) and value == int(value):
            value = int(value)
        person = (
            dict(rng.choice(people))
            if i
            else dict(next(p for p in people if "," in p[wf[1]] or not hard))
        )
        if level is EASY:
            rec = {
                dom["id"]: ids[i],
                dom["ts"]: stamp,
                dom["kind"]: kind,
                f"{who}_name": person[wf[1]],
                dom["num"]: value,
                dom["flag"]: rng.random() < 0.5,
            }
            if i in (1, 2) or rng.random() < 0.1:
                if rng.random() < 0.5:
                    del rec[dom["num"]]
                else:
                    rec[dom["num"]] = None
        else:
            tags = rng.sample(dom["tag_values"], rng.randint(0 if i else 1, 3))
            rec = {
                dom["id"]: ids[i],
                dom["ts"]: stamp,
                dom["kind"]: kind,
                who: person,
                dom["num"]: value,
                dom["tags"]: tags,
                dom["flag"]: rng.random() < 0.5,
            }
            if hard and i > 2 and rng.random() < 0.12:
                if rng.random() < 0.5:
                    del rec[who]
                else:
                    rec[who] = None
            if hard and rng.random() < 0.15:
                rec[dom["num"]] = str(value)
        recs.append(rec)
    if level is not EASY:
        rng.shuffle(recs)
    if hard:  # later lines that correct earlier ones (same id)
        for k in range(rng.randint(2, 4)):
            fixed = json.loads(
                json.dumps(
                    recs[k if k else next(i for i, r in enumerate(recs) if r[dom["kind"]] == keep)]
                )
            )
            fixed[dom["num"]] = round(rng.uniform(0.5, 500), 2)
            fixed[dom["flag"]] = not fixed[dom["flag"]]
            recs.append(fixed)
    if level is EASY:
        flat = list(recs[0])
        columns = rng.sample(flat, len(flat))
        while columns == flat:
            columns = rng.sample(flat, len(flat))
    else:
        extra = [f"{who}.{wf[0]}", f"{who}.{wf[2]}", dom["num"], dom["flag"]]
        columns = [dom["id"], dom["ts"], f"{who}.{wf[1]}", dom["tags"]]
        if hard:
            extra.remove(dom["num"])
            columns.append(dom["num"])
        columns += rng.sample(extra, rng.randint(1, len(extra)))
        rng.shuffle(columns)
    spec = {
        "shape": "flatten",
        "level": level.value,
        "file": f"{dom['file']}.jsonl",
        "id": dom["id"],
        "ts": dom["ts"],
        "kind": dom["kind"],
        "keep": keep,
        "num": dom["num"],
        "columns": columns,
        "who": who,
        "who_name": wf[1],
        "tags": dom["tags"],
        "flag": dom["flag"],
    }
    text = "".join(json.dumps(r) + "\n" for r in recs)
    return spec, {f"{dom['file']}.jsonl": text}


def _cj_result(text: str, shape: str) -> Any:
    if shape == "join":
        return json.loads(text)
    return list(csv.reader(io.StringIO(text, newline="")))


@register
class CsvJsonWrangle(Family):
    """Convert between CSV and JSON. Either CSV -> JSON (easy: typed records with a filter;
    medium: join two CSVs and aggregate per group, sorted; hard: nested per-group/per-parent
    JSON with corrections, orphans, missing and messy numbers, quoted names) or JSON lines ->
    CSV (easy: chosen columns, booleans and missing values; medium: nested fields, lists, a
    filter and a sort; hard: duplicates, null objects, UTC conversion, quoting)."""

    name = "csv-json-wrangle"
    title = "Convert, join and aggregate data between CSV and JSON"
    category = "data-wrangling"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty
        outdir = rng.choice(OUT_DIRS)
        shape = "join" if rng.random() < 0.5 else "flatten"
        bugs = CJ_BUGS[(shape, level.value)]
        for _ in range(60):
            spec, texts = (_cj_join if shape == "join" else _cj_flatten)(rng, level)
            text = _cj_solve(texts, spec)
            want = _cj_result(text, shape)
            if all(not _cj_same(_cj_result(_cj_solve(texts, spec, b), shape), want) for b in bugs):
                break
        else:  # pragma: no cover
            raise RuntimeError("csv-json-wrangle: could not draw data exposing every near miss")
        srcdir = rng.choice(["/srv/data", "/data/incoming", "/opt/etl/input", "/home/analyst/data"])
        stem = {
            ("join", "easy"): spec.get("child", "") + "_clean",
            ("join", "medium"): f"{spec.get('child', '')}_by_{spec.get('group', '')}",
            ("join", "hard"): f"{spec.get('parent', '')}_summary",
        }.get((shape, level.value), spec.get("file", "").replace(".jsonl", "") + "_flat")
        out = f"{outdir}/{stem}.{'json' if shape == 'join' else 'csv'}"
        import inspect

        context = {
            "shape": shape,
            "spec": spec,
            "srcdir": srcdir,
            "inputs": sorted(texts),
            "outdir": outdir,
            "out": out,
            "expected": want,
            "bugs": bugs,
            "bug_notes": [CJ_BUG_NOTES[b] for b in bugs],
            "solver_src": inspect.getsource(_cj_solve),
            "same_src": inspect.getsource(_cj_same),
            "digests": {f"{srcdir}/{name}": _sha256(t) for name, t in sorted(texts.items())},
        }
        return Draft(
            context=context,
            files={f"environment/data/{name}": t for name, t in texts.items()},
            secrets=_secrets(self, context, level, [text]),
            outputs=[out],
            tags=[shape, "csv", "json"],
            agent_timeout_sec=AGENT_TIMEOUT[level],
        )
