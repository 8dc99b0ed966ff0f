"""The export an archives task packs, shared by the extract kind (easy, medium) and the hard
restore: the project's members under its top-level folders (past near-miss decoys of the
selection rules), a vendored library's members, and the folders an archive lists first."""

from __future__ import annotations

import posixpath

from factory.families.terminal.archives.words import EXTS, SUBS
from factory.families.terminal.seed_tree import DAY, Entry, words_text
from factory.families.terminal.words import FWORDS, WORDS

#: What an export's archive is called (``<project>-<kind>-<day>``) and the folders it is
#: delivered to.
EXPORT_KINDS = ["export", "snapshot", "bundle", "dump", "handover"]
DROP_DIRS = ["/srv/incoming", "/var/tmp/uploads", "/data/inbox", "/opt/drop"]


def restore_targets(proj: str) -> list[str]:
    """The paths a selection of ``proj``'s export is restored to."""
    return [
        f"/opt/{proj}/restore",
        f"/srv/{proj}/extracted",
        f"/var/lib/{proj}/import",
        f"/data/{proj}/selected",
    ]


class Export:
    """The members of ``proj``'s export as of ``stamp``, each with one of ``modes``, and the
    selection rules (a top-level folder and an extension each) a task asks for."""

    def __init__(self, rng, proj: str, stamp: int, modes: list[int]):
        self.rng = rng
        self.proj = proj
        self.stamp = stamp
        self.modes = modes
        self.members: dict[str, Entry] = {}
        self.taken: set[str] = set()
        self.rules: list[list[str]] = []

    def draw(self, tops: list[str], n_rules: int, n_members: int) -> None:
        """The rules (on the first ``n_rules`` of ``tops``), ``n_members`` members anywhere
        under ``tops``, then for each rule a few selected members and its decoys: a backup
        suffix, a look-alike folder, the folder nested under another, the extension upper-case."""
        rng = self.rng
        exts = rng.sample(EXTS, n_rules)
        self.rules = [[d, e] for d, e in zip(tops[:n_rules], exts, strict=True)]
        for _ in range(n_members):
            top = rng.choice(tops)
            self.add(
                f"{top}/{self.subdir(rng.choice([0, 0, 1, 1, 2]))}{self.fname(rng.choice(EXTS))}"
            )
        for d, ext in self.rules:
            for depth in [0, 1] + [rng.choice([0, 1, 2]) for _ in range(rng.randint(1, 3))]:
                self.add(f"{d}/{self.subdir(depth)}{self.fname(ext)}")
            other = rng.choice([t for t in tops if t != d])
            at = f"{d}/{self.subdir(rng.choice([0, 1]))}{self.fname(ext)}"
            self.add(f"{at}.{rng.choice(['bak', 'orig', 'old'])}")
            self.add(f"{d}.{rng.choice(['old', 'prev', 'orig'])}/{self.fname(ext)}")
            self.add(f"{other}/{d}/{self.fname(ext)}")
            self.add(f"{d}/{self.subdir(rng.choice([0, 1]))}{self.fname(ext.upper())}")

    def selected(self, path: str) -> bool:
        """Whether the rules select ``path``."""
        return any(path.startswith(d + "/") and path.endswith("." + e) for d, e in self.rules)

    def fname(self, ext: str) -> str:
        word = self.rng.choice(FWORDS)
        tail = self.rng.choice(
            ["", f"-{self.rng.randint(1, 99)}", f"_{self.rng.choice(SUBS)}", "-final"]
        )
        return f"{word}{tail}.{ext}"

    def subdir(self, depth: int) -> str:
        return "".join(s + "/" for s in self.rng.sample(SUBS, depth))

    def body(self, path: str, lines: int) -> bytes:
        return (f"# {self.proj}: {path}\n" + words_text(self.rng, lines, WORDS)).encode()

    def free(self, path: str) -> bool:
        """Whether ``path`` is neither taken nor a folder of, or inside, a taken path."""
        return not any(
            p == path or p.startswith(path + "/") or path.startswith(p + "/") for p in self.taken
        )

    def add(self, path: str) -> None:
        """A member at ``path`` unless that place is not free."""
        if not self.free(path):
            return
        self.taken.add(path)
        self.members[path] = Entry(
            path,
            data=self.body(path, self.rng.randint(2, 30)),
            mode=self.rng.choice(self.modes),
            mtime=self.stamp - self.rng.randint(1, 400) * DAY - 2 * self.rng.randint(0, 40000),
        )

    def library(self, lib: str) -> list[Entry]:
        """The members of vendored library ``lib``'s own archive (older than the export)."""
        rng = self.rng
        inner = ["README.md", "LICENSE", f"include/{lib}.h"]
        inner += [f"src/{w}.c" for w in rng.sample(WORDS, rng.randint(2, 4))]
        inner += [f"cmake/{rng.choice(WORDS)}.cmake"]
        return [
            Entry(
                rel,
                data=(
                    f"/* {lib}: {rel} */\n" + words_text(rng, rng.randint(2, 12), WORDS)
                ).encode(),
                mode=rng.choice(self.modes),
                mtime=self.stamp - rng.randint(500, 900) * DAY - 2 * rng.randint(0, 40000),
            )
            for rel in inner
        ]


def folders_of(paths) -> list[str]:
    """Every folder above the relative ``paths``, sorted (an archive's directory members)."""
    names = {posixpath.dirname(p) for p in paths} - {""}
    return sorted(
        {"/".join(d.split("/")[: i + 1]) for d in names for i in range(len(d.split("/")))}
    )
