"""The small randomised code base whose history a git-repair task tells: word lists, people,
modules of Python functions, docs and a README that commits edit."""

from __future__ import annotations

import random
from collections.abc import Mapping

from factory.families.names import FIRST_NAMES, LAST_NAMES
from factory.families.terminal.knobs import fresh

PROJECT_WORDS = [
    "tidepool", "ledgerline", "quarry", "lantern", "sprocket", "orchard", "beacon", "meridian",
    "cobalt", "juniper", "pebble", "foundry", "inkwell", "harbor", "kestrel", "mosaic", "nimbus",
    "parcel", "quill", "rivet", "saffron", "tundra", "umber", "vellum", "willow", "yarrow",
    "zephyr", "basalt", "cinder", "drift", "ember", "fathom", "gantry", "hollow", "ironwood",
]  # fmt: skip
MODULE_WORDS = [
    "billing", "catalog", "routing", "storage", "reports", "metrics", "session", "search",
    "export", "ingest", "pricing", "alerts", "scheduler", "accounts", "inventory", "audit",
    "geometry", "parsing", "render", "tokens",
]  # fmt: skip
VERBS = [
    "compute", "normalize", "load", "merge", "validate", "render", "format", "collect", "resolve",
    "estimate", "rank", "split", "encode", "decode", "summarize", "filter", "clamp", "score",
]  # fmt: skip
NOUNS = [
    "total", "window", "batch", "record", "header", "price", "route", "token", "label", "quota",
    "margin", "offset", "bucket", "ratio", "payload", "span", "weight", "digest", "budget",
]  # fmt: skip
TOPICS = [
    "setup", "deployment", "configuration", "troubleshooting", "architecture", "testing",
    "release-process", "monitoring", "backups", "security", "performance", "glossary",
]  # fmt: skip
SETTING_KEYS = [
    "timeout_seconds", "max_connections", "retry_limit", "batch_size", "cache_ttl",
    "worker_count", "queue_depth", "poll_interval", "max_payload_kb", "pool_size",
    "read_buffer_kb", "idle_timeout", "rate_limit", "backlog", "flush_every",
]  # fmt: skip
HOSTS = [
    "api", "auth", "billing", "cdn", "db", "edge", "files", "gateway", "hooks", "ingest", "jobs",
    "kv", "logs", "mail", "metrics", "nats", "ops", "proxy", "queue", "search", "static",
    "tasks", "upload", "vault", "web", "workers",
]  # fmt: skip
DOMAINS = ["internal.example", "corp.example", "svc.example", "prod.example"]
PACKAGES = [
    "attrs", "click", "colorama", "docutils", "filelock", "idna", "jinja2", "markupsafe",
    "msgpack", "packaging", "pluggy", "pyyaml", "requests", "rich", "six", "tabulate", "toml",
    "tqdm", "urllib3", "wcwidth", "zipp", "certifi", "chardet", "decorator", "pygments",
]  # fmt: skip


def _person(rng: random.Random) -> tuple[str, str]:
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    return f"{first} {last}", f"{first.lower()}.{last.lower()}@example.com"


def draw_people(rng: random.Random, n: int) -> list[tuple[str, str]]:
    seen: dict[str, tuple[str, str]] = {}
    while len(seen) < n:
        person = _person(rng)
        seen.setdefault(person[0], person)
    return list(seen.values())


def py_function(rng: random.Random, taken: set[str]) -> tuple[str, str]:
    name = fresh(lambda: f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}", taken)
    arg = rng.choice(["value", "amount", "items", "count", "size", "raw"])
    a, b = rng.randint(2, 9), rng.randint(1, 99)
    body = rng.choice(
        [
            f"    return {arg} * {a} + {b}",
            f"    if {arg} < {b}:\n        return {b}\n    return {arg} - {a}",
            f"    return max({b}, min({arg}, {b * a}))",
            f"    total = 0\n    for step in range({a}):\n        total += {arg} + step\n"
            f"    return total % {b + 7}",
            f"    return ({arg} // {a}) * {a}",
        ]
    )
    words = name.replace("_", " ")
    return name, f'def {name}({arg}):\n    """{words.capitalize()}."""\n{body}\n'


def module_text(title: str, functions: list[str]) -> str:
    return f'"""{title}"""\n\n\n' + "\n\n".join(functions)


def ini_text(settings: Mapping[str, int], section: str) -> str:
    return f"[{section}]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items())


def changelog(entries: list[str]) -> str:
    return "# Changelog\n\n## Unreleased\n\n" + "".join(f"- {e}\n" for e in entries)


class Project:
    """A small randomised code base whose files the scenarios edit."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.name = rng.choice(PROJECT_WORDS)
        self.pkg = rng.choice(["src", "lib", self.name, "app"])
        self.modules = rng.sample(MODULE_WORDS, 5)
        self.taken: set[str] = set()
        self.topics = rng.sample(TOPICS, 6)
        self.readme_sections = 0

    def module_path(self, index: int) -> str:
        return f"{self.pkg}/{self.modules[index]}.py"

    def initial(self) -> dict[str, str]:
        rng = self.rng
        files = {
            "README.md": f"# {self.name}\n\n{self.name.capitalize()} is a small internal "
            f"service.\n",
            ".gitignore": "__pycache__/\n*.pyc\n.venv/\n",
        }
        for i in range(3):
            funcs = [py_function(rng, self.taken)[1] for _ in range(rng.randint(1, 3))]
            files[self.module_path(i)] = module_text(f"{self.modules[i].capitalize()}.", funcs)
        return files

    def add_function(self, files: Mapping[str, str], index: int) -> tuple[dict[str, str], str]:
        path = self.module_path(index)
        name, code = py_function(self.rng, self.taken)
        old = files.get(path)
        if old is None:
            new = module_text(f"{self.modules[index].capitalize()}.", [code])
        else:
            new = old.rstrip("\n") + "\n\n\n" + code
        return {path: new}, f"Add {name} to {self.modules[index]}"

    def add_doc(self) -> tuple[dict[str, str], str]:
        topic = self.topics.pop()
        lines = [f"# {topic.replace('-', ' ').capitalize()}", ""]
        for _ in range(self.rng.randint(2, 4)):
            lines.append(
                f"- {self.rng.choice(VERBS).capitalize()} the {self.rng.choice(NOUNS)} "
                f"before {self.rng.choice(VERBS)}ing the {self.rng.choice(NOUNS)}."
            )
        return {f"docs/{topic}.md": "\n".join(lines) + "\n"}, f"Document {topic.replace('-', ' ')}"

    def readme_section(self, files: Mapping[str, str]) -> tuple[dict[str, str], str]:
        topic = self.rng.choice(["Usage", "Installation", "Development", "Support", "Layout"])
        self.readme_sections += 1
        topic = f"{topic} notes" if self.readme_sections > 1 else topic
        body = (
            f"\n## {topic}\n\nRun `{self.name} {self.rng.choice(VERBS)}` to "
            f"{self.rng.choice(VERBS)} the {self.rng.choice(NOUNS)}s.\n"
        )
        return {"README.md": files["README.md"] + body}, f"README: add {topic.lower()} section"
