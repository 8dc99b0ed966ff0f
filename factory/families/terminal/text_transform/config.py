"""text-transform's configuration task: configuration files in several dialects and a change
list (renames, sets, deletes) to apply to them."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from factory.families.terminal.knobs import pick
from factory.families.terminal.text_tasks import HARD
from factory.vocabulary import Difficulty

TT_CONFIG_BUGS = {
    "easy": ["substring", "first-only", "reserialize"],
    "medium": ["substring", "all-sections", "reserialize"],
    "hard": ["touch-comments", "touch-backups", "all-sections"],
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


def render_config(items: list[dict[str, Any]]) -> str:
    lines = []
    for it in items:
        if it["t"] == "kv":
            lines.append(f"{it['indent']}{it['key']}{it['sep']}{it['value']}{it['inline']}")
        else:
            lines.append(it["text"])
    return "\n".join(lines) + "\n"


def draw_config(rng: random.Random, level: Difficulty) -> dict[str, Any]:
    hard = level is HARD
    app = rng.choice(TT_APPS)
    old, sibling, new = rng.choice(TT_RENAMES)
    k3, k3_values, v3 = rng.choice(TT_SETS)
    k4 = rng.choice(TT_DELETES)
    sections = rng.sample(TT_SECTIONS, 6)
    s3, s4 = sections[0], sections[1]
    n_files = pick(rng, level, (1, 1), (3, 4), (3, 5))
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


def apply_changes(cfg: dict[str, Any], c: _Cfg, bug: str = "") -> str:
    """The file after the edits (with one bug on)."""
    if not c.live and bug != "touch-backups":
        return render_config(c.items)
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
    text = render_config(out)
    if bug == "substring":
        text = text.replace(cfg["old"], cfg["new"])
    return text
