"""Repositories and data: repair a broken git repository, answer an analytical question from an
SQLite database, migrate a live SQLite schema, fix a bug in a small Python package.

Everything random comes from the ``rng`` given to ``draft``; the generated artefacts (a plan the
image replays with git, SQL seed scripts, Python sources) are plain text, so the same seed gives
the same task byte for byte. Expected answers are computed here in pure Python (git object ids
included, see :class:`_Repo`) and embedded in the hidden tests.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.names import FIRST_NAMES, LAST_NAMES
from factory.vocabulary import Difficulty

# ---------------------------------------------------------------------------------------------
# shared word lists
# ---------------------------------------------------------------------------------------------

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


def _people(rng: random.Random, n: int) -> list[tuple[str, str]]:
    seen: dict[str, tuple[str, str]] = {}
    while len(seen) < n:
        person = _person(rng)
        seen.setdefault(person[0], person)
    return list(seen.values())


# ---------------------------------------------------------------------------------------------
# git-repair
# ---------------------------------------------------------------------------------------------


def _object_id(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


def _tree_id(files: Mapping[str, str]) -> str:
    """The id git gives the tree of ``files`` (path -> text, every file mode 100644)."""
    root: dict[str, Any] = {}
    for path, content in files.items():
        node = root
        *dirs, name = path.split("/")
        for d in dirs:
            node = node.setdefault(d, {})
        node[name] = content

    def write(node: dict[str, Any]) -> str:
        entries = []
        for name, value in node.items():
            if isinstance(value, dict):
                sha, mode, key = write(value), b"40000", name + "/"
            else:
                sha, mode, key = _object_id("blob", value.encode()), b"100644", name
            entries.append((key.encode(), mode + b" " + name.encode() + b"\0" + bytes.fromhex(sha)))
        entries.sort()
        return _object_id("tree", b"".join(e for _, e in entries))

    return write(root)


@dataclass
class _Commit:
    sha: str
    files: dict[str, str]
    parents: list[str]
    subject: str
    author: tuple[str, str]
    time: int


@dataclass
class _Repo:
    """A model of the repository the image builds: every operation is recorded in ``plan``
    (replayed by environment/make_repo.py) and every commit id computed here, so the hidden
    tests can demand exact ids. make_repo.py checks each id and fails the build on a mismatch."""

    path: str
    branch: str
    clock: int
    plan: list[dict[str, Any]] = field(default_factory=list)
    commits: dict[str, _Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    head: str = ""
    """Branch name when attached, otherwise ''."""
    detached: str = ""

    def __post_init__(self) -> None:
        self.plan.append({"op": "init", "path": self.path, "branch": self.branch})
        self.head = self.branch

    def tick(self, rng: random.Random) -> int:
        self.clock += rng.randint(40 * 60, 30 * 3600)
        return self.clock

    @property
    def tip(self) -> str:
        return self.branches.get(self.head, "") if self.head else self.detached

    def files(self, ref: str | None = None) -> dict[str, str]:
        sha = self.tip if ref is None else self.branches.get(ref, ref)
        return dict(self.commits[sha].files) if sha else {}

    def commit(
        self,
        rng: random.Random,
        subject: str,
        author: tuple[str, str],
        write: Mapping[str, str] | None = None,
        delete: tuple[str, ...] = (),
    ) -> str:
        parent = self.tip
        files = self.files()
        files.update(write or {})
        for path in delete:
            files.pop(path)
        when = self.tick(rng)
        lines = [f"tree {_tree_id(files)}"]
        lines += [f"parent {parent}"] if parent else []
        ident = f"{author[0]} <{author[1]}> {when} +0000"
        lines += [f"author {ident}", f"committer {ident}", "", subject, ""]
        sha = _object_id("commit", "\n".join(lines).encode())
        self.commits[sha] = _Commit(sha, files, [parent] if parent else [], subject, author, when)
        self.plan.append(
            {
                "op": "commit",
                "write": dict(sorted((write or {}).items())),
                "delete": list(delete),
                "subject": subject,
                "author": list(author),
                "time": when,
                "expect": sha,
            }
        )
        if self.head:
            self.branches[self.head] = sha
        else:
            self.detached = sha
        return sha

    def create_branch(self, name: str, at: str | None = None) -> None:
        self.branches[name] = at or self.tip
        self.plan.append({"op": "branch", "name": name, "at": self.branches[name]})

    def tag(self, name: str, at: str) -> None:
        self.plan.append({"op": "tag", "name": name, "at": at})

    def checkout(self, name: str) -> None:
        self.head, self.detached = name, ""
        self.plan.append({"op": "checkout", "ref": name, "time": self.clock})

    def detach(self, at: str) -> None:
        self.head, self.detached = "", at
        self.plan.append({"op": "detach", "at": at, "time": self.clock})

    def reset_hard(self, to: str) -> None:
        assert self.head
        self.branches[self.head] = to
        self.plan.append({"op": "reset", "to": to, "time": self.clock})

    def delete_branch(self, name: str) -> None:
        del self.branches[name]
        self.plan.append({"op": "delete-branch", "name": name})

    def merge_conflicted(
        self, rng: random.Random, other: str, message: str, who: tuple[str, str]
    ) -> None:
        self.plan.append(
            {
                "op": "merge",
                "branch": other,
                "message": message,
                "author": list(who),
                "time": self.tick(rng),
            }
        )

    def worktree(self, write: Mapping[str, str]) -> None:
        self.plan.append({"op": "worktree", "write": dict(write)})

    def expire(self) -> None:
        self.plan.append({"op": "expire"})


def _py_function(rng: random.Random, taken: set[str]) -> tuple[str, str]:
    while True:
        name = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}"
        if name not in taken:
            taken.add(name)
            break
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


def _module_text(title: str, functions: list[str]) -> str:
    return f'"""{title}"""\n\n\n' + "\n\n".join(functions)


def _ini_text(settings: Mapping[str, int], section: str) -> str:
    return f"[{section}]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items())


def _changelog(entries: list[str]) -> str:
    return "# Changelog\n\n## Unreleased\n\n" + "".join(f"- {e}\n" for e in entries)


class _Project:
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
            funcs = [_py_function(rng, self.taken)[1] for _ in range(rng.randint(1, 3))]
            files[self.module_path(i)] = _module_text(f"{self.modules[i].capitalize()}.", funcs)
        return files

    def add_function(self, files: Mapping[str, str], index: int) -> tuple[dict[str, str], str]:
        path = self.module_path(index)
        name, code = _py_function(self.rng, self.taken)
        old = files.get(path)
        if old is None:
            new = _module_text(f"{self.modules[index].capitalize()}.", [code])
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


def _git_easy(rng: random.Random, repo: _Repo, proj: _Project, people) -> dict[str, Any]:
    """Detached HEAD with commits on it (and maybe uncommitted work) to bring onto a branch."""
    me = people[0]
    n_base = rng.randint(3, 5)
    files = proj.initial()
    repo.commit(rng, "Initial commit", rng.choice(people), files)
    for i in range(n_base - 1):
        write, subject = (
            proj.add_function(repo.files(), rng.randrange(3)) if i % 2 == 0 else proj.add_doc()
        )
        repo.commit(rng, subject, rng.choice(people), write)
    rebase = rng.random() < 0.5
    tag = f"v{rng.randint(0, 3)}.{rng.randint(1, 9)}.{rng.randint(0, 9)}"
    base = repo.tip
    repo.tag(tag, base)
    other = rng.choice(["release", "staging", "hotfix", "experiment"])
    repo.create_branch(other, repo.commits[base].parents[0])
    moved: list[str] = []
    if rebase:
        # main moved on after the tag; those commits only touch docs/ and README
        for _ in range(rng.randint(1, 2)):
            write, subject = proj.readme_section(repo.files()) if not moved else proj.add_doc()
            moved.append(repo.commit(rng, subject, rng.choice(people), write))
    main_before = repo.tip
    repo.detach(base)
    work: list[str] = []
    n_work = rng.randint(2, 3)
    indexes = rng.sample(range(3), 2) + [3]
    for i in range(n_work):
        write, subject = proj.add_function(repo.files(), indexes[i % len(indexes)])
        work.append(repo.commit(rng, subject, me, write))
    pending = None
    if rng.random() < 0.6:
        path = proj.module_path(indexes[0])
        name, code = _py_function(rng, proj.taken)
        content = repo.files()[path].rstrip("\n") + "\n\n\n" + code
        repo.worktree({path: content})
        pending = {
            "path": path,
            "content": content,
            "subject": f"Add {name} to {proj.modules[indexes[0]]}",
        }
    # main's files plus what the detached work changed (the two touch different files)
    base_files, tip_files = repo.files(base), repo.files(work[-1])
    expected = repo.files(main_before)
    expected.update({p: c for p, c in tip_files.items() if base_files.get(p) != c})
    if pending:
        expected[pending["path"]] = pending["content"]
    subjects = [repo.commits[s].subject for s in reversed(work)]
    history = ([pending["subject"]] if pending else []) + subjects
    history += [repo.commits[s].subject for s in _ancestry(repo, main_before)]
    changes = []
    for sha in work:
        before, after = repo.files(repo.commits[sha].parents[0]), repo.commits[sha].files
        changes.append(sorted(p for p in after if before.get(p) != after[p]))
    return {
        "main_subjects": history,
        "work_changes": changes,
        "rebase": rebase,
        "tag": tag,
        "tag_sha": base,
        "other": other,
        "other_sha": repo.branches[other],
        "main_before": main_before,
        "work": work,
        "work_subjects": subjects,
        "work_author": list(me),
        "pending": pending,
        "expected_files": expected,
        "moved_count": len(moved),
    }


# Conflict resolution rules of the medium scenario.
MERGE_RULES = ["theirs", "ours", "max", "union-sorted", "concat"]


def _git_medium(rng: random.Random, repo: _Repo, proj: _Project, people) -> dict[str, Any]:
    """An interrupted merge with conflicts to resolve by stated rules."""
    feature = (
        rng.choice(["feature", "topic", "wip", "dev"])
        + "/"
        + rng.choice(["tuning", "limits", "rollout", "cleanup", "hardening", "refresh", "sync"])
    )
    rules = rng.sample(MERGE_RULES, 3)
    ini_path = f"config/{rng.choice(['service', 'runtime', 'worker', 'limits'])}.ini"
    list_path = rng.choice(["allowed_hosts.txt", "requirements.txt"])
    log_path = rng.choice(["CHANGELOG.md", "NEWS.md", "HISTORY.md"])
    pyconst_path = f"{proj.pkg}/{rng.choice(['constants', 'defaults', 'settings'])}.py"
    files = proj.initial()
    keys = rng.sample(SETTING_KEYS, 7)
    ini = {k: rng.randint(2, 60) * 5 for k in keys}
    section = proj.name
    files[ini_path] = _ini_text(ini, section)
    if list_path == "requirements.txt":
        pool = sorted(f"{p}>={rng.randint(1, 9)}.{rng.randint(0, 20)}" for p in PACKAGES)
    else:
        pool = sorted(f"{h}.{d}" for h in HOSTS for d in DOMAINS)
    chosen = sorted(rng.sample(pool, 14))
    base_list, spare = chosen[::2], chosen[1::2]
    files[list_path] = "".join(f"{x}\n" for x in base_list)
    log_entries = [f"{rng.choice(VERBS).capitalize()} {rng.choice(NOUNS)} handling" for _ in "ab"]
    files[log_path] = _changelog(log_entries)
    consts = {k.upper(): rng.randint(1, 40) * 10 for k in rng.sample(SETTING_KEYS, 4)}
    files[pyconst_path] = '"""Tunable constants."""\n\n' + "".join(
        f"{k} = {v}\n" for k, v in consts.items()
    )
    repo.commit(rng, "Initial import", rng.choice(people), files)
    for _ in range(rng.randint(1, 3)):
        write, subject = proj.add_function(repo.files(), rng.randrange(3))
        repo.commit(rng, subject, rng.choice(people), write)
    base_files = repo.files()
    repo.create_branch(feature)

    changed_keys = rng.sample(keys, rng.randint(2, 4))
    vals: dict[str, dict[str, int]] = {"ours": {}, "theirs": {}}
    for i, k in enumerate(changed_keys):
        a, b = sorted(rng.sample([v for v in range(10, 400, 5) if v != ini[k]], 2))
        # each side wins at least one setting, so "larger" differs from both whole files
        if i == 1 or (i > 1 and rng.random() < 0.5):
            a, b = b, a
        vals["ours"][k], vals["theirs"][k] = a, b
    # list: both sides add at the same spot (a guaranteed conflict) plus elsewhere
    add_ours = set(rng.sample(spare, 3))
    add_theirs = set(rng.sample(spare, 3))
    while add_ours <= add_theirs or add_theirs <= add_ours:
        add_theirs = set(rng.sample(spare, 3))
    log_ours = [f"{rng.choice(VERBS).capitalize()} the {rng.choice(NOUNS)} cache" for _ in "ab"]
    log_theirs = [
        f"{rng.choice(VERBS).capitalize()} {rng.choice(NOUNS)} limits"
        for _ in range(rng.randint(1, 2))
    ]
    const_keys = list(consts)
    ck = rng.sample(const_keys, 2)

    def side(which: str) -> dict[str, str]:
        out: dict[str, str] = {}
        mine = {**ini, **vals[which]}
        out[ini_path] = _ini_text(mine, section)
        extra = add_ours if which == "ours" else add_theirs
        out[list_path] = "".join(f"{x}\n" for x in sorted(set(base_list) | extra))
        news = log_ours if which == "ours" else log_theirs
        out[log_path] = _changelog(news + log_entries)
        c = dict(consts)
        for i, k in enumerate(ck):
            c[k] = consts[k] + (10 * (i + 1) if which == "ours" else -5 * (i + 1))
        if which == "theirs":
            c[f"{rng.choice(NOUNS).upper()}_LIMIT"] = rng.randint(2, 90)
        out[pyconst_path] = '"""Tunable constants."""\n\n' + "".join(
            f"{k} = {v}\n" for k, v in c.items()
        )
        return out

    theirs_files = side("theirs")
    ours_files = side("ours")
    # feature branch: a non-conflicting commit, then the conflicting one
    repo.checkout(feature)
    write, subject = proj.add_doc()
    repo.commit(rng, subject, rng.choice(people), write)
    feature_doc = write
    repo.commit(
        rng,
        rng.choice(["Tune limits for the new rollout", "Adjust defaults", "Rework settings"]),
        rng.choice(people),
        theirs_files,
    )
    feature_tip = repo.tip
    repo.checkout(repo.branch)
    write, subject = proj.readme_section(repo.files())
    repo.commit(rng, subject, rng.choice(people), write)
    main_readme = write
    repo.commit(
        rng,
        rng.choice(["Update production settings", "Raise limits", "Retune configuration"]),
        rng.choice(people),
        ours_files,
    )
    main_tip = repo.tip
    repo.merge_conflicted(rng, feature, f"Merge branch '{feature}'", people[0])

    # the expected result of the merge
    expected = dict(base_files)
    expected.update(feature_doc)
    expected.update(main_readme)
    rule_of: dict[str, str] = {}
    descriptions: list[str] = []
    paths_by_rule = {
        "max": ini_path,
        "union-sorted": list_path,
        "concat": log_path,
    }
    # theirs/ours apply to whichever conflicted files the other rules do not claim
    free = [p for r, p in paths_by_rule.items() if r not in rules] + [pyconst_path]
    rng.shuffle(free)
    for rule in rules:
        path = paths_by_rule.get(rule) or free.pop()
        rule_of[path] = rule
    for path in free:  # files no rule claimed: take the feature branch's version
        rule_of[path] = "theirs"
    for path, rule in sorted(rule_of.items()):
        if rule == "theirs":
            expected[path] = theirs_files[path]
            descriptions.append(
                f"`{path}`: take the version from `{feature}` as a whole (the entire file "
                f"exactly as it is on `{feature}`)"
            )
        elif rule == "ours":
            expected[path] = ours_files[path]
            descriptions.append(
                f"`{path}`: keep the version from `{repo.branch}` as a whole (the entire file "
                f"exactly as it is on `{repo.branch}`)"
            )
        elif rule == "max":
            merged = dict(ini)
            for k in changed_keys:
                merged[k] = max(vals["ours"][k], vals["theirs"][k])
            expected[path] = _ini_text(merged, section)
            descriptions.append(
                f"`{path}`: for every setting that both branches changed, keep the larger "
                "of the two values; every other line as it is on both branches"
            )
        elif rule == "union-sorted":
            union = sorted(set(base_list) | add_ours | add_theirs)
            expected[path] = "".join(f"{x}\n" for x in union)
            descriptions.append(
                f"`{path}`: keep every entry from both branches, one per line, sorted "
                "alphabetically (byte order), each entry only once"
            )
        elif rule == "concat":
            expected[path] = _changelog(log_ours + log_theirs + log_entries)
            descriptions.append(
                f"`{path}`: keep the new entries of both branches: first those added on "
                f"`{repo.branch}`, then those added on `{feature}`, followed by the older "
                "entries as before"
            )
    return {
        "feature": feature,
        "feature_tip": feature_tip,
        "main_before": main_tip,
        "rules": descriptions,
        "rule_of": rule_of,
        "expected_files": expected,
        "ours_files": {p: ours_files[p] for p in rule_of},
        "theirs_files": {p: theirs_files[p] for p in rule_of},
    }


def _git_hard(rng: random.Random, repo: _Repo, proj: _Project, people) -> dict[str, Any]:
    """A deleted branch (its last commit amended once: a decoy) and a commit thrown away by a
    hard reset; the reflog is expired, so only the object database still has them."""
    topic = (
        rng.choice(["feature", "spike", "topic"])
        + "/"
        + rng.choice(
            ["exporter", "retry", "cache-warmup", "audit-log", "bulk-import", "quotas", "webhooks"]
        )
    )
    files = proj.initial()
    repo.commit(rng, "Initial commit", rng.choice(people), files)
    for i in range(rng.randint(2, 3)):
        write, subject = (
            proj.add_function(repo.files(), rng.randrange(3)) if i % 2 else proj.add_doc()
        )
        repo.commit(rng, subject, rng.choice(people), write)
    fork = repo.tip
    dev = people[1]
    # the topic branch: two commits, the last one amended once (the draft is the decoy)
    repo.create_branch(topic)
    repo.checkout(topic)
    write, subject1 = proj.add_function(repo.files(), 3)
    t1 = repo.commit(rng, subject1, dev, write)
    new_mod = proj.module_path(4)
    name, code = _py_function(rng, proj.taken)
    subject2 = f"{rng.choice(['Wire up', 'Finish', 'Complete', 'Add'])} {name}"
    draft_files = {new_mod: _module_text(f"{proj.modules[4].capitalize()}.", [code])}
    decoy = repo.commit(rng, subject2, dev, draft_files)
    repo.reset_hard(t1)
    name_b, code_b = _py_function(rng, proj.taken)
    final_files = {
        new_mod: _module_text(f"{proj.modules[4].capitalize()}.", [code, code_b]),
    }
    doc, _ = proj.add_doc()
    final_files.update(doc)
    t2 = repo.commit(rng, subject2, dev, final_files)
    topic_files = repo.files()
    repo.checkout(repo.branch)
    repo.delete_branch(topic)
    # main: a commit that a hard reset throws away, then new work on top
    me = people[2]
    idx = rng.randrange(3)
    write, lost_subject = proj.add_function(repo.files(), idx)
    lost = repo.commit(rng, lost_subject, me, write)
    lost_write = write
    repo.reset_hard(fork)
    after: list[str] = []
    for i in range(rng.randint(1, 2)):
        if i == 0:
            write, subject = proj.readme_section(repo.files())
        else:
            others = [j for j in range(3) if j != idx]
            write, subject = proj.add_function(repo.files(), rng.choice(others))
        after.append(repo.commit(rng, subject, rng.choice(people[3:]), write))
    repo.expire()
    expected = repo.files()
    expected.update(lost_write)
    return {
        "topic": topic,
        "topic_tip": t2,
        "topic_subjects": [subject2, subject1],
        "topic_files": topic_files,
        "lost": lost,
        "lost_subject": lost_subject,
        "lost_author": list(me),
        "main_before": repo.tip,
        "main_subjects": [lost_subject]
        + [repo.commits[s].subject for s in reversed(after)]
        + [repo.commits[s].subject for s in _ancestry(repo, fork)],
        "expected_files": expected,
        "decoy": decoy,
        "lost_changes": sorted(lost_write),
        "fork_subject": repo.commits[fork].subject,
        "topic_author": list(dev),
    }


def _ancestry(repo: _Repo, sha: str) -> list[str]:
    out = []
    while sha:
        out.append(sha)
        parents = repo.commits[sha].parents
        sha = parents[0] if parents else ""
    return out


@register
class GitRepair(Family):
    """A repository built in a broken state. easy: work committed on a detached HEAD (maybe
    plus uncommitted changes) to bring onto a branch; medium: an interrupted merge whose
    conflicts must be resolved by stated rules; hard: a deleted branch (with a decoy amended
    draft) and a hard-reset commit, both only findable with ``git fsck``."""

    name = "git-repair"
    title = (
        "Repair a git repository left in a broken state (detached work, half merge, lost commits)"
    )
    category = "version-control"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        proj = _Project(rng)
        main = rng.choice(["main", "master", "trunk", "develop"])
        root = rng.choice(["/srv", "/opt", "/home/dev", "/work"])
        path = f"{root}/{proj.name}"
        start = datetime(2023, 1, 1, tzinfo=timezone.utc) + timedelta(days=rng.randint(0, 600))
        repo = _Repo(path=path, branch=main, clock=int(start.timestamp()))
        people = _people(rng, 6)
        scenario = {"easy": "detached", "medium": "merge", "hard": "lost"}[difficulty.value]
        if scenario == "detached":
            info = _git_easy(rng, repo, proj, people)
            secrets = [info["work"][-1]]
        elif scenario == "merge":
            info = _git_medium(rng, repo, proj, people)
            secrets = []
        else:
            info = _git_hard(rng, repo, proj, people)
            secrets = [info["topic_tip"], info["lost"]]
        plan = {"ops": repo.plan, "end_time": repo.clock + 3600}
        user = people[0]
        return Draft(
            context={
                "scenario": scenario,
                "repo": path,
                "main": main,
                "project": proj.name,
                "user_name": user[0],
                "user_email": user[1],
                "info": info,
                "branches": dict(sorted(repo.branches.items())),
            },
            files={"environment/plan.json": json.dumps(plan, indent=1, sort_keys=True) + "\n"},
            secrets=secrets,
            outputs=[path + "/"],
            tags=[
                "git",
                {"detached": "detached-head", "merge": "merge-conflict", "lost": "fsck"}[scenario],
            ],
        )


# ---------------------------------------------------------------------------------------------
# sqlite-query
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Theme:
    """Names of a star schema: parents (customers...) place events (orders...) made of lines
    (order items...) that refer to items (products...)."""

    key: str
    about: str
    parent: str
    parent_one: str
    pname: str
    pgroup: str
    pgroups: tuple[str, ...]
    event: str
    event_one: str
    fk: str
    time: str
    status: str
    statuses: tuple[str, ...]
    line: str
    line_fk: str
    item_fk: str
    qty: str
    price: str
    disc: str
    item: str
    iname: str
    igroup: str
    igroups: tuple[str, ...]
    company_names: bool = False


THEMES = [
    _Theme(
        "shop", "a web shop's customers, orders, order items and products",
        "customers", "customer", "name", "country", ("DE", "FR", "US", "NL", "SE", "ES", "IT", "PL"),
        "orders", "order", "customer_id", "placed_at", "status",
        ("paid", "pending", "cancelled", "refunded"),
        "order_items", "order_id", "product_id", "quantity", "unit_price_cents", "discount_cents",
        "products", "name", "category", ("books", "garden", "toys", "audio", "kitchen", "sports"),
    ),
    _Theme(
        "wholesale", "a wholesaler's clients, invoices, invoice lines and stock-keeping units",
        "clients", "client", "company", "region",
        ("north", "south", "east", "west", "central", "islands"),
        "invoices", "invoice", "client_id", "issued_at", "state",
        ("settled", "open", "void", "disputed"),
        "invoice_lines", "invoice_id", "sku_id", "units", "price_cents", "rebate_cents",
        "skus", "label", "family", ("fasteners", "adhesives", "tools", "paint", "timber", "safety"),
        True,
    ),
    _Theme(
        "cafe", "a cafe chain's loyalty members, tickets, ticket lines and menu items",
        "members", "member", "full_name", "city",
        ("Lyon", "Porto", "Leeds", "Graz", "Turku", "Gdansk", "Bilbao", "Utrecht"),
        "tickets", "ticket", "member_id", "opened_at", "status",
        ("closed", "open", "voided", "comped"),
        "ticket_lines", "ticket_id", "menu_item_id", "qty", "price_cents", "discount_cents",
        "menu_items", "title", "section", ("coffee", "tea", "pastry", "sandwich", "juice", "soup"),
    ),
    _Theme(
        "travel", "a travel agency's travellers, bookings, booking segments and routes",
        "travelers", "traveler", "name", "home_country",
        ("AT", "BE", "CH", "DK", "FI", "IE", "NO", "PT"),
        "bookings", "booking", "traveler_id", "booked_at", "status",
        ("confirmed", "held", "cancelled", "refunded"),
        "booking_segments", "booking_id", "route_id", "seats", "fare_cents", "voucher_cents",
        "routes", "code", "carrier", ("aerolux", "skyhop", "railnet", "ferrylink", "busway"),
    ),
    _Theme(
        "tickets", "an event organiser's attendees, purchases, purchase lines and ticket types",
        "attendees", "attendee", "name", "city",
        ("Austin", "Denver", "Boise", "Tulsa", "Omaha", "Reno", "Tampa", "Fresno"),
        "purchases", "purchase", "attendee_id", "purchased_at", "state",
        ("completed", "reserved", "expired", "refunded"),
        "purchase_lines", "purchase_id", "ticket_type_id", "tickets", "price_cents", "promo_cents",
        "ticket_types", "name", "tier", ("standard", "premium", "vip", "student", "backstage"),
    ),
    _Theme(
        "garage", "a car repair shop's vehicle owners, work orders, parts used and parts",
        "owners", "owner", "name", "town",
        ("Ashby", "Brigg", "Corfe", "Dunbar", "Elgin", "Frome", "Goole", "Hythe"),
        "work_orders", "work order", "owner_id", "opened_at", "status",
        ("invoiced", "quoted", "cancelled", "warranty"),
        "work_order_parts", "work_order_id", "part_id", "qty", "unit_cost_cents", "credit_cents",
        "parts", "part_name", "supplier", ("boschley", "valeon", "denko", "mahlex", "febra"),
    ),
]  # fmt: skip
COMPANY_WORDS = [
    "Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Tyrell", "Cyberdyne", "Soylent",
    "Hooli", "Vandelay", "Wonka", "Gringotts", "Oscorp", "Monarch", "Nakatomi", "Blue Sun",
]  # fmt: skip
COMPANY_SUFFIX = ["Ltd", "GmbH", "& Sons", "Supplies", "Trading", "Group", "Works", "Co"]
ITEM_WORDS = [
    "alpha", "bravo", "cedar", "delta", "echo", "fjord", "gale", "harbor", "iris", "jade",
    "kilo", "lumen", "mesa", "nova", "onyx", "pine", "quartz", "ridge", "sierra", "terra",
]  # fmt: skip


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S")


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def _sql_lit(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, int):
        return str(v)
    return "'" + str(v).replace("'", "''") + "'"


def _insert_sql(table: str, cols: list[str], rows: list[tuple[Any, ...]]) -> list[str]:
    out = []
    for start in range(0, len(rows), 200):
        chunk = rows[start : start + 200]
        values = ",\n".join("(" + ", ".join(_sql_lit(v) for v in r) + ")" for r in chunk)
        out.append(f"INSERT INTO {table} ({', '.join(cols)}) VALUES\n{values};")
    return out


MONEY_SQL = "printf('%d.%02d', {0} / 100, {0} % 100)"


@dataclass
class _Shop:
    """The generated data of one sqlite-query database."""

    theme: _Theme
    with_disc: bool
    parents: list[tuple[int, str, str | None]] = field(default_factory=list)
    items: list[tuple[int, str, str | None]] = field(default_factory=list)
    events: list[tuple[int, int, datetime, str]] = field(default_factory=list)
    lines: list[tuple[int, int, int, int, int, int | None]] = field(default_factory=list)
    prices: dict[int, int] = field(default_factory=dict)
    """List prices of the items random events may use."""
    reserved: list[int] = field(default_factory=list)
    """Parents random events never use (the questions plant ties and traps on them)."""
    active: list[int] = field(default_factory=list)

    @property
    def good(self) -> str:
        return self.theme.statuses[0]

    def tables(self) -> dict[str, tuple[list[str], list[tuple[Any, ...]]]]:
        t = self.theme
        line_cols = [
            "id",
            t.line_fk,
            t.item_fk,
            t.qty,
            t.price,
            *([t.disc] if self.with_disc else []),
        ]
        return {
            t.parent: (["id", t.pname, t.pgroup], list(self.parents)),
            t.item: (["id", t.iname, t.igroup], list(self.items)),
            t.event: (
                ["id", t.fk, t.time, t.status],
                [(i, p, _ts(when), s) for i, p, when, s in self.events],
            ),
            t.line: (line_cols, [ln if self.with_disc else ln[:5] for ln in self.lines]),
        }

    def schema(self) -> str:
        t = self.theme
        statuses = ", ".join(_sql_lit(s) for s in t.statuses)
        disc = (
            f",\n    {t.disc} INTEGER CHECK ({t.disc} >= 0)  -- discount on the whole line"
            if self.with_disc
            else ""
        )
        return (
            f"CREATE TABLE {t.parent} (\n    id INTEGER PRIMARY KEY,\n    {t.pname} TEXT NOT NULL,"
            f"\n    {t.pgroup} TEXT\n);\n"
            f"CREATE TABLE {t.item} (\n    id INTEGER PRIMARY KEY,\n    {t.iname} TEXT NOT NULL,"
            f"\n    {t.igroup} TEXT\n);\n"
            f"CREATE TABLE {t.event} (\n    id INTEGER PRIMARY KEY,\n"
            f"    {t.fk} INTEGER NOT NULL REFERENCES {t.parent}(id),\n"
            f"    {t.time} TEXT NOT NULL,  -- 'YYYY-MM-DD HH:MM:SS', UTC\n"
            f"    {t.status} TEXT NOT NULL CHECK ({t.status} IN ({statuses}))\n);\n"
            f"CREATE TABLE {t.line} (\n    id INTEGER PRIMARY KEY,\n"
            f"    {t.line_fk} INTEGER NOT NULL REFERENCES {t.event}(id),\n"
            f"    {t.item_fk} INTEGER NOT NULL REFERENCES {t.item}(id),\n"
            f"    {t.qty} INTEGER NOT NULL,\n    {t.price} INTEGER NOT NULL{disc}\n);"
        )

    def seed_sql(self) -> str:
        out = ["PRAGMA foreign_keys = ON;", "BEGIN;", self.schema()]
        for table, (cols, rows) in self.tables().items():
            out += _insert_sql(table, cols, rows)
        out.append("COMMIT;")
        return "\n".join(out) + "\n"

    def digests(self) -> dict[str, str]:
        return {
            table: hashlib.sha256(repr(rows).encode()).hexdigest()
            for table, (_, rows) in self.tables().items()
        }

    def add_event(
        self,
        rng: random.Random,
        parent: int,
        when: datetime,
        status: str | None = None,
        lines: list[tuple[int, int, int, int | None]] | None = None,
    ) -> list[tuple[int, int, int, int | None]]:
        eid = len(self.events) + 1
        self.events.append((eid, parent, when, status or self.good))
        if lines is None:
            lines = []
            for item in rng.sample(sorted(self.prices), rng.randint(1, 4)):
                qty = rng.randint(1, 5)
                price = self.prices[item] - rng.choice([0, 0, 0, 25, 50, 100])
                disc = None
                if self.with_disc and rng.random() < 0.35:
                    disc = rng.choice([0, rng.randint(1, qty * price // 4)])
                lines.append((item, qty, price, disc))
        for item, qty, price, disc in lines:
            self.lines.append((len(self.lines) + 1, eid, item, qty, price, disc))
        return lines

    def plant_boundaries(self, rng: random.Random, lo: datetime, hi: datetime) -> None:
        """Good events just inside and just outside [lo, hi] (hi: the range's last second),
        and one late on the last day (a date-only upper bound misses it)."""
        last_day = hi.replace(hour=rng.randint(9, 22), minute=rng.randint(0, 59))
        for when in (lo, lo - timedelta(seconds=1), hi, hi + timedelta(seconds=1), last_day):
            self.add_event(rng, rng.choice(self.active), when)

    # views of the data for the expected answers
    def net(self, net: bool = True) -> dict[int, int]:
        """Per event: the sum of its lines (minus discounts when ``net``)."""
        out: dict[int, int] = {}
        for _, ev, _, qty, price, disc in self.lines:
            out[ev] = out.get(ev, 0) + qty * price - ((disc or 0) if net else 0)
        return out

    def good_events(self, lo: datetime | None = None, hi: datetime | None = None):
        for eid, parent, when, status in self.events:
            if status == self.good and (lo is None or lo <= when <= hi):
                yield eid, parent, when


def _make_shop(rng: random.Random, theme: _Theme, level: str, year: int) -> _Shop:
    n_parents = {"easy": 24, "medium": 40, "hard": 60}[level] + rng.randint(0, 10)
    n_items = rng.randint(12, 22)
    n_events = {"easy": 160, "medium": 380, "hard": 650}[level] + rng.randint(0, 80)
    shop = _Shop(theme, with_disc=level == "hard")
    names: set[str] = set()
    while len(shop.parents) < n_parents:
        if theme.company_names:
            name = f"{rng.choice(COMPANY_WORDS)} {rng.choice(COMPANY_SUFFIX)}"
        else:
            name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        if level != "easy" and rng.random() < 0.12:
            first, *rest = name.split()
            if theme.company_names:
                name = rng.choice([f"{name}, Inc", f'{name} "International"'])
            else:
                name = rng.choice([f"{' '.join(rest)}, {first}", f'{name} "Jr"'])
        if name in names:
            continue
        names.add(name)
        group: str | None = rng.choice(theme.pgroups)
        if level == "hard" and rng.random() < 0.1:
            group = None
        shop.parents.append((len(shop.parents) + 1, name, group))
    for i in range(1, n_items + 1):
        igroup: str | None = rng.choice(theme.igroups)
        if level == "hard" and (i == 1 or rng.random() < 0.1):
            igroup = None
        label = f"{rng.choice(ITEM_WORDS).capitalize()} {rng.choice(ITEM_WORDS)}-{i:02d}"
        shop.items.append((i, label, igroup))
        shop.prices[i] = rng.randint(150, 9000)
    start = datetime(year - 1, 10, 1)
    span = int((datetime(year + 1, 3, 31) - start).total_seconds())
    everyone = list(range(1, n_parents + 1))
    shop.reserved = sorted(rng.sample(everyone, 6))
    never = set(rng.sample([p for p in everyone if p not in shop.reserved], 3))
    shop.active = [p for p in everyone if p not in shop.reserved and p not in never]
    for _ in range(n_events):
        when = start + timedelta(seconds=rng.randint(0, span))
        status = rng.choices(theme.statuses, [70, 10, 10, 10])[0]
        shop.add_event(rng, rng.choice(shop.active), when, status)
    return shop


@dataclass
class _Question:
    slug: str
    summary: str
    rules: list[str]
    header: list[str]
    columns: list[str]
    order: str
    sql: str
    wrong: list[str]
    """Three near-miss queries (the mutations), each wrong on this data."""
    rows: list[list[str]] = field(default_factory=list)


def _range_text(lo: datetime, hi: datetime) -> str:
    return (
        f"from `{_ts(lo)}` through `{_ts(hi)}`, both inclusive (every moment of the days "
        f"{lo:%Y-%m-%d} to {hi:%Y-%m-%d})"
    )


def _pick_range(rng: random.Random, year: int) -> tuple[datetime, datetime]:
    kind = rng.choice(["quarter", "months", "days"])
    if kind == "quarter":
        q = rng.randint(1, 4)
        lo = datetime(year, 3 * q - 2, 1)
        hi = datetime(year + (q == 4), (3 * q) % 12 + 1, 1) - timedelta(seconds=1)
    elif kind == "months":
        m = rng.randint(1, 8)
        lo = datetime(year, m, 1)
        hi = datetime(year, m + rng.randint(2, 4), 1) - timedelta(seconds=1)
    else:
        lo = datetime(year, 1, 1) + timedelta(days=rng.randint(0, 200))
        hi = lo + timedelta(days=rng.randint(45, 120), hours=23, minutes=59, seconds=59)
    return lo, hi


def _between(col: str, lo: datetime, hi: datetime) -> str:
    return f"{col} >= '{_ts(lo)}' AND {col} <= '{_ts(hi)}'"


def _between_dates(col: str, lo: datetime, hi: datetime) -> str:
    """The classic mistake: a date-only upper bound drops the last day's events."""
    return f"{col} BETWEEN '{lo:%Y-%m-%d}' AND '{hi:%Y-%m-%d}'"


def _q_status_year(rng: random.Random, shop: _Shop, year: int) -> _Question:
    t = shop.theme
    lo, hi = datetime(year, 1, 1), datetime(year, 12, 31, 23, 59, 59)
    shop.plant_boundaries(rng, lo, hi)
    counts: dict[str, tuple[int, set[int]]] = {}
    for _, parent, when, status in shop.events:
        if lo <= when <= hi:
            n, who = counts.get(status, (0, set()))
            counts[status] = (n + 1, who | {parent})
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    sql = f"""SELECT {t.status}, COUNT(*) AS n, COUNT(DISTINCT {t.fk})
FROM {t.event}
WHERE {{where}}
GROUP BY {t.status}
ORDER BY n DESC, {t.status} ASC"""
    return _Question(
        slug=f"{t.event}_by_{t.status}_{year}",
        summary=f"how the {t.event} of the year {year} break down by `{t.status}`.",
        rules=[
            f"Count only {t.event} whose `{t.time}` falls in the year {year}, that is "
            + _range_text(lo, hi)
            + ".",
            f"Include one row per `{t.status}` value that occurs among those {t.event}.",
        ],
        header=[t.status, t.event, f"distinct_{t.parent}"],
        columns=[
            f"`{t.status}`: the status value, exactly as stored.",
            f"`{t.event}`: how many {t.event} of {year} have that status.",
            f"`distinct_{t.parent}`: how many different {t.parent} those {t.event} belong to.",
        ],
        order=f"Order the rows by `{t.event}`, highest first; ties by `{t.status}` ascending.",
        sql=sql.format(where=_between(t.time, lo, hi)),
        wrong=[
            sql.format(where=_between_dates(t.time, lo, hi)),
            sql.format(where=_between(t.time, lo, hi)).replace(
                f"COUNT(DISTINCT {t.fk})", "COUNT(*)"
            ),
            sql.format(where=f"{t.time} >= '{_ts(lo)}' AND {t.time} < '{_ts(hi)}'"),
        ],
        rows=[[s, str(n), str(len(who))] for s, (n, who) in ranked],
    )


def _q_parent_counts(rng: random.Random, shop: _Shop, year: int) -> _Question:
    t = shop.theme
    # two reserved parents with the same count (a tie to break by id); one whose events all
    # have other statuses (no row)
    n = rng.randint(2, 4)
    for parent in shop.reserved[:2]:
        for _ in range(n):
            when = datetime(year, 1, 1) + timedelta(minutes=rng.randint(0, 300 * 24 * 60))
            shop.add_event(rng, parent, when)
    for status in t.statuses[1:]:
        shop.add_event(rng, shop.reserved[2], datetime(year, 5, 5, 10), status)
    counts: dict[int, int] = {}
    for _, parent, _ in shop.good_events():
        counts[parent] = counts.get(parent, 0) + 1
    names = {p: name for p, name, _ in shop.parents}
    col = f"{shop.good}_{t.event}"
    sql = f"""SELECT p.id, p.{t.pname}, COUNT(e.id) AS n
FROM {t.parent} p {{join}} {t.event} e ON e.{t.fk} = p.id{{cond}}
GROUP BY p.id{{having}}
ORDER BY n DESC, p.id {{direction}}"""
    good = f" AND e.{t.status} = '{shop.good}'"
    return _Question(
        slug=f"{shop.good}_{t.event}_per_{t.parent_one}",
        summary=f"for every {t.parent_one}, how many of their {t.event} have the "
        f"`{t.status}` `{shop.good}`.",
        rules=[
            f"Count only {t.event} whose `{t.status}` is `{shop.good}` (of any date).",
            f"Include one row per {t.parent_one} with at least one such "
            f"{t.event_one}, and no other rows.",
        ],
        header=[f"{t.parent_one}_id", t.pname, col],
        columns=[
            f"`{t.parent_one}_id`: the {t.parent_one}'s `id`.",
            f"`{t.pname}`: the {t.parent_one}'s `{t.pname}`, exactly as stored.",
            f"`{col}`: the number of such {t.event}.",
        ],
        order=f"Order the rows by `{col}`, highest first; ties by `{t.parent_one}_id` ascending.",
        sql=sql.format(join="JOIN", cond=good, having="", direction="ASC"),
        wrong=[
            sql.format(join="JOIN", cond="", having="", direction="ASC"),
            sql.format(join="JOIN", cond=good, having="", direction="DESC"),
            sql.format(join="LEFT JOIN", cond=good, having="", direction="ASC"),
        ],
        rows=[
            [str(p), names[p], str(c)]
            for p, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
    )


def _q_group_units(rng: random.Random, shop: _Shop, year: int) -> _Question:
    t = shop.theme
    lo, hi = datetime(year, 1, 1), datetime(year, 12, 31, 23, 59, 59)
    shop.plant_boundaries(rng, lo, hi)
    shop.add_event(rng, shop.reserved[0], datetime(year, 6, 1, 12), t.statuses[1])
    groups = {i: g for i, _, g in shop.items}
    good = {eid for eid, _, _ in shop.good_events(lo, hi)}
    units: dict[str, int] = {}
    for _, ev, item, qty, _, _ in shop.lines:
        if ev in good:
            units[groups[item]] = units.get(groups[item], 0) + qty
    sql = f"""SELECT i.{t.igroup}, {{agg}} AS units
FROM {t.line} l
JOIN {t.event} e ON e.id = l.{t.line_fk}
JOIN {t.item} i ON i.id = l.{t.item_fk}
WHERE {{where}}
GROUP BY i.{t.igroup}
ORDER BY units DESC, i.{t.igroup} ASC"""
    status = f"e.{t.status} = '{shop.good}' AND "
    return _Question(
        slug=f"{t.igroup}_{t.qty}_{year}",
        summary=f"the total `{t.qty}` of each `{t.igroup}` of {t.item} in the "
        f"`{shop.good}` {t.event} of {year}.",
        rules=[
            f"Count only {t.event} whose `{t.status}` is `{shop.good}` and whose `{t.time}` "
            f"falls in the year {year}, that is " + _range_text(lo, hi) + ".",
            f"Include one row per `{t.igroup}` with at least one such line.",
        ],
        header=[t.igroup, f"total_{t.qty}"],
        columns=[
            f"`{t.igroup}`: the value of {t.item}.`{t.igroup}`, exactly as stored.",
            f"`total_{t.qty}`: the sum of `{t.qty}` over the qualifying {t.line} rows of "
            f"{t.item} of that `{t.igroup}`.",
        ],
        order=f"Order the rows by `total_{t.qty}`, highest first; ties by `{t.igroup}` ascending.",
        sql=sql.format(agg=f"SUM(l.{t.qty})", where=status + _between("e." + t.time, lo, hi)),
        wrong=[
            sql.format(agg=f"SUM(l.{t.qty})", where=status + _between_dates("e." + t.time, lo, hi)),
            sql.format(agg="COUNT(*)", where=status + _between("e." + t.time, lo, hi)),
            sql.format(agg=f"SUM(l.{t.qty})", where=_between("e." + t.time, lo, hi)),
        ],
        rows=[[g, str(u)] for g, u in sorted(units.items(), key=lambda kv: (-kv[1], kv[0]))],
    )


def _plant_tie(rng: random.Random, shop: _Shop, lo: datetime, hi: datetime, k: int) -> list[int]:
    """Give two reserved parents identical sets of k big good events in [lo, hi], the first
    one late on the last day (a date-only upper bound loses it); returns the two."""
    pair = shop.reserved[:2]
    big = [
        (item, rng.randint(6, 9), shop.prices[item] * 3, None)
        for item in rng.sample(sorted(shop.prices), 2)
    ]
    span = int((hi - lo).total_seconds())
    for i in range(k):
        if i == 0:
            when = hi - timedelta(seconds=rng.randint(3600, 20 * 3600))
        else:
            when = lo + timedelta(seconds=rng.randint(3600, span - 3600))
        shop.add_event(rng, pair[0], when, lines=big)
        shop.add_event(rng, pair[1], when + timedelta(minutes=rng.randint(1, 50)), lines=big)
    return pair


def _q_parent_revenue(rng: random.Random, shop: _Shop, year: int) -> _Question:
    t = shop.theme
    lo, hi = _pick_range(rng, year)
    shop.plant_boundaries(rng, lo, hi)
    _plant_tie(rng, shop, lo, hi, 1)
    shop.add_event(rng, shop.reserved[2], lo + timedelta(hours=30), t.statuses[2])
    amounts = shop.net(False)
    names = {p: name for p, name, _ in shop.parents}
    per: dict[int, tuple[int, int]] = {}
    for eid, parent, _ in shop.good_events(lo, hi):
        n, c = per.get(parent, (0, 0))
        per[parent] = (n + 1, c + amounts[eid])
    ranked = sorted(per.items(), key=lambda kv: (-kv[1][1], kv[0]))
    sql = f"""SELECT id, {t.pname}, n, {MONEY_SQL.format("cents")}
FROM (
    SELECT p.id, p.{t.pname}, {{count}} AS n, SUM(l.{t.qty} * l.{t.price}) AS cents
    FROM {t.parent} p
    JOIN {t.event} e ON e.{t.fk} = p.id
    JOIN {t.line} l ON l.{t.line_fk} = e.id
    WHERE {{where}}
    GROUP BY p.id
)
ORDER BY cents DESC, id ASC"""
    status = f"e.{t.status} = '{shop.good}' AND "
    right = status + _between("e." + t.time, lo, hi)
    return _Question(
        slug=f"{t.parent_one}_revenue_{lo:%Y%m%d}_{hi:%Y%m%d}",
        summary=f"the revenue of every {t.parent_one} in a period.",
        rules=[
            f"Count only {t.event} whose `{t.status}` is `{shop.good}` and whose `{t.time}` falls "
            + _range_text(lo, hi)
            + ".",
            f"The revenue of {_a(t.event_one)} is the sum over its {t.line} of "
            f"`{t.qty} * {t.price}`.",
            f"Include one row per {t.parent_one} with at least one such {t.event_one}, and no "
            "other rows.",
        ],
        header=[f"{t.parent_one}_id", t.pname, t.event, "revenue"],
        columns=[
            f"`{t.parent_one}_id`: the {t.parent_one}'s `id`.",
            f"`{t.pname}`: the {t.parent_one}'s `{t.pname}`, exactly as stored.",
            f"`{t.event}`: how many qualifying {t.event} the {t.parent_one} has.",
            "`revenue`: the total revenue of those "
            f"{t.event} in currency units (cents / 100) with exactly two decimals and no "
            "currency sign or thousands separator, e.g. `1234.50`.",
        ],
        order=f"Order the rows by revenue, highest first; rows with equal revenue by "
        f"`{t.parent_one}_id` ascending.",
        sql=sql.format(count="COUNT(DISTINCT e.id)", where=right),
        wrong=[
            sql.format(
                count="COUNT(DISTINCT e.id)",
                where=status + _between_dates("e." + t.time, lo, hi),
            ),
            sql.format(count="COUNT(DISTINCT e.id)", where=_between("e." + t.time, lo, hi)),
            sql.format(count="COUNT(*)", where=right),
        ],
        rows=[[str(p), names[p], str(n), _money(c)] for p, (n, c) in ranked],
    )


def _q_monthly_groups(rng: random.Random, shop: _Shop, year: int) -> _Question:
    t = shop.theme
    lo, hi = datetime(year, 1, 1), datetime(year, 12, 31, 23, 59, 59)
    shop.plant_boundaries(rng, lo, hi)
    groups = {i: g for i, _, g in shop.items}
    when_of = {eid: when for eid, _, when in shop.good_events(lo, hi)}
    cells: dict[tuple[str, str], tuple[set[int], int, int]] = {}
    for _, ev, item, qty, price, _ in shop.lines:
        if ev in when_of:
            key = (f"{when_of[ev]:%Y-%m}", groups[item] or "")
            evs, u, c = cells.get(key, (set(), 0, 0))
            cells[key] = (evs | {ev}, u + qty, c + qty * price)
    ranked = sorted(cells.items(), key=lambda kv: (kv[0][0], -kv[1][2], kv[0][1]))
    sql = f"""SELECT month, grp, n, units, {MONEY_SQL.format("cents")}
FROM (
    SELECT substr(e.{t.time}, 1, 7) AS month, i.{t.igroup} AS grp,
           COUNT(DISTINCT e.id) AS n, {{units}} AS units,
           SUM(l.{t.qty} * l.{t.price}) AS cents
    FROM {t.event} e
    JOIN {t.line} l ON l.{t.line_fk} = e.id
    JOIN {t.item} i ON i.id = l.{t.item_fk}
    WHERE {{where}}
    GROUP BY month, grp
)
ORDER BY month ASC, cents DESC, grp ASC"""
    status = f"e.{t.status} = '{shop.good}' AND "
    right = status + _between("e." + t.time, lo, hi)
    return _Question(
        slug=f"monthly_{t.igroup}_{year}",
        summary=f"a monthly report of the year {year} per `{t.igroup}` of {t.item}.",
        rules=[
            f"Count only {t.event} whose `{t.status}` is `{shop.good}` and whose `{t.time}` "
            f"falls in {year}, that is " + _range_text(lo, hi) + ".",
            f"{_a(t.event_one).capitalize()} belongs to the month of its `{t.time}`. Report one row per month "
            f"and `{t.igroup}` that has at least one qualifying {t.line} row ({_a(t.event_one)} "
            f"with lines of several `{t.igroup}` values counts for each of them).",
        ],
        header=["month", t.igroup, t.event, f"total_{t.qty}", "revenue"],
        columns=[
            "`month`: `YYYY-MM`.",
            f"`{t.igroup}`: the {t.item}' `{t.igroup}`, exactly as stored.",
            f"`{t.event}`: how many different qualifying {t.event} have at least one line of "
            f"that `{t.igroup}` in that month.",
            f"`total_{t.qty}`: the sum of `{t.qty}` over those lines.",
            f"`revenue`: the sum of `{t.qty} * {t.price}` over those lines, in currency units "
            "(cents / 100) with exactly two decimals, e.g. `1234.50`.",
        ],
        order=f"Order the rows by `month` ascending, then by revenue, highest first, then by "
        f"`{t.igroup}` ascending.",
        sql=sql.format(units=f"SUM(l.{t.qty})", where=right),
        wrong=[
            sql.format(
                units=f"SUM(l.{t.qty})", where=status + _between_dates("e." + t.time, lo, hi)
            ),
            sql.format(units="COUNT(*)", where=right),
            sql.format(units=f"SUM(l.{t.qty})", where=_between("e." + t.time, lo, hi)),
        ],
        rows=[[m, g, str(len(evs)), str(u), _money(c)] for (m, g), (evs, u, c) in ranked],
    )


def _q_parent_groups(rng: random.Random, shop: _Shop, year: int) -> _Question:
    t = shop.theme
    lo, hi = _pick_range(rng, year)
    shop.plant_boundaries(rng, lo, hi)
    shop.add_event(rng, shop.reserved[0], lo + timedelta(hours=5), t.statuses[1])
    amounts = shop.net(False)
    pgroup = {p: g for p, _, g in shop.parents}
    cells: dict[str, tuple[set[int], int, int]] = {}
    for eid, parent, _ in shop.good_events(lo, hi):
        who, n, c = cells.get(pgroup[parent] or "", (set(), 0, 0))
        cells[pgroup[parent] or ""] = (who | {parent}, n + 1, c + amounts[eid])
    ranked = sorted(cells.items(), key=lambda kv: (-kv[1][2], kv[0]))
    sql = f"""SELECT grp, who, n, {MONEY_SQL.format("cents")}
FROM (
    SELECT p.{t.pgroup} AS grp, {{who}} AS who, COUNT(DISTINCT e.id) AS n,
           SUM(l.{t.qty} * l.{t.price}) AS cents
    FROM {t.parent} p
    JOIN {t.event} e ON e.{t.fk} = p.id
    JOIN {t.line} l ON l.{t.line_fk} = e.id
    WHERE {{where}}
    GROUP BY p.{t.pgroup}
)
ORDER BY cents DESC, grp ASC"""
    status = f"e.{t.status} = '{shop.good}' AND "
    right = status + _between("e." + t.time, lo, hi)
    return _Question(
        slug=f"{t.pgroup}_revenue_{lo:%Y%m%d}_{hi:%Y%m%d}",
        summary=f"the revenue per `{t.pgroup}` of the {t.parent} in a period.",
        rules=[
            f"Count only {t.event} whose `{t.status}` is `{shop.good}` and whose `{t.time}` falls "
            + _range_text(lo, hi)
            + ".",
            f"The revenue of {_a(t.event_one)} is the sum over its {t.line} of "
            f"`{t.qty} * {t.price}`; {_a(t.event_one)} counts for the `{t.pgroup}` of its "
            f"{t.parent_one}.",
            f"Include one row per `{t.pgroup}` with at least one such {t.event_one}.",
        ],
        header=[t.pgroup, t.parent, t.event, "revenue"],
        columns=[
            f"`{t.pgroup}`: the value of {t.parent}.`{t.pgroup}`, exactly as stored.",
            f"`{t.parent}`: how many different {t.parent} of that `{t.pgroup}` have qualifying "
            f"{t.event}.",
            f"`{t.event}`: how many qualifying {t.event} they have.",
            "`revenue`: their total revenue in currency units (cents / 100) with exactly two "
            "decimals and no currency sign, e.g. `1234.50`.",
        ],
        order=f"Order the rows by revenue, highest first; ties by `{t.pgroup}` ascending.",
        sql=sql.format(who="COUNT(DISTINCT p.id)", where=right),
        wrong=[
            sql.format(
                who="COUNT(DISTINCT p.id)", where=status + _between_dates("e." + t.time, lo, hi)
            ),
            sql.format(who="COUNT(*)", where=right),
            sql.format(who="COUNT(DISTINCT p.id)", where=_between("e." + t.time, lo, hi)),
        ],
        rows=[[g, str(len(who)), str(n), _money(c)] for g, (who, n, c) in ranked],
    )


def _q_net_having(rng: random.Random, shop: _Shop, year: int) -> _Question:
    t = shop.theme
    lo, hi = _pick_range(rng, year)
    k = rng.randint(2, 3)
    shop.plant_boundaries(rng, lo, hi)
    _plant_tie(rng, shop, lo, hi, k)
    # a big spender with one qualifying event too few, and one whose k-th is a second late
    r2, r3 = shop.reserved[2], shop.reserved[3]
    span = int((hi - lo).total_seconds())
    for _ in range(k - 1):
        when = lo + timedelta(seconds=rng.randint(3600, span - 3600))
        item = rng.choice(sorted(shop.prices))
        shop.add_event(rng, r2, when, lines=[(item, 9, shop.prices[item] * 4, None)])
        shop.add_event(rng, r3, when + timedelta(hours=2))
    shop.add_event(rng, r3, hi + timedelta(seconds=1))
    shop.add_event(rng, r2, hi - timedelta(hours=3), t.statuses[3])
    amounts = shop.net(True)
    names = {p: (name, g) for p, name, g in shop.parents}
    per: dict[int, tuple[int, int]] = {}
    for eid, parent, _ in shop.good_events(lo, hi):
        n, c = per.get(parent, (0, 0))
        per[parent] = (n + 1, c + amounts[eid])
    ranked = sorted(
        ((p, v) for p, v in per.items() if v[0] >= k), key=lambda kv: (-kv[1][1], kv[0])
    )
    sql = f"""SELECT id, {t.pname}, grp, n, {MONEY_SQL.format("cents")}
FROM (
    SELECT p.id, p.{t.pname}, {{grp}} AS grp, COUNT(DISTINCT e.id) AS n,
           SUM({{amount}}) AS cents
    FROM {t.parent} p
    JOIN {t.event} e ON e.{t.fk} = p.id
    JOIN {t.line} l ON l.{t.line_fk} = e.id
    WHERE {{where}}
    GROUP BY p.id
    {{having}}
)
ORDER BY cents DESC, id ASC"""
    status = f"e.{t.status} = '{shop.good}' AND "
    right = status + _between("e." + t.time, lo, hi)
    grp = f"COALESCE(p.{t.pgroup}, 'unknown')"
    amount = f"l.{t.qty} * l.{t.price} - COALESCE(l.{t.disc}, 0)"
    having = f"HAVING COUNT(DISTINCT e.id) >= {k}"
    return _Question(
        slug=f"repeat_{t.parent}_{lo:%Y%m%d}_{hi:%Y%m%d}",
        summary=f"the net revenue of the {t.parent} who had at least {k} qualifying {t.event} "
        "in a period.",
        rules=[
            f"{_a(t.event_one).capitalize()} qualifies when its `{t.status}` is `{shop.good}` and its "
            f"`{t.time}` falls " + _range_text(lo, hi) + ".",
            f"The net amount of a line is `{t.qty} * {t.price}` minus its `{t.disc}` "
            f"(a discount on the whole line, in cents); a NULL `{t.disc}` means no discount.",
            f"Include only {t.parent} with at least {k} qualifying {t.event}; one row each.",
        ],
        header=[f"{t.parent_one}_id", t.pname, t.pgroup, t.event, "net_revenue"],
        columns=[
            f"`{t.parent_one}_id`: the {t.parent_one}'s `id`.",
            f"`{t.pname}`: the {t.parent_one}'s `{t.pname}`, exactly as stored.",
            f"`{t.pgroup}`: the {t.parent_one}'s `{t.pgroup}`, or the word `unknown` where it is "
            "NULL.",
            f"`{t.event}`: how many qualifying {t.event} the {t.parent_one} has.",
            "`net_revenue`: the sum of the net amounts of all lines of those "
            f"{t.event}, in currency units (cents / 100) with exactly two decimals and no "
            "currency sign, e.g. `1234.50`.",
        ],
        order=f"Order the rows by `net_revenue`, highest first; rows with equal `net_revenue` by "
        f"`{t.parent_one}_id` ascending.",
        sql=sql.format(grp=grp, amount=amount, where=right, having=having),
        wrong=[
            sql.format(
                grp=grp,
                amount=f"l.{t.qty} * l.{t.price} - l.{t.disc}",
                where=right,
                having=having,
            ),
            sql.format(grp=grp, amount=amount, where=right, having=""),
            sql.format(
                grp=grp,
                amount=amount,
                where=status + _between_dates("e." + t.time, lo, hi),
                having=having,
            ),
        ],
        rows=[
            [str(p), names[p][0], names[p][1] or "unknown", str(n), _money(c)]
            for p, (n, c) in ranked
        ],
    )


def _q_top_per_group(rng: random.Random, shop: _Shop, year: int) -> _Question:
    t = shop.theme
    lo, hi = _pick_range(rng, year)
    top = rng.choice([2, 3])
    shop.plant_boundaries(rng, lo, hi)
    # the tied pair share a group and outspend everyone there, so ranks 1 and 2 are a tie
    pair = _plant_tie(rng, shop, lo, hi, 2)
    group = shop.parents[pair[0] - 1][2] or rng.choice(t.pgroups)
    for p in pair:
        shop.parents[p - 1] = (p, shop.parents[p - 1][1], group)
    # and a parent without a group who buys in the period: the `unknown` group exists
    r3 = shop.reserved[3]
    shop.parents[r3 - 1] = (r3, shop.parents[r3 - 1][1], None)
    shop.add_event(rng, r3, lo + timedelta(days=rng.randint(1, 20)))
    amounts = shop.net(True)
    info = {p: (name, g or "unknown") for p, name, g in shop.parents}
    per: dict[int, int] = {}
    for eid, parent, _ in shop.good_events(lo, hi):
        per[parent] = per.get(parent, 0) + amounts[eid]
    by_group: dict[str, list[int]] = {}
    for p in sorted(per, key=lambda p: (-per[p], p)):
        by_group.setdefault(info[p][1], []).append(p)
    rows = []
    for g in sorted(by_group):
        for rank, p in enumerate(by_group[g][:top], 1):
            rows.append([g, str(rank), str(p), info[p][0], _money(per[p])])
    sql = f"""SELECT grp, rnk, id, {t.pname}, {MONEY_SQL.format("cents")}
FROM (
    SELECT grp, id, {t.pname}, cents,
           {{rank}}() OVER (PARTITION BY grp ORDER BY cents DESC, id ASC) AS rnk
    FROM (
        SELECT {{grp}} AS grp, p.id, p.{t.pname}, SUM({{amount}}) AS cents
        FROM {t.parent} p
        JOIN {t.event} e ON e.{t.fk} = p.id
        JOIN {t.line} l ON l.{t.line_fk} = e.id
        WHERE e.{t.status} = '{shop.good}' AND {_between("e." + t.time, lo, hi)}
        GROUP BY p.id
    )
)
WHERE rnk <= {top}
ORDER BY grp ASC, rnk ASC"""
    grp = f"COALESCE(p.{t.pgroup}, 'unknown')"
    amount = f"l.{t.qty} * l.{t.price} - COALESCE(l.{t.disc}, 0)"
    return _Question(
        slug=f"top{top}_per_{t.pgroup}_{lo:%Y%m%d}_{hi:%Y%m%d}",
        summary=f"the top {top} {t.parent} of every `{t.pgroup}` by net revenue in a period.",
        rules=[
            f"{_a(t.event_one).capitalize()} qualifies when its `{t.status}` is `{shop.good}` and its "
            f"`{t.time}` falls " + _range_text(lo, hi) + ".",
            f"The net amount of a line is `{t.qty} * {t.price}` minus its `{t.disc}` "
            f"(a discount on the whole line, in cents); a NULL `{t.disc}` means no discount. "
            f"{_a(t.parent_one).capitalize()}'s net revenue is the sum over the lines of their qualifying "
            f"{t.event}.",
            f"Consider only {t.parent} with at least one qualifying {t.event_one}. "
            f"{t.parent.capitalize()} whose `{t.pgroup}` is NULL form one more group, named "
            "`unknown`.",
            f"Within each group rank the {t.parent} by net revenue, highest first; equal net "
            f"revenue is broken by `id`, lower first, so ranks are 1, 2, 3, ... without gaps "
            f"or repeats. Report ranks 1 to {top} of every group (fewer where a group has fewer "
            f"{t.parent}).",
        ],
        header=[t.pgroup, "rank", f"{t.parent_one}_id", t.pname, "net_revenue"],
        columns=[
            f"`{t.pgroup}`: the group (`unknown` for NULL).",
            "`rank`: the rank within the group, starting at 1.",
            f"`{t.parent_one}_id`, `{t.pname}`: the {t.parent_one}'s `id` and "
            f"`{t.pname}` (exactly as stored).",
            "`net_revenue`: in currency units (cents / 100) with exactly two decimals and no "
            "currency sign, e.g. `1234.50`.",
        ],
        order=f"Order the rows by `{t.pgroup}` ascending (plain byte order of the text as "
        "written in the file), then by `rank`.",
        sql=sql.format(rank="ROW_NUMBER", grp=grp, amount=amount),
        wrong=[
            sql.format(rank="ROW_NUMBER", grp=grp, amount=f"l.{t.qty} * l.{t.price} - l.{t.disc}"),
            sql.format(rank="ROW_NUMBER", grp=f"p.{t.pgroup}", amount=amount).replace(
                "WHERE e.", f"WHERE p.{t.pgroup} IS NOT NULL AND e."
            ),
            sql.format(rank="RANK", grp=grp, amount=amount).replace(
                "ORDER BY cents DESC, id ASC) AS rnk", "ORDER BY cents DESC) AS rnk"
            ),
        ],
        rows=rows,
    )


def _q_quarter_grid(rng: random.Random, shop: _Shop, year: int) -> _Question:
    t = shop.theme
    lo, hi = datetime(year, 1, 1), datetime(year, 12, 31, 23, 59, 59)
    shop.plant_boundaries(rng, lo, hi)
    q2 = datetime(year, 4, 1)
    shop.add_event(rng, rng.choice(shop.active), q2 - timedelta(seconds=1))
    shop.add_event(rng, rng.choice(shop.active), q2)
    # a group whose only item sells in a single quarter: zero rows elsewhere
    lonely = rng.choice(
        [g for g in t.igroups if g not in {g2 for _, _, g2 in shop.items}] or ["misc"]
    )
    iid = len(shop.items) + 1
    shop.items.append((iid, f"{rng.choice(ITEM_WORDS).capitalize()} special-{iid:02d}", lonely))
    q = rng.randint(1, 4)
    shop.add_event(
        rng,
        rng.choice(shop.active),
        datetime(year, 3 * q - 1, 10, 14),
        lines=[(iid, 2, rng.randint(500, 4000), None)],
    )
    groups = {i: g or "uncategorized" for i, _, g in shop.items}
    quarter_of = {
        eid: f"{year}-Q{(when.month - 1) // 3 + 1}" for eid, _, when in shop.good_events(lo, hi)
    }
    cells: dict[tuple[str, str], tuple[set[int], int, int]] = {
        (f"{year}-Q{i}", g): (set(), 0, 0) for i in range(1, 5) for g in set(groups.values())
    }
    for _, ev, item, qty, price, disc in shop.lines:
        if ev in quarter_of:
            key = (quarter_of[ev], groups[item])
            evs, u, c = cells[key]
            cells[key] = (evs | {ev}, u + qty, c + qty * price - (disc or 0))
    quarters = ",\n        ".join(
        f"('{year}-Q{i}', '{_ts(datetime(year, 3 * i - 2, 1))}', "
        f"'{_ts(datetime(year + (i == 4), (3 * i) % 12 + 1, 1) - timedelta(seconds=1))}')"
        for i in range(1, 5)
    )
    quarters_dates = ",\n        ".join(
        f"('{year}-Q{i}', '{datetime(year, 3 * i - 2, 1):%Y-%m-%d}', "
        f"'{datetime(year + (i == 4), (3 * i) % 12 + 1, 1) - timedelta(days=1):%Y-%m-%d}')"
        for i in range(1, 5)
    )
    sql = f"""WITH quarters(quarter, lo, hi) AS (
    VALUES {{quarters}}
),
grps(grp) AS (
    SELECT DISTINCT COALESCE({t.igroup}, 'uncategorized') FROM {t.item}
),
sold AS (
    SELECT COALESCE(i.{t.igroup}, 'uncategorized') AS grp, e.id AS eid, e.{t.time} AS t,
           l.{t.qty} AS qty, {{amount}} AS net
    FROM {t.event} e
    JOIN {t.line} l ON l.{t.line_fk} = e.id
    JOIN {t.item} i ON i.id = l.{t.item_fk}
    WHERE e.{t.status} = '{shop.good}'
)
SELECT quarter, g, n, units, {MONEY_SQL.format("cents")}
FROM (
    SELECT q.quarter, g.grp AS g, COUNT(DISTINCT s.eid) AS n, COALESCE(SUM(s.qty), 0) AS units,
           COALESCE(SUM(s.net), 0) AS cents
    FROM quarters q CROSS JOIN grps g
    {{join}} sold s ON s.grp = g.grp AND s.t >= q.lo AND s.t <= q.hi
    GROUP BY q.quarter, g.grp
)
ORDER BY quarter ASC, g ASC"""
    amount = f"l.{t.qty} * l.{t.price} - COALESCE(l.{t.disc}, 0)"
    return _Question(
        slug=f"quarterly_{t.igroup}_{year}",
        summary=f"a complete quarterly grid of {year}: every quarter times every `{t.igroup}` "
        f"of {t.item}.",
        rules=[
            f"{_a(t.event_one).capitalize()} qualifies when its `{t.status}` is `{shop.good}` and its "
            f"`{t.time}` falls in {year}; it belongs to the calendar quarter of its `{t.time}` "
            f"(Q1 is `{year}-01-01 00:00:00` through `{year}-03-31 23:59:59`, both inclusive, "
            "and so on).",
            f"The net amount of a line is `{t.qty} * {t.price}` minus its `{t.disc}` "
            f"(a discount on the whole line, in cents); a NULL `{t.disc}` means no discount.",
            f"{t.item.capitalize()} whose `{t.igroup}` is NULL form one more group, named "
            "`uncategorized`.",
            f"Report every combination of the four quarters and the groups present in the "
            f"{t.item} table, including combinations without any sales (with zeros).",
        ],
        header=["quarter", t.igroup, t.event, f"total_{t.qty}", "net_revenue"],
        columns=[
            f"`quarter`: `{year}-Q1` to `{year}-Q4`.",
            f"`{t.igroup}`: the group (`uncategorized` for NULL).",
            f"`{t.event}`: how many different qualifying {t.event} of that quarter have at "
            f"least one line of that group.",
            f"`total_{t.qty}`: the sum of `{t.qty}` over those lines (0 if none).",
            "`net_revenue`: the sum of their net amounts in currency units (cents / 100) with "
            "exactly two decimals and no currency sign, e.g. `1234.50` (`0.00` if none).",
        ],
        order=f"Order the rows by `quarter`, then by `{t.igroup}` (plain byte order of the text "
        "as written in the file), both ascending.",
        sql=sql.format(quarters=quarters, amount=amount, join="LEFT JOIN"),
        wrong=[
            sql.format(quarters=quarters, amount=amount, join="JOIN"),
            sql.format(
                quarters=quarters, amount=f"l.{t.qty} * l.{t.price} - l.{t.disc}", join="LEFT JOIN"
            ),
            sql.format(quarters=quarters_dates, amount=amount, join="LEFT JOIN"),
        ],
        rows=[
            [qq, g, str(len(evs)), str(u), _money(c)]
            for (qq, g), (evs, u, c) in sorted(cells.items())
        ],
    )


QUESTIONS = {
    "easy": [_q_status_year, _q_parent_counts, _q_group_units],
    "medium": [_q_parent_revenue, _q_monthly_groups, _q_parent_groups],
    "hard": [_q_net_having, _q_top_per_group, _q_quarter_grid],
}


@register
class SqliteQuery(Family):
    """A generated SQLite database (six schema themes); write the answer to an analytical
    question as CSV with an exact header and order. easy: one table or a simple join;
    medium: joins, date ranges with boundary traps, money formatting, ties; hard: NULL
    discounts and groups, HAVING, window ranks, zero-filled grids."""

    name = "sqlite-query"
    title = "Answer an analytical question from an SQLite database as an exact CSV report"
    category = "databases"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        theme = rng.choice(THEMES)
        year = rng.randint(2021, 2025)
        shop = _make_shop(rng, theme, difficulty.value, year)
        question = rng.choice(QUESTIONS[difficulty.value])(rng, shop, year)
        db_dir = rng.choice(["/data", "/srv/db", f"/var/lib/{theme.key}"])
        db = f"{db_dir}/{theme.key}.{rng.choice(['db', 'sqlite', 'sqlite3'])}"
        out_dir = rng.choice(["/app", "/srv/reports", "/home/analyst/out", "/opt/reports"])
        out = f"{out_dir}/{question.slug}.csv"
        secrets = [row[-1] for row in question.rows[:3] if "." in row[-1] and row[-1] != "1234.50"]
        tables = shop.tables()
        return Draft(
            context={
                "theme": theme.__dict__,
                "db": db,
                "out": out,
                "out_dir": out_dir,
                "q": question.__dict__,
                "counts": {name: len(rows) for name, (_, rows) in tables.items()},
                "columns": {name: cols for name, (cols, _) in tables.items()},
                "digests": shop.digests(),
                "with_disc": shop.with_disc,
            },
            files={"environment/seed.sql": shop.seed_sql()},
            secrets=secrets,
            outputs=[out],
            tags=["sqlite", "sql", "csv"],
        )


# ---------------------------------------------------------------------------------------------
# sqlite-migration
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entity:
    """A table of a live database and the names its migration uses."""

    app: str
    table: str
    one: str
    name: str
    renamed: tuple[str, ...]
    email: str
    group: str
    groups: tuple[str, ...]
    lookup: str
    fk: str
    amount: str
    date: str
    child: str
    child_cols: tuple[str, str]
    """A date column and an integer column of the child table."""


ENTITIES = [
    _Entity(
        "staffdb", "employees", "employee", "full_name", ("display_name", "legal_name"),
        "email", "dept", ("sales", "finance", "legal", "support", "research", "marketing", "ops"),
        "departments", "department_id", "salary", "hired_on",
        "timesheets", ("week_start", "hours"),
    ),
    _Entity(
        "gymdesk", "members", "member", "name", ("member_name", "full_name"),
        "contact_email", "plan", ("basic", "premium", "student", "family", "corporate", "senior"),
        "plans", "plan_id", "monthly_fee", "joined_on",
        "checkins", ("checked_in_on", "minutes"),
    ),
    _Entity(
        "procure", "suppliers", "supplier", "company", ("company_name", "legal_name"),
        "contact_email", "region", ("north", "south", "east", "west", "central", "overseas"),
        "regions", "region_id", "credit_limit", "onboarded_on",
        "purchase_orders", ("ordered_on", "total_cents"),
    ),
    _Entity(
        "wardsys", "patients", "patient", "name", ("patient_name", "full_name"),
        "email", "ward", ("cardiology", "oncology", "pediatrics", "neurology", "orthopedics"),
        "wards", "ward_id", "balance", "admitted_on",
        "visits", ("visited_on", "duration_min"),
    ),
    _Entity(
        "leasebook", "tenants", "tenant", "tenant", ("tenant_name", "occupant"),
        "email", "building", ("harbor", "linden", "maple", "granite", "willow", "summit"),
        "buildings", "building_id", "rent", "lease_start",
        "payments", ("paid_on", "amount_cents"),
    ),
    _Entity(
        "campus", "students", "student", "full_name", ("display_name", "student_name"),
        "email", "major", ("physics", "history", "biology", "economics", "music", "chemistry"),
        "majors", "major_id", "tuition", "enrolled_on",
        "enrollments", ("enrolled_at", "credits"),
    ),
]  # fmt: skip
MAIL_DOMAINS = ["example.com", "mail.example", "corp.example", "post.example", "inbox.test"]


def _dirty_amount(rng: random.Random, cents: int) -> str:
    whole, frac = divmod(cents, 100)
    plain = f"{whole}.{frac:02d}"
    forms = [plain, f" {plain} ", f"${whole:,}.{frac:02d}", f"{whole:,}.{frac:02d}"]
    if frac % 10 == 0:
        forms.append(f"{whole}.{frac // 10}")
    if frac == 0:
        forms.append(str(whole))
    return rng.choice(forms)


def _dirty_word(rng: random.Random, word: str) -> str:
    return rng.choice(
        [word, word.capitalize(), word.upper(), f" {word}", f"{word} ", f"  {word.capitalize()} "]
    )


@register
class SqliteMigration(Family):
    """Migrate a live SQLite database in place. easy: rename a column, add a backfilled derived
    column, add an index; medium: also move a repeated text column into a lookup table with a
    foreign key and bump a schema_version table; hard: also clean the data on the way (mixed
    case/padding, money as text with $ and thousands separators, mixed date formats), enforce
    a unique email, and rebuild a view that depends on a dropped column."""

    name = "sqlite-migration"
    title = "Apply a schema migration to a live SQLite database without losing data"
    category = "databases"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        ent = rng.choice(ENTITIES)
        hard, medium_up = level == "hard", level != "easy"
        n = {"easy": 40, "medium": 80, "hard": 140}[level] + rng.randint(0, 30)
        rows: list[dict[str, Any]] = []
        emails: set[str] = set()
        for i in range(1, n + 1):
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            if ent.table == "suppliers":
                name = f"{rng.choice(COMPANY_WORDS)} {rng.choice(COMPANY_SUFFIX)}"
            else:
                name = f"{first} {last}"
            while True:
                email = (
                    f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@{rng.choice(MAIL_DOMAINS)}"
                )
                if email not in emails:
                    emails.add(email)
                    break
            group = rng.choice(ent.groups) if rng.random() > (0.1 if medium_up else 0) else None
            cents = rng.randint(1000, 900000)
            if i % 7 == 3:  # values that float arithmetic gets wrong (19.99 * 100 = 1998.99...)
                cents = rng.randint(10, 9000) * 100 + rng.choice([29, 57, 58, 99, 15, 1])
            day = datetime(2015, 1, 1) + timedelta(days=rng.randint(0, 3600))
            rows.append(
                {
                    "id": i,
                    "name": name,
                    "email": email,
                    "group": group,
                    "cents": cents,
                    "date": day,
                    "raw_email": email,
                    "raw_group": group,
                    "raw_amount": f"{cents // 100}.{cents % 100:02d}",
                    "raw_date": f"{day:%Y-%m-%d}",
                }
            )
        if hard:
            for r in rows:
                if rng.random() < 0.3:
                    r["raw_email"] = rng.choice(
                        [r["email"].upper(), f" {r['email']}", r["email"].capitalize() + " "]
                    )
                if r["group"] and rng.random() < 0.5:
                    r["raw_group"] = _dirty_word(rng, r["group"])
                if rng.random() < 0.5:
                    r["raw_amount"] = _dirty_amount(rng, r["cents"])
                if rng.random() < 0.3:
                    r["raw_date"] = f"{r['date']:%d/%m/%Y}"
            # every kind of dirt at least once
            rows[1]["raw_group"] = (rows[1]["group"] or ent.groups[0]).upper()
            rows[1]["group"] = rows[1]["group"] or ent.groups[0]
            rows[2]["raw_amount"] = (
                f"${rows[2]['cents'] // 100 + 1000:,}.{rows[2]['cents'] % 100:02d}"
            )
            rows[2]["cents"] += 100000
            rows[3]["raw_date"] = f"{rows[3]['date']:%d/%m/%Y}"
            rows[4]["raw_email"] = " " + rows[4]["email"].upper()
        children = []
        for r in rng.sample(rows, n // 2):
            for _ in range(rng.randint(1, 3)):
                when = r["date"] + timedelta(days=rng.randint(1, 400))
                children.append((r["id"], f"{when:%Y-%m-%d}", rng.randint(1, 480)))
        children.sort()
        children = [(i + 1, *c) for i, c in enumerate(children)]
        new_name = rng.choice(ent.renamed)
        derive = rng.choice(["year", "cents", "domain"])
        if hard:
            derive = rng.choice(["year", "domain"])  # cents is a cleanup step of its own
        stem = ent.date.removesuffix("_on").removesuffix("_start")
        derived_col = {
            "year": f"{stem}_year",
            "cents": f"{ent.amount}_cents",
            "domain": "email_domain",
        }[derive]
        version = rng.randint(3, 17)
        history = []
        when = datetime(2019, 1, 1) + timedelta(days=rng.randint(0, 400))
        for v in range(1, version + 1):
            history.append((v, _ts(when)))
            when += timedelta(days=rng.randint(20, 200), seconds=rng.randint(0, 86399))
        old_index = f"idx_{ent.table}_{ent.date}"
        group_index = f"idx_{ent.table}_{ent.group}"
        view = f"{ent.one}_overview"
        # the index the migration adds
        index_col = ent.fk if medium_up else rng.choice([derived_col, ent.email, new_name])
        index_name = f"idx_{ent.table}_{index_col}"
        unique_email = f"ux_{ent.table}_{ent.email}"

        # --- the database before
        cols = [
            ("id", "INTEGER PRIMARY KEY"),
            (ent.name, "TEXT NOT NULL"),
            (ent.email, "TEXT NOT NULL"),
            (ent.group, "TEXT"),
            (ent.amount, "TEXT NOT NULL"),
            (ent.date, "TEXT NOT NULL"),
        ]
        ddl = [
            f"CREATE TABLE {ent.table} (\n" + ",\n".join(f"    {c} {t}" for c, t in cols) + "\n);",
            f"CREATE INDEX {old_index} ON {ent.table}({ent.date});",
            f"CREATE TABLE {ent.child} (\n    id INTEGER PRIMARY KEY,\n"
            f"    {ent.one}_id INTEGER NOT NULL REFERENCES {ent.table}(id),\n"
            f"    {ent.child_cols[0]} TEXT NOT NULL,\n    {ent.child_cols[1]} INTEGER NOT NULL\n);",
        ]
        if medium_up:
            ddl.append(
                "CREATE TABLE schema_version (\n    version INTEGER NOT NULL,\n"
                "    applied_at TEXT NOT NULL\n);"
            )
        if hard:
            ddl.append(f"CREATE INDEX {group_index} ON {ent.table}({ent.group});")
            ddl.append(
                f"CREATE VIEW {view} AS\n    SELECT id, {ent.email}, {ent.group} AS {ent.lookup[:-1]}"
                f"\n    FROM {ent.table};"
            )
        before_rows = [
            (r["id"], r["name"], r["raw_email"], r["raw_group"], r["raw_amount"], r["raw_date"])
            for r in rows
        ]
        seed = ["PRAGMA foreign_keys = ON;", "BEGIN;", *ddl]
        seed += _insert_sql(ent.table, [c for c, _ in cols], before_rows)
        seed += _insert_sql(
            ent.child, ["id", f"{ent.one}_id", *ent.child_cols], [tuple(c) for c in children]
        )
        if medium_up:
            seed += _insert_sql("schema_version", ["version", "applied_at"], history)
        seed.append("COMMIT;")

        # --- the database after
        lookup_names = sorted({r["group"] for r in rows if r["group"]})
        lookup_ids = {g: i for i, g in enumerate(lookup_names, 1)}
        after_cols: dict[str, str] = {"id": "INTEGER", new_name: "TEXT"}
        after_cols[ent.email] = "TEXT"
        if not medium_up:
            after_cols[ent.group] = "TEXT"
        else:
            after_cols[ent.fk] = "INTEGER"
        if hard:
            after_cols[f"{ent.amount}_cents"] = "INTEGER"
        else:
            after_cols[ent.amount] = "TEXT"
        after_cols[ent.date] = "TEXT"
        after_cols[derived_col] = "TEXT" if derive == "domain" else "INTEGER"
        expected_rows = []
        for r in rows:
            e = {"id": r["id"], new_name: r["name"]}
            e[ent.email] = r["email"] if hard else r["raw_email"]
            if medium_up:
                e[ent.fk] = lookup_ids[r["group"]] if r["group"] else None
            else:
                e[ent.group] = r["raw_group"]
            if hard:
                e[f"{ent.amount}_cents"] = r["cents"]
            else:
                e[ent.amount] = r["raw_amount"]
            e[ent.date] = f"{r['date']:%Y-%m-%d}"
            e[derived_col] = {
                "year": r["date"].year,
                "cents": r["cents"],
                "domain": r["email"].split("@")[1],
            }[derive]
            expected_rows.append(e)

        # --- the instruction's steps
        steps = [
            f"Rename the column `{ent.table}.{ent.name}` to `{new_name}` (same type and "
            "constraints, same values)."
        ]
        if medium_up:
            lookup_step = (
                f"Move `{ent.table}.{ent.group}` into a new lookup table `{ent.lookup}` with "
                f"exactly the columns `id INTEGER PRIMARY KEY` and `name TEXT NOT NULL UNIQUE`, "
                f"one row per distinct {ent.group}"
            )
            if hard:
                lookup_step += (
                    f". The stored `{ent.group}` values are dirty (random upper/lower case, "
                    "leading and trailing spaces): the lookup names are the values trimmed and "
                    f"lower-cased, so variants like `' {ent.groups[0].capitalize()} '` and "
                    f"`{ent.groups[0].upper()}` become the single row `{ent.groups[0]}`"
                )
            lookup_step += (
                f". Number the `{ent.lookup}` rows 1, 2, 3, ... in alphabetical order of "
                f"`name`. Add the column `{ent.fk} INTEGER REFERENCES {ent.lookup}(id)` to "
                f"`{ent.table}`, set it for every {ent.one} (NULL where `{ent.group}` is NULL), "
                f"then drop the column `{ent.group}`."
            )
            steps.append(lookup_step)
        if hard:
            steps.append(
                f"Clean `{ent.email}`: trim surrounding spaces and lower-case it. Then make "
                f"emails unique with a unique index named `{unique_email}` on `{ent.email}`."
            )
            steps.append(
                f"Replace the text column `{ent.amount}` by `{ent.amount}_cents INTEGER NOT NULL`"
                f": the amount in cents. The text holds amounts in currency units, some written "
                f"with surrounding spaces, a leading `$`, `,` as thousands separator, or fewer "
                f"than two decimals (`12.5` means 1250 cents, `12` means 1200). Drop "
                f"`{ent.amount}` afterwards."
            )
            steps.append(
                f"Normalise `{ent.date}` to `YYYY-MM-DD`: some values are written `DD/MM/YYYY`."
            )
        derive_text = {
            "year": f"the year of `{ent.date}` as a number (e.g. 2019)",
            "cents": f"the amount of `{ent.amount}` (currency units, text) in cents, exactly "
            "(e.g. `19.99` is 1999)",
            "domain": f"the part of `{ent.email}` after the `@`",
        }[derive]
        steps.append(
            f"Add the column `{derived_col} {after_cols[derived_col]}` to `{ent.table}` and fill "
            f"it for every existing row with {derive_text}."
        )
        steps.append(f"Add an index named `{index_name}` on `{ent.table}({index_col})`.")
        if hard:
            steps.append(
                f"The view `{view}` reads the column `{ent.group}`. Afterwards it must still "
                f"exist and return one row per {ent.one} with the columns `id`, "
                f"`{ent.email}` and `{ent.lookup[:-1]}`, the latter now being the (clean) name "
                f"from `{ent.lookup}` (NULL where the {ent.one} has none)."
            )
        if medium_up:
            steps.append(
                f"Record the migration in `schema_version`: add one row with version "
                f"{version + 1} (the database is at version {version}) and the current time "
                "as `applied_at`; keep the existing rows."
            )
        view_rows = [[r["id"], r["email"], r["group"]] for r in rows]
        child_digest = hashlib.sha256(repr([tuple(c) for c in children]).encode()).hexdigest()
        db_dir = rng.choice(["/srv", "/var/lib", "/opt"])
        db = f"{db_dir}/{ent.app}/{ent.app}.{rng.choice(['db', 'sqlite3'])}"
        ctx = {
            "ent": ent.__dict__,
            "db": db,
            "level": level,
            "hard": hard,
            "medium_up": medium_up,
            "new_name": new_name,
            "derive": derive,
            "derived_col": derived_col,
            "index_name": index_name,
            "index_col": index_col,
            "old_index": old_index,
            "group_index": group_index,
            "unique_email": unique_email,
            "view": view,
            "version": version,
            "history": history,
            "steps": steps,
            "after_cols": after_cols,
            "expected_rows": expected_rows,
            "lookup": [[i, g] for g, i in lookup_ids.items()],
            "view_rows": view_rows,
            "child_count": len(children),
            "child_digest": child_digest,
            "child_cols": ["id", f"{ent.one}_id", *ent.child_cols],
            "row_count": n,
        }
        return Draft(
            context=ctx,
            files={"environment/seed.sql": "\n".join(seed) + "\n"},
            outputs=[db],
            tags=["sqlite", "migration", "schema"] + (["data-cleaning"] if hard else []),
        )


# ---------------------------------------------------------------------------------------------
# python-bugfix
# ---------------------------------------------------------------------------------------------
# The package is assembled from "kinds" of functions. A kind's source uses @name@ tokens for
# every function name (renamed per task). A bug is a list of (correct, buggy) snippet pairs;
# "reveal" cases are calls whose result differs under the bug (expected values are computed
# here by running the correct code); "edge" bugs break documented edge cases only, and no
# visible test covers them.


@dataclass(frozen=True)
class _Case:
    args: str
    """Python source of the argument tuple (may use names defined by ``setup``)."""
    setup: str = ""
    post: str = ""
    """Extra assertion lines after the call (e.g. the input was not modified)."""


@dataclass(frozen=True)
class _Kind:
    key: str
    names: tuple[str, ...]
    code: str
    bugs: Mapping[str, tuple[tuple[str, str], ...]]
    reveal: Mapping[str, _Case]
    """One visible-test case per non-edge bug."""
    edges: Mapping[str, tuple[tuple[str, str], ...]]
    edge_tests: str
    """Hidden pytest code (tokens allowed) that fails under every edge bug."""
    basic: tuple[_Case, ...]
    """Visible cases that pass under every bug of this kind."""
    gen: str
    """Source of ``gen(rng)`` returning an argument tuple, for the hidden property checks."""
    helper: str = ""
    """For a user kind: the key of the kind it calls (in another module)."""
    imports: str = ""


KINDS: dict[str, _Kind] = {}


def _kind(**kw: Any) -> None:
    kind = _Kind(**kw)
    KINDS[kind.key] = kind


_kind(
    key="paginate",
    names=("paginate", "page_of", "get_page"),
    code='''
def @paginate@(items, page, per_page):
    """Return page number ``page`` (1-based) of ``items``, ``per_page`` items per page.

    The last page may be shorter; a page past the end is empty. Raises ValueError when
    ``page`` or ``per_page`` is smaller than 1. ``items`` is not modified.

    >>> @paginate@(["a", "b", "c", "d", "e"], 2, 2)
    ['c', 'd']
    """
    if page < 1 or per_page < 1:
        raise ValueError("page and per_page must be at least 1")
    start = (page - 1) * per_page
    return list(items[start:start + per_page])
''',
    bugs={"off-by-one": (("start = (page - 1) * per_page", "start = page * per_page"),)},
    reveal={"off-by-one": _Case("(['a', 'b', 'c', 'd', 'e', 'f', 'g'], 1, 3)")},
    edges={"no-page-check": (("if page < 1 or per_page < 1:", "if per_page < 1:"),)},
    edge_tests="""
def test_@paginate@_rejects_page_zero():
    with pytest.raises(ValueError):
        @paginate@([1, 2, 3], 0, 2)
""",
    basic=(_Case("([], 3, 5)"), _Case("(list(range(10)), 9, 4)")),
    gen="""
def gen(rng):
    items = [rng.randint(0, 99) for _ in range(rng.randint(0, 25))]
    return (items, rng.randint(-1, 8), rng.randint(-1, 6))
""",
)
_kind(
    key="merge_intervals",
    names=("merge_intervals", "merge_slots", "union_of"),
    code='''
def @merge_intervals@(intervals):
    """Merge half-open intervals ``(start, end)`` into a sorted list of disjoint intervals.

    The input may be in any order; intervals that overlap or touch (one ends exactly where
    another starts) are merged into one. Empty intervals (``start == end``) are dropped.
    Raises ValueError when an interval ends before it starts. The input is not modified.

    >>> @merge_intervals@([(5, 8), (1, 3), (2, 4)])
    [(1, 4), (5, 8)]
    """
    for start, end in intervals:
        if end < start:
            raise ValueError(f"interval {(start, end)!r} ends before it starts")
    merged = []
    for start, end in sorted(intervals):
        if start == end:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [tuple(m) for m in merged]
''',
    bugs={
        "unsorted": (("for start, end in sorted(intervals):", "for start, end in intervals:"),),
        "touching": (
            ("if merged and start <= merged[-1][1]:", "if merged and start < merged[-1][1]:"),
        ),
    },
    reveal={
        "unsorted": _Case("([(10, 12), (1, 4), (3, 6)],)"),
        "touching": _Case("([(1, 3), (3, 5), (8, 9)],)"),
    },
    edges={"keeps-empty": (("        if start == end:\n            continue\n", ""),)},
    edge_tests="""
def test_@merge_intervals@_drops_empty():
    assert @merge_intervals@([(4, 4), (1, 2)]) == [(1, 2)]
""",
    basic=(_Case("([],)"), _Case("([(0, 10), (2, 3)],)")),
    gen="""
def gen(rng):
    out = []
    for _ in range(rng.randint(0, 8)):
        a = rng.randint(0, 40)
        out.append((a, a + rng.randint(-1 if rng.random() < 0.05 else 0, 7)))
    return (out,)
""",
)
_kind(
    key="percent_of",
    names=("percent_of", "percentage", "pct_of"),
    code='''
def @percent_of@(amount_cents, percent):
    """``percent`` % of ``amount_cents``, in whole cents, rounded half up (half a cent -> 1).

    Both arguments are integers; raises ValueError when either is negative.

    >>> @percent_of@(1999, 15)
    300
    """
    if amount_cents < 0 or percent < 0:
        raise ValueError("amount and percent must not be negative")
    return (amount_cents * percent * 2 + 100) // 200
''',
    bugs={
        "bankers-rounding": (
            (
                "return (amount_cents * percent * 2 + 100) // 200",
                "return round(amount_cents * percent / 100)",
            ),
        ),
        "truncates": (
            (
                "return (amount_cents * percent * 2 + 100) // 200",
                "return amount_cents * percent // 100",
            ),
        ),
    },
    reveal={"bankers-rounding": _Case("(250, 1)"), "truncates": _Case("(250, 1)")},
    edges={"no-check": (("if amount_cents < 0 or percent < 0:", "if amount_cents < 0:"),)},
    edge_tests="""
def test_@percent_of@_rejects_negative_percent():
    with pytest.raises(ValueError):
        @percent_of@(100, -5)
""",
    basic=(_Case("(0, 50)"), _Case("(12000, 25)")),
    gen="""
def gen(rng):
    return (rng.choice([rng.randint(0, 5000), rng.randint(0, 20) * 50]), rng.randint(-1, 100))
""",
)
_kind(
    key="split_evenly",
    names=("split_evenly", "split_amount", "allocate"),
    code='''
def @split_evenly@(total_cents, parts):
    """Split ``total_cents`` into ``parts`` integer shares that add up to ``total_cents``.

    Shares differ by at most one cent and the larger shares come first. Raises ValueError when
    ``parts`` is smaller than 1 or ``total_cents`` is negative.

    >>> @split_evenly@(1000, 3)
    [334, 333, 333]
    """
    if parts < 1 or total_cents < 0:
        raise ValueError("need at least one part and a non-negative total")
    base, extra = divmod(total_cents, parts)
    return [base + 1] * extra + [base] * (parts - extra)
''',
    bugs={
        "drops-remainder": (
            ("return [base + 1] * extra + [base] * (parts - extra)", "return [base] * parts"),
        ),
        "small-first": (
            (
                "return [base + 1] * extra + [base] * (parts - extra)",
                "return [base] * (parts - extra) + [base + 1] * extra",
            ),
        ),
    },
    reveal={"drops-remainder": _Case("(1001, 4)"), "small-first": _Case("(1001, 4)")},
    edges={
        "no-check": (("if parts < 1 or total_cents < 0:", "if total_cents < 0:"),),
    },
    edge_tests="""
def test_@split_evenly@_rejects_zero_parts():
    with pytest.raises(ValueError):
        @split_evenly@(100, 0)
""",
    basic=(_Case("(900, 3)"), _Case("(0, 2)")),
    gen="""
def gen(rng):
    return (rng.randint(-1, 3000), rng.randint(-1, 9))
""",
)
_kind(
    key="median",
    names=("median", "middle_value"),
    code='''
def @median@(values):
    """The median of a non-empty sequence of numbers: the middle value after sorting, or the
    mean of the two middle values when there is an even number of them.

    Raises ValueError for an empty sequence. The input is not modified.

    >>> @median@([3, 1, 2])
    2
    >>> @median@([4, 1, 2, 3])
    2.5
    """
    if len(values) == 0:
        raise ValueError("median of an empty sequence")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
''',
    bugs={
        "unsorted": (("ordered = sorted(values)", "ordered = list(values)"),),
        "even-count": (("return (ordered[mid - 1] + ordered[mid]) / 2", "return ordered[mid]"),),
        "sorts-input": (("ordered = sorted(values)", "values.sort()\n    ordered = values"),),
    },
    reveal={
        "unsorted": _Case("([9, 1, 5, 3, 7],)"),
        "even-count": _Case("([1, 2, 3, 10],)"),
        "sorts-input": _Case("(data,)", setup="data = [5, 3, 1]", post="assert data == [5, 3, 1]"),
    },
    edges={
        "no-check": (
            (
                '    if len(values) == 0:\n        raise ValueError("median of an empty sequence")\n',
                "",
            ),
        ),
    },
    edge_tests="""
def test_@median@_rejects_empty():
    with pytest.raises(ValueError):
        @median@([])
""",
    basic=(_Case("([1, 2, 3],)"), _Case("([4],)")),
    gen="""
def gen(rng):
    return ([rng.randint(-50, 50) for _ in range(rng.randint(0, 9))],)
""",
)
_kind(
    key="weighted_average",
    names=("weighted_average", "weighted_mean"),
    code='''
def @weighted_average@(pairs):
    """The weighted average of ``(value, weight)`` pairs: sum(value * weight) / sum(weight).

    Weights are non-negative numbers. Raises ValueError when the weights add up to 0 (which
    includes an empty list).

    >>> @weighted_average@([(80, 1), (90, 3)])
    87.5
    """
    total = sum(weight for _, weight in pairs)
    if total == 0:
        raise ValueError("the weights add up to zero")
    return sum(value * weight for value, weight in pairs) / total
''',
    bugs={
        "floor-division": (
            (
                "return sum(value * weight for value, weight in pairs) / total",
                "return sum(value * weight for value, weight in pairs) // total",
            ),
        ),
    },
    reveal={"floor-division": _Case("([(70, 1), (85, 2)],)")},
    edges={
        "no-check": (
            ('    if total == 0:\n        raise ValueError("the weights add up to zero")\n', ""),
        )
    },
    edge_tests="""
def test_@weighted_average@_rejects_zero_weight():
    with pytest.raises(ValueError):
        @weighted_average@([(5, 0)])
""",
    basic=(_Case("([(10, 2)],)"), _Case("([(60, 1), (80, 1)],)")),
    gen="""
def gen(rng):
    return ([(rng.randint(0, 100), rng.randint(0, 4)) for _ in range(rng.randint(0, 5))],)
""",
)
_kind(
    key="top_n",
    names=("top_n", "best_n", "leaders"),
    code='''
def @top_n@(scores, n):
    """The names of the ``n`` highest scores in ``scores`` (a dict name -> score), best first.

    Equal scores are ordered by name, alphabetically. Fewer names are returned when there are
    fewer than ``n``. Raises ValueError when ``n`` is negative.

    >>> @top_n@({"ann": 3, "bob": 5, "cid": 3}, 2)
    ['bob', 'ann']
    """
    if n < 0:
        raise ValueError("n must not be negative")
    ranked = sorted(scores, key=lambda name: (-scores[name], name))
    return ranked[:n]
''',
    bugs={
        "ties-unordered": (
            ("key=lambda name: (-scores[name], name))", "key=lambda name: -scores[name])"),
        ),
        "ties-reversed": (
            (
                "sorted(scores, key=lambda name: (-scores[name], name))",
                "sorted(scores, key=lambda name: (scores[name], name), reverse=True)",
            ),
        ),
    },
    reveal={
        "ties-unordered": _Case("({'zed': 4, 'amy': 9, 'bea': 4}, 3)"),
        "ties-reversed": _Case("({'amy': 4, 'zed': 4, 'bea': 9}, 3)"),
    },
    edges={
        "no-check": (('    if n < 0:\n        raise ValueError("n must not be negative")\n', ""),)
    },
    edge_tests="""
def test_@top_n@_rejects_negative():
    with pytest.raises(ValueError):
        @top_n@({"a": 1, "b": 2}, -1)
""",
    basic=(_Case("({'a': 1, 'b': 2, 'c': 3}, 2)"), _Case("({}, 4)")),
    gen="""
def gen(rng):
    names = rng.sample(["ann", "bob", "cid", "dee", "eve", "fay", "gus", "hal"], rng.randint(0, 8))
    return ({name: rng.randint(0, 4) for name in names}, rng.randint(-1, 9))
""",
)
_kind(
    key="restock",
    names=("needs_restock", "low_stock", "to_reorder"),
    code='''
def @restock@(stock, threshold):
    """The SKUs whose quantity is at or below ``threshold``, sorted alphabetically.

    ``stock`` maps SKU -> quantity; a quantity of ``None`` means unknown and always counts as
    needing a restock.

    >>> @restock@({"b-2": 5, "a-1": 1, "c-3": None}, 2)
    ['a-1', 'c-3']
    """
    return sorted(sku for sku, qty in stock.items() if qty is None or qty <= threshold)
''',
    bugs={
        "strict": (("qty is None or qty <= threshold", "qty is None or qty < threshold"),),
        "unsorted": (
            (
                "return sorted(sku for sku, qty in stock.items() if qty is None or qty <= threshold)",
                "return [sku for sku, qty in stock.items() if qty is None or qty <= threshold]",
            ),
        ),
    },
    reveal={
        "strict": _Case("({'ax-1': 3, 'bx-2': 4, 'cx-3': 9}, 4)"),
        "unsorted": _Case("({'zz-9': 0, 'aa-1': 1}, 2)"),
    },
    edges={"no-unknown": (("if qty is None or qty <= threshold", "if qty <= threshold"),)},
    edge_tests="""
def test_@restock@_unknown_quantity():
    assert @restock@({"x": None, "y": 50}, 3) == ["x"]
""",
    basic=(_Case("({'a': 10}, 5)"), _Case("({}, 3)")),
    gen="""
def gen(rng):
    skus = rng.sample(["a-1", "b-2", "c-3", "d-4", "e-5", "f-6", "g-7"], rng.randint(0, 7))
    return ({s: rng.choice([None, *range(0, 8)]) for s in skus}, rng.randint(0, 6))
""",
)
_kind(
    key="tally",
    names=("tally", "count_words", "word_counts"),
    code='''
def @tally@(words, counts=None):
    """Count the words of ``words``, ignoring case and surrounding whitespace.

    Returns a dict word -> count, the words lower-cased and stripped; words that are empty
    after stripping are skipped. When ``counts`` is given it is updated in place and returned;
    otherwise a new dict is returned.

    >>> @tally@(["Red", "red ", "blue"])
    {'red': 2, 'blue': 1}
    """
    if counts is None:
        counts = {}
    for word in words:
        key = word.strip().lower()
        if key:
            counts[key] = counts.get(key, 0) + 1
    return counts
''',
    bugs={
        "shared-default": (
            ("def @tally@(words, counts=None):", "def @tally@(words, counts={}):"),
            ("    if counts is None:\n        counts = {}\n", ""),
        ),
        "case-sensitive": (("key = word.strip().lower()", "key = word.strip()"),),
    },
    reveal={
        "shared-default": _Case("(['pear', 'Pear'],)", setup="@tally@(['apple'])"),
        "case-sensitive": _Case("(['Fig', 'fig', 'FIG '],)"),
    },
    edges={
        "keeps-empty": (
            (
                "        if key:\n            counts[key]",
                "        if True:\n            counts[key]",
            ),
        )
    },
    edge_tests="""
def test_@tally@_skips_blank_words():
    assert @tally@(["  ", "a", ""]) == {"a": 1}
""",
    basic=(_Case("([], {})"), _Case("(['x', 'y', 'x'], {})")),
    gen="""
def gen(rng):
    pool = ["ant", "Ant", " ant", "bee", "BEE", "cow ", "", "  ", "dog"]
    return ([rng.choice(pool) for _ in range(rng.randint(0, 8))],)
""",
)
_kind(
    key="parse_duration",
    names=("parse_duration", "to_seconds", "duration_seconds"),
    imports="import re",
    code='''
def @parse_duration@(text):
    """Parse a duration such as ``"1h30m"``, ``"45m"``, ``"2h"``, ``"90s"`` or ``"1h2m30s"``
    into a number of seconds.

    Units are ``h``, ``m`` and ``s``, each at most once and in that order, each with a whole
    number; surrounding whitespace is ignored. Raises ValueError for anything else, including
    an empty string.

    >>> @parse_duration@("1h30m")
    5400
    """
    text = text.strip()
    match = re.fullmatch(r"(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?", text)
    if not text or not match:
        raise ValueError(f"not a duration: {text!r}")
    hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds
''',
    bugs={
        "single-digit": (('r"(?:(\\d+)h)?', 'r"(?:(\\d)h)?'),),
        "no-strip": (("    text = text.strip()\n", ""),),
    },
    reveal={"single-digit": _Case("('12h',)"), "no-strip": _Case("(' 5m ',)")},
    edges={"accepts-empty": (("if not text or not match:", "if not match:"),)},
    edge_tests="""
def test_@parse_duration@_rejects_empty():
    with pytest.raises(ValueError):
        @parse_duration@("")
""",
    basic=(_Case("('2h',)"), _Case("('1h2m3s',)")),
    gen="""
def gen(rng):
    parts = ""
    for unit in "hms":
        if rng.random() < 0.5:
            parts += f"{rng.randint(0, 130)}{unit}"
    if rng.random() < 0.1:
        parts = rng.choice(["", "5x", "m5", "1m2h"])
    return (rng.choice(["", " ", "  "]) + parts + rng.choice(["", " "]),)
""",
)
_kind(
    key="parse_kv",
    names=("parse_kv", "parse_settings", "read_pairs"),
    code='''
def @parse_kv@(text):
    """Parse ``key = value`` lines into a dict.

    Blank lines and lines whose first non-blank character is ``#`` are ignored. Keys and values
    are stripped of surrounding whitespace; a value may itself contain ``=``; a later line
    overrides an earlier one with the same key. Raises ValueError for any other line that has
    no ``=``.

    >>> @parse_kv@("a = 1\\n# note\\nb=x=y")
    {'a': '1', 'b': 'x=y'}
    """
    result = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if "=" not in stripped:
            raise ValueError(f"line {number}: expected key = value")
        key, _, value = stripped.partition("=")
        result[key.strip()] = value.strip()
    return result
''',
    bugs={
        "splits-value": (
            ('key, _, value = stripped.partition("=")', 'key, value = stripped.split("=")[:2]'),
        ),
        "indented-comment": (
            (
                'if not stripped or stripped.startswith("#"):',
                'if not stripped or line.startswith("#"):',
            ),
        ),
    },
    reveal={
        "splits-value": _Case("('url = http://h/?a=1\\nmode = fast',)"),
        "indented-comment": _Case("('x = 1\\n   # old: y = 2\\ny = 3',)"),
    },
    edges={
        "no-error": (
            (
                '        if "=" not in stripped:\n            raise ValueError(f"line {number}: expected key = value")\n',
                "",
            ),
        )
    },
    edge_tests="""
def test_@parse_kv@_rejects_garbage():
    with pytest.raises(ValueError):
        @parse_kv@("a = 1\\nnonsense")
""",
    basic=(_Case("('',)"), _Case("('a=1\\nb = 2\\na = 3',)")),
    gen="""
def gen(rng):
    lines = []
    for _ in range(rng.randint(0, 6)):
        lines.append(rng.choice([
            f"{rng.choice('abc')} = {rng.randint(0, 9)}",
            f"  {rng.choice('abc')}={rng.choice(['x=y', 'z', ' q '])}",
            "# comment", "   # indented = comment", "", "   ",
            "broken" if rng.random() < 0.2 else "k = v",
        ]))
    return ("\\n".join(lines),)
""",
)
_kind(
    key="compare_versions",
    names=("compare_versions", "version_cmp", "cmp_versions"),
    code='''
def @compare_versions@(a, b):
    """Compare dotted version strings numerically: -1 if a < b, 0 if equal, 1 if a > b.

    Every part is a non-negative integer; missing parts count as 0, so ``"1.2" == "1.2.0"`` and
    ``"1.10" > "1.9"``.

    >>> @compare_versions@("1.10", "1.9")
    1
    """
    left = [int(part) for part in a.split(".")]
    right = [int(part) for part in b.split(".")]
    width = max(len(left), len(right))
    left += [0] * (width - len(left))
    right += [0] * (width - len(right))
    return (left > right) - (left < right)
''',
    bugs={
        "string-parts": (
            ('left = [int(part) for part in a.split(".")]', 'left = a.split(".")'),
            ('right = [int(part) for part in b.split(".")]', 'right = b.split(".")'),
            ("left += [0] * (width - len(left))", 'left += ["0"] * (width - len(left))'),
            ("right += [0] * (width - len(right))", 'right += ["0"] * (width - len(right))'),
        ),
    },
    reveal={"string-parts": _Case("('2.10.0', '2.9.3')")},
    edges={
        "no-padding": (
            (
                "    left += [0] * (width - len(left))\n    right += [0] * (width - len(right))\n",
                "",
            ),
        )
    },
    edge_tests="""
def test_@compare_versions@_missing_parts():
    assert @compare_versions@("3.1", "3.1.0") == 0
""",
    basic=(_Case("('1.0', '2.0')"), _Case("('4.2.1', '4.2.1')")),
    gen="""
def gen(rng):
    def version():
        return ".".join(str(rng.choice([0, 1, 2, 9, 10, 11])) for _ in range(rng.randint(1, 4)))
    return (version(), version())
""",
)
_kind(
    key="chunk",
    names=("chunk", "batched", "in_groups"),
    code='''
def @chunk@(items, size):
    """Split ``items`` into consecutive lists of ``size`` items; the last one may be shorter.

    Raises ValueError when ``size`` is smaller than 1. ``items`` is not modified.

    >>> @chunk@([1, 2, 3, 4, 5], 2)
    [[1, 2], [3, 4], [5]]
    """
    if size < 1:
        raise ValueError("size must be at least 1")
    return [list(items[i:i + size]) for i in range(0, len(items), size)]
''',
    bugs={
        "drops-last": (
            (
                "for i in range(0, len(items), size)]",
                "for i in range(0, len(items) - size + 1, size)]",
            ),
        ),
    },
    reveal={"drops-last": _Case("(['a', 'b', 'c', 'd', 'e', 'f', 'g'], 3)")},
    edges={
        "no-check": (
            ('    if size < 1:\n        raise ValueError("size must be at least 1")\n', ""),
        )
    },
    edge_tests="""
def test_@chunk@_rejects_zero():
    with pytest.raises(ValueError):
        @chunk@([1, 2], 0)
""",
    basic=(_Case("([], 2)"), _Case("([1, 2, 3, 4], 2)")),
    gen="""
def gen(rng):
    return ([rng.randint(0, 9) for _ in range(rng.randint(0, 12))], rng.randint(-1, 5))
""",
)
_kind(
    key="letter_grade",
    names=("letter_grade", "grade_for"),
    code='''
def @letter_grade@(score, cutoffs):
    """The grade for ``score``. ``cutoffs`` is a list of ``(minimum, grade)`` pairs in any order;
    the result is the grade of the highest minimum that ``score`` reaches (``score >= minimum``),
    or ``"F"`` when it reaches none.

    >>> @letter_grade@(80, [(90, "A"), (80, "B"), (70, "C")])
    'B'
    """
    for minimum, grade in sorted(cutoffs, reverse=True):
        if score >= minimum:
            return grade
    return "F"
''',
    bugs={
        "strict": (("if score >= minimum:", "if score > minimum:"),),
        "unsorted": (
            (
                "for minimum, grade in sorted(cutoffs, reverse=True):",
                "for minimum, grade in cutoffs:",
            ),
        ),
    },
    reveal={
        "strict": _Case("(70, [(90, 'A'), (70, 'B'), (50, 'C')])"),
        "unsorted": _Case("(95, [(60, 'C'), (90, 'A'), (75, 'B')])"),
    },
    edges={},
    edge_tests="",
    basic=(_Case("(10, [(50, 'P')])"), _Case("(100, [])")),
    gen="""
def gen(rng):
    grades = rng.sample([(90, "A"), (80, "B"), (70, "C"), (60, "D"), (85, "B+")], rng.randint(0, 5))
    return (rng.choice([rng.randint(40, 100), 60, 70, 80, 85, 90]), grades)
""",
)
# user kinds: they call a helper kind that lives in the other module
_kind(
    key="discounted",
    names=("discounted", "sale_price"),
    helper="percent_of",
    code='''
def @discounted@(price_cents, percent):
    """The price after a discount of ``percent`` %, in cents: the discount is ``percent`` % of
    the price, rounded half up to whole cents (see ``@percent_of@``).

    >>> @discounted@(1999, 15)
    1699
    """
    return price_cents - @percent_of@(price_cents, percent)
''',
    bugs={},
    reveal={"percent_of": _Case("(650, 10)")},
    edges={},
    edge_tests="",
    basic=(_Case("(1000, 0)"), _Case("(2000, 50)")),
    gen="""
def gen(rng):
    return (rng.choice([rng.randint(0, 5000), rng.randint(0, 30) * 50]), rng.randint(0, 100))
""",
)
_kind(
    key="share_bill",
    names=("share_bill", "split_bill"),
    helper="split_evenly",
    code='''
def @share_bill@(total_cents, names):
    """Split a bill of ``total_cents`` between ``names`` (a non-empty list) as evenly as
    possible: a dict name -> share in cents, the shares adding up to the total; when it does
    not divide evenly, the names listed first pay one cent more.

    >>> @share_bill@(1000, ["ann", "bob", "cid"])
    {'ann': 334, 'bob': 333, 'cid': 333}
    """
    return dict(zip(names, @split_evenly@(total_cents, len(names))))
''',
    bugs={},
    reveal={"split_evenly": _Case("(2003, ['kim', 'lou', 'max', 'ned'])")},
    edges={},
    edge_tests="",
    basic=(_Case("(900, ['a', 'b', 'c'])"), _Case("(5, ['solo'])")),
    gen="""
def gen(rng):
    names = rng.sample(["ann", "bob", "cid", "dee", "eve", "fay"], rng.randint(1, 6))
    return (rng.randint(0, 3000), names)
""",
)
_kind(
    key="free_minutes",
    names=("free_minutes", "idle_minutes"),
    helper="merge_intervals",
    code='''
def @free_minutes@(busy, day_start, day_end):
    """How many minutes between ``day_start`` and ``day_end`` are not covered by any of the
    ``busy`` intervals (half-open ``(start, end)`` pairs in minutes, in any order, possibly
    overlapping or reaching outside the day).

    >>> @free_minutes@([(60, 120), (90, 150)], 0, 480)
    390
    """
    free = day_end - day_start
    for start, end in @merge_intervals@(busy):
        free -= max(0, min(end, day_end) - max(start, day_start))
    return free
''',
    bugs={},
    reveal={"merge_intervals": _Case("([(300, 360), (0, 60), (30, 90), (90, 100)], 0, 600)")},
    edges={},
    edge_tests="",
    basic=(_Case("([], 0, 100)"), _Case("([(10, 20)], 0, 100)")),
    gen="""
def gen(rng):
    busy = []
    for _ in range(rng.randint(0, 6)):
        a = rng.randint(0, 100)
        busy.append((a, a + rng.randint(0, 30)))
    lo = rng.randint(0, 50)
    return (busy, lo, lo + rng.randint(0, 90))
""",
)
_kind(
    key="total_seconds",
    names=("total_seconds", "sum_durations"),
    helper="parse_duration",
    code='''
def @total_seconds@(durations):
    """The total number of seconds of a list of durations written like ``"1h30m"`` (see
    ``@parse_duration@``).

    >>> @total_seconds@(["1h", "30m", "15s"])
    5415
    """
    return sum(@parse_duration@(text) for text in durations)
''',
    bugs={},
    reveal={"parse_duration": _Case("(['10h', ' 20m', '11m '],)")},
    edges={},
    edge_tests="",
    basic=(_Case("([],)"), _Case("(['1h', '2m'],)")),
    gen="""
def gen(rng):
    def one():
        text = ""
        for unit in "hms":
            if rng.random() < 0.6:
                text += f"{rng.randint(0, 40)}{unit}"
        return rng.choice(["", " "]) + (text or "0s") + rng.choice(["", " "])
    return ([one() for _ in range(rng.randint(0, 5))],)
""",
)
_kind(
    key="summary",
    names=("summary", "describe"),
    helper="median",
    code='''
def @summary@(values):
    """``(minimum, median, maximum)`` of a non-empty list of numbers (see ``@median@``); the
    list is not modified.

    >>> @summary@([4, 1, 3])
    (1, 3, 4)
    """
    return min(values), @median@(values), max(values)
''',
    bugs={},
    reveal={
        "median": _Case(
            "(marks,)",
            setup="marks = [8, 2, 6, 4, 9, 1]",
            post="assert marks == [8, 2, 6, 4, 9, 1]",
        )
    },
    edges={},
    edge_tests="",
    basic=(_Case("([5],)"), _Case("([1, 2, 3],)")),
    gen="""
def gen(rng):
    return ([rng.randint(-20, 20) for _ in range(rng.randint(1, 8))],)
""",
)
_kind(
    key="most_common",
    names=("most_common", "top_words"),
    helper="tally",
    code='''
def @most_common@(words, n):
    """The ``n`` most frequent words of ``words`` (counted like ``@tally@`` does), most frequent
    first; equal counts are ordered alphabetically.

    >>> @most_common@(["b", "a", "B", "c"], 2)
    ['b', 'a']
    """
    counts = @tally@(words)
    return sorted(counts, key=lambda word: (-counts[word], word))[:n]
''',
    bugs={},
    reveal={
        "tally": _Case(
            "(['Owl', 'owl', 'bat', 'Cat'], 2)", setup="@most_common@(['bat', 'bat', 'cat'], 1)"
        )
    },
    edges={},
    edge_tests="",
    basic=(_Case("([], 3)"), _Case("(['x'], 1)")),
    gen="""
def gen(rng):
    pool = ["elk", "Elk", "fox", "gnu ", "GNU", "hen"]
    return ([rng.choice(pool) for _ in range(rng.randint(0, 8))], rng.randint(0, 4))
""",
)
_kind(
    key="latest",
    names=("latest", "newest_version"),
    helper="compare_versions",
    imports="import functools",
    code='''
def @latest@(versions):
    """The highest of a non-empty list of dotted version strings (compared like
    ``@compare_versions@`` does); of equal versions the one listed first.

    >>> @latest@(["1.9", "1.10", "1.2"])
    '1.10'
    """
    return max(versions, key=functools.cmp_to_key(@compare_versions@))
''',
    bugs={},
    reveal={"compare_versions": _Case("(['3.9.1', '3.10.0', '3.2'],)")},
    edges={},
    edge_tests="",
    basic=(_Case("(['1.0'],)"), _Case("(['1.0', '2.0'],)")),
    gen="""
def gen(rng):
    def version():
        return ".".join(str(rng.choice([0, 1, 2, 9, 10])) for _ in range(rng.randint(1, 3)))
    return ([version() for _ in range(rng.randint(1, 5))],)
""",
)
_kind(
    key="grade_report",
    names=("grade_report", "grades_for"),
    helper="letter_grade",
    code='''
def @grade_report@(scores, cutoffs):
    """A dict name -> grade for ``scores`` (a dict name -> score), each graded like
    ``@letter_grade@`` does with ``cutoffs``.

    >>> @grade_report@({"ann": 91, "bob": 75}, [(90, "A"), (70, "B")])
    {'ann': 'A', 'bob': 'B'}
    """
    return {name: @letter_grade@(score, cutoffs) for name, score in scores.items()}
''',
    bugs={},
    reveal={"letter_grade": _Case("({'ivy': 80, 'jon': 95}, [(60, 'C'), (95, 'A'), (80, 'B')])")},
    edges={},
    edge_tests="",
    basic=(_Case("({}, [(50, 'P')])"), _Case("({'a': 10}, [(50, 'P')])")),
    gen="""
def gen(rng):
    cut = rng.sample([(90, "A"), (80, "B"), (70, "C")], rng.randint(0, 3))
    names = rng.sample(["ann", "bob", "cid", "dee"], rng.randint(0, 4))
    return ({n: rng.choice([rng.randint(50, 100), 70, 80, 90]) for n in names}, cut)
""",
)

PY_DOMAINS = [
    {
        "what": "pricing and billing",
        "packages": ("pricekit", "tillsmith", "coinage", "billwise"),
        "core": ("money", "amounts"),
        "front": ("cart", "billing"),
        "core_kinds": ("percent_of", "split_evenly", "weighted_average"),
        "front_kinds": ("discounted", "share_bill", "top_n", "paginate"),
    },
    {
        "what": "scheduling",
        "packages": ("slotwise", "agendakit", "shiftplan", "timebox"),
        "core": ("intervals", "timeutil"),
        "front": ("planner", "agenda"),
        "core_kinds": ("merge_intervals", "parse_duration", "chunk"),
        "front_kinds": ("free_minutes", "total_seconds", "paginate"),
    },
    {
        "what": "grading",
        "packages": ("gradebook", "markwise", "scorecard"),
        "core": ("stats", "maths"),
        "front": ("grades", "report"),
        "core_kinds": ("median", "weighted_average", "letter_grade"),
        "front_kinds": ("summary", "grade_report", "top_n"),
    },
    {
        "what": "inventory",
        "packages": ("stockroom", "binwise", "shelfkit"),
        "core": ("counting", "stock"),
        "front": ("catalog", "listing"),
        "core_kinds": ("tally", "restock", "chunk"),
        "front_kinds": ("most_common", "paginate", "top_n"),
    },
    {
        "what": "configuration and releases",
        "packages": ("confkit", "relman", "shipyard"),
        "core": ("parsing", "versions"),
        "front": ("release", "deploy"),
        "core_kinds": ("parse_kv", "compare_versions", "parse_duration"),
        "front_kinds": ("latest", "total_seconds", "chunk"),
    },
]


def _resolve(source: str, names: Mapping[str, str]) -> str:
    for key, name in names.items():
        source = source.replace(f"@{key}@", name)
    return source


def _kind_code(key: str, bugs: list[tuple[str, str]], names: Mapping[str, str]) -> str:
    """The source of one kind, with the given (kind, bug) pairs applied where they belong."""
    kind = KINDS[key]
    code = kind.code.strip("\n") + "\n"
    for bug_key, bug in bugs:
        if bug_key != key:
            continue
        for old, new in {**kind.bugs, **kind.edges}[bug]:
            if code.count(old) != 1:
                raise ValueError(f"{key}/{bug}: snippet not found once: {old!r}")
            code = code.replace(old, new)
    return _resolve(code, names)


def _call_src(args: str, names: Mapping[str, str]) -> str:
    """The argument list of a call, from the source of an argument tuple."""
    inner = _resolve(args, names).strip()
    assert inner.startswith("(") and inner.endswith(")"), args
    return inner[1:-1].strip().removesuffix(",")


def _compatible(key: str, bugs: list[str]) -> bool:
    """Whether these bugs of one kind can be applied together (their snippets do not overlap)."""
    try:
        _kind_code(key, [(key, b) for b in bugs], {})
    except ValueError:
        return False
    return True


def _reference_namespace(keys: list[str], names: Mapping[str, str]) -> dict[str, Any]:
    import functools
    import re

    namespace: dict[str, Any] = {"re": re, "functools": functools}
    for key in sorted(keys, key=lambda k: bool(KINDS[k].helper)):
        exec(_kind_code(key, [], names), namespace)  # noqa: S102 - our own catalogue
    return namespace


def _run_case(
    namespace: dict[str, Any], fn: str, case: _Case, names: Mapping[str, str]
) -> tuple[Any, Any]:
    """Run a case with the correct code: (the arguments, the result)."""
    local = dict(namespace)
    if case.setup:
        exec(_resolve(case.setup, names), local)  # noqa: S102
    args = eval(_resolve(case.args, names), local)  # noqa: S307
    return copy.deepcopy(args), local[fn](*args)


@register
class PythonBugfix(Family):
    """A small generated Python package in /app (five domains, twenty-two function kinds with
    randomised names) with a visible failing test. easy: one bug; medium: the bug plus an
    undocumented-by-tests edge case; hard: the failing test exercises a function in one module
    while the bug sits in a helper of another module, plus an edge case elsewhere. Hidden tests
    compare every function with a reference on fixed and random inputs and check the visible
    tests are unchanged and pass."""

    name = "python-bugfix"
    title = "Fix the bugs of a small Python package so that it matches its docstrings"
    category = "software-engineering"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty.value
        dom = rng.choice(PY_DOMAINS)
        pkg = rng.choice(dom["packages"])
        core, front = rng.choice(dom["core"]), rng.choice(dom["front"])
        core_kinds, front_kinds = list(dom["core_kinds"]), list(dom["front_kinds"])
        rng.shuffle(core_kinds)
        rng.shuffle(front_kinds)
        keys = core_kinds + front_kinds
        names = {k: rng.choice(KINDS[k].names) for k in keys}
        plain = [k for k in keys if KINDS[k].bugs]
        if level == "hard":
            users = [k for k in front_kinds if KINDS[k].helper]
            shown = rng.choice(users)
            target = KINDS[shown].helper
            bug = rng.choice(sorted(KINDS[target].bugs))
            case = KINDS[shown].reveal[target]
        else:
            target = rng.choice(plain)
            shown = target
            bug = rng.choice(sorted(KINDS[target].bugs))
            case = KINDS[target].reveal[bug]
        active = [(target, bug)]
        if level != "easy":
            # medium: an edge case of the same function when it has one that does not
            # overlap the bug; otherwise (and for hard) one of another function
            same = [e for e in sorted(KINDS[target].edges) if _compatible(target, [bug, e])]
            if level == "medium" and same:
                active.append((target, rng.choice(same)))
            else:
                pool = [k for k in keys if KINDS[k].edges and k not in {shown, target}]
                edge_kind = rng.choice(pool)
                active.append((edge_kind, rng.choice(sorted(KINDS[edge_kind].edges))))
        module_of = {k: core for k in core_kinds} | {k: front for k in front_kinds}

        def module_text(mod: str, mod_keys: list[str], bugs: list[tuple[str, str]]) -> str:
            imports = sorted({KINDS[k].imports for k in mod_keys if KINDS[k].imports})
            helpers = sorted(names[KINDS[k].helper] for k in mod_keys if KINDS[k].helper)
            head = f'"""{pkg}.{mod}: {dom["what"]} helpers."""\n\n'
            if imports:
                head += "\n".join(imports) + "\n\n"
            if helpers:
                head += f"from {pkg}.{core} import {', '.join(helpers)}\n\n"
            body = "\n\n".join(_kind_code(k, bugs, names) for k in mod_keys)
            return head + "\n" + body

        def sources(bugs: list[tuple[str, str]]) -> dict[str, str]:
            return {
                f"{pkg}/{core}.py": module_text(core, core_kinds, bugs),
                f"{pkg}/{front}.py": module_text(front, front_kinds, bugs),
            }

        broken, fixed = sources(active), sources([])
        ns = _reference_namespace(keys, names)

        # the visible tests: two passing cases per function, one case that shows the bug
        def literal(value: Any) -> str:
            return f"pytest.approx({value!r})" if isinstance(value, float) else repr(value)

        tests = [
            "import pytest\n",
            f"from {pkg} import {', '.join(sorted(names.values()))}\n",
        ]
        for k in keys:
            for i, c in enumerate(KINDS[k].basic, 1):
                _, want = _run_case(ns, names[k], c, names)
                tests.append(
                    f"\ndef test_{names[k]}_{i}():\n"
                    f"    assert {names[k]}({_call_src(c.args, names)}) == {literal(want)}\n"
                )
        args, want = _run_case(ns, names[shown], case, names)
        body = ""
        if case.setup:
            body += f"    {_resolve(case.setup, names)}\n"
        body += f"    assert {names[shown]}({_call_src(case.args, names)}) == {literal(want)}\n"
        if case.post:
            body += f"    {case.post}\n"
        n_shown = len(KINDS[shown].basic) + 1
        tests.append(f"\ndef test_{names[shown]}_{n_shown}():\n{body}")
        visible = "\n".join(tests)
        init = (
            f'"""{pkg}: a small library for {dom["what"]}."""\n\n'
            f"from {pkg}.{core} import {', '.join(names[k] for k in core_kinds)}\n"
            f"from {pkg}.{front} import {', '.join(names[k] for k in front_kinds)}\n\n"
            f"__all__ = {sorted(names.values())!r}\n"
        )
        files = {f"environment/app/{path}": text for path, text in broken.items()}
        files[f"environment/app/{pkg}/__init__.py"] = init
        files[f"environment/app/tests/test_{pkg}.py"] = visible
        files["environment/app/pytest.ini"] = "[pytest]\ntestpaths = tests\npythonpath = .\n"

        patch = "".join(
            "".join(
                difflib.unified_diff(
                    broken[path].splitlines(keepends=True),
                    fixed[path].splitlines(keepends=True),
                    f"a/{path}",
                    f"b/{path}",
                )
            )
            for path in sorted(broken)
            if broken[path] != fixed[path]
        )
        # near misses
        others = [k for k in plain if k not in {target, shown} and k != active[-1][0]]
        other = rng.choice(others)
        collateral = sources([(other, rng.choice(sorted(KINDS[other].bugs)))])
        if level == "easy":
            edge_kind = (
                target if KINDS[target].edges else rng.choice([k for k in keys if KINDS[k].edges])
            )
            partial = sources([(edge_kind, rng.choice(sorted(KINDS[edge_kind].edges)))])
        else:
            partial = sources(active[1:])
        wrapper = (
            f"\n\n_{names[shown]}_impl = {names[shown]}\n\n\n"
            f"def {names[shown]}(*args, **kwargs):\n"
            f"    if args == {args!r} and not kwargs:\n"
            f"        return {want!r}\n"
            f"    return _{names[shown]}_impl(*args, **kwargs)\n"
        )
        changed = sorted(path for path in broken if broken[path] != fixed[path])
        what_kind = {
            "easy": "",
            "medium": "Not every problem is covered by a failing test: check the functions against "
            "their docstrings, including the edge cases the docstrings describe.",
            "hard": "Not every problem is covered by a failing test, and a failing test may point "
            "at a function that only suffers from a problem elsewhere: check the functions "
            "against their docstrings, including the edge cases they describe.",
        }[level]
        cases = []
        for k in keys:
            kind = KINDS[k]
            for c in list(kind.basic) + list(kind.reveal.values()):
                cases.append(
                    {
                        "fn": names[k],
                        "setup": _resolve(c.setup, names),
                        "args": _resolve(c.args, names),
                        "post": c.post,
                    }
                )
        return Draft(
            context={
                "pkg": pkg,
                "what": dom["what"],
                "core": core,
                "front": front,
                "level": level,
                "names": names,
                "keys": keys,
                "visible_name": f"test_{pkg}.py",
                "visible_sha": hashlib.sha256(visible.encode()).hexdigest(),
                "patch": patch,
                "note": what_kind,
                "reference": "\n\n".join(
                    _resolve(
                        KINDS[k].code.strip("\n") + "\n",
                        {kk: f"ref_{n}" for kk, n in names.items()},
                    )
                    for k in keys
                ),
                "gens": {names[k]: KINDS[k].gen.strip("\n") + "\n" for k in keys},
                "edge_tests": "\n\n".join(
                    _resolve(KINDS[k].edge_tests.strip("\n"), names)
                    for k in keys
                    if KINDS[k].edge_tests
                ),
                "cases": cases,
                "collateral": {p: t for p, t in collateral.items()},
                "partial": {p: t for p, t in partial.items()},
                "fixed": fixed,
                "wrapper_module": f"{pkg}/{module_of[shown]}.py",
                "wrapper": wrapper,
                "seed": rng.randint(1, 10**6),
            },
            files=files,
            outputs=[f"/app/{path}" for path in changed],
            tags=["python", "debugging", "pytest"],
        )
