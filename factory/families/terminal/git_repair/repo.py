"""A model of the repository a git-repair image builds: every operation is recorded as a plan
(replayed by ``environment/make_repo.py``) and every object id is computed here in pure Python,
exactly as git computes it."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


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
class Commit:
    sha: str
    files: dict[str, str]
    parents: list[str]
    subject: str
    author: tuple[str, str]
    time: int


@dataclass
class Repo:
    """A model of the repository the image builds: every operation is recorded in ``plan``
    (replayed by environment/make_repo.py) and every commit id computed here, so the hidden
    tests can demand exact ids. make_repo.py checks each id and fails the build on a mismatch."""

    path: str
    branch: str
    clock: int
    plan: list[dict[str, Any]] = field(default_factory=list)
    commits: dict[str, Commit] = field(default_factory=dict)
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
        self.commits[sha] = Commit(sha, files, [parent] if parent else [], subject, author, when)
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
