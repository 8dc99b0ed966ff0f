"""The world a log-report task's logs come from: services, endpoints, clients, and requests
written as log lines in one of four formats."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.families.terminal.knobs import pick
from factory.families.terminal.text_tasks import utc_offset
from factory.vocabulary import Difficulty


class _Words(BaseModel):
    """The words a task's world is drawn from (words.toml)."""

    model_config = ConfigDict(extra="forbid")

    services: list[str]
    resources: list[str]
    subs: list[str]
    zones: list[str]
    apps: list[str]


LR_WORDS = load_toml_model(Path(__file__).parent / "words.toml", _Words, "log-report words")
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
class Req:
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
    """Which file holds it: the rotation number (0 = the live log, 1 = ``.1``, ...)."""

    @property
    def local(self) -> datetime:
        return (self.utc + timedelta(minutes=self.off)).replace(tzinfo=None)

    @property
    def endpoint(self) -> str:
        return self.path.split("?", 1)[0]


def log_line(r: Req, fmt: str, zone: str) -> tuple[str, int, int]:
    """(line, end of the timestamp part, start of the status field)."""
    loc = r.local
    if fmt == "combined":
        stamp = f"{loc.day:02d}/{LR_MONTHS[loc.month - 1]}/{loc.year}:{loc:%H:%M:%S}"
        head = f"{r.svc}.{zone} {r.ip} - - [{stamp} {utc_offset(r.off, False)}]"
        mid = f' "{r.method} {r.path} HTTP/1.1" '
        tail = f"{r.status} {r.nbytes} {r.ms / 1000:.3f}"
    elif fmt == "kv":
        head = f"ts={loc:%Y-%m-%dT%H:%M:%S}{utc_offset(r.off, True)}"
        mid = f" service={r.svc} client={r.ip} method={r.method} path={r.path} "
        tail = f"status={r.status} bytes={r.nbytes} duration_ms={r.ms}"
    elif fmt == "pipe":
        head = f"{loc:%Y-%m-%d %H:%M:%S} {utc_offset(r.off, False)} |"
        mid = f" {r.svc} | {r.ip} | {r.method} {r.path} | "
        tail = f"{r.status} | {r.nbytes} B | {r.ms} ms"
    else:
        stamp = f"{loc:%Y-%m-%dT%H:%M:%S}{utc_offset(r.off, True)}"
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


def stack_trace(rng: random.Random, svc: str) -> list[str]:
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
class World:
    services: list[str]
    offsets: dict[str, int]
    endpoints: dict[str, list[tuple[str, list[str]]]]
    """service -> [(path, methods)]."""
    ips: list[str]
    prefixes: list[str]
    start: datetime
    span_min: int


def _lr_endpoint(rng: random.Random, res: str) -> str:
    v, sub = rng.randint(1, 3), rng.choice(LR_WORDS.subs)
    return rng.choice(
        [f"/api/v{v}/{res}", f"/api/v{v}/{res}/{sub}", f"/{res}", f"/internal/{res}/{sub}"]
    )


def draw_world(
    rng: random.Random, level: Difficulty, names: list[str] = LR_WORDS.services
) -> World:
    services = rng.sample(names, pick(rng, level, (3, 4), (4, 5), (5, 6)))
    offs = rng.sample(LR_OFFSETS, len(services))
    if sum(1 for o in offs if o) < 2:
        offs[0], offs[1] = 120, -300
    endpoints: dict[str, list[tuple[str, list[str]]]] = {}
    used: list[str] = []
    for svc in services:
        endpoints[svc] = []
        for _ in range(rng.randint(3, 5)):
            path = _lr_endpoint(rng, rng.choice(LR_WORDS.resources))
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
    while len(ips) < pick(rng, level, (12, 20), (20, 32), (24, 40)):
        ip = f"{rng.choice(prefixes)}.{rng.randint(1, 254)}"
        if _ip_ok(ip, ips):
            ips.append(ip)
    start = datetime(
        rng.randint(2022, 2025),
        rng.randint(1, 12),
        rng.randint(1, 28),
        rng.randint(0, 23),
        rng.randint(0, 59),
        tzinfo=timezone.utc,
    )
    span = pick(rng, level, (90, 240), (180, 480), (360, 720))
    return World(
        services, dict(zip(services, offs, strict=True)), endpoints, ips, prefixes, start, span
    )


def draw_request(
    rng: random.Random,
    w: World,
    svc: str | None = None,
    path: str | None = None,
    status: int | None = None,
    ip: str | None = None,
    query_p: float = 0.25,
) -> Req:
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
    return Req(
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


def _svc_weights(w: World) -> list[float]:
    return [1.0 + (i % 3) for i in range(len(w.services))]


def _ip_weights(w: World) -> list[float]:
    return [1 / (i + 1) ** 0.6 for i in range(len(w.ips))]


def _lr_status_ok(status: int | None, cls: int) -> bool:
    return status is not None and status // 100 == cls
