"""shell-basics at hard: a report of five or six one-line answers, each about a list of its own
in a folder of its own, and two to four of the lists arrive in a shape the instruction does not
name (:data:`QUIRKS`, from quirks.toml: compressed, UTF-16, Windows or old-Mac line ends, a UTF-8
byte order mark, Latin-1, cut into pieces, no final newline). Each such list needs a step of its
own before its question can be answered with the classic tools, and each quirk is planted only
under a question whose answer it changes when left alone (:data:`BREAKS`)."""

from __future__ import annotations

import gzip
import random
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator

from factory.datafiles import load_toml_model
from factory.vocabulary import Trap

#: name -> (question about the list {list}, command on the plain text file {f})
QUESTIONS: dict[str, tuple[str, str]] = {
    "count-lines": ("the number of entries in {list}", "wc -l < {f}"),
    "count-words": ("the number of words in {list}", "wc -w < {f}"),
    "first-line": ("the first entry of {list}", "head -n 1 {f}"),
    "last-line": ("the last entry of {list}", "tail -n 1 {f}"),
    "count-match": ("how many entries of {list} contain the word `{word}`", "grep -c {word} {f}"),
    "max-number": ("the largest number in {list}", "sort -n {f} | tail -n 1"),
    "min-number": ("the smallest number in {list}", "sort -n {f} | head -n 1"),
    "sum": ("the sum of the numbers in {list}", "awk '{{s += $1}} END {{print s}}' {f}"),
    "count-distinct": ("how many different entries {list} holds", "sort -u {f} | wc -l"),
}
#: A plausible but wrong command per question (the family's `near-miss` probe at hard).
NEAR_MISS = {
    "count-lines": "wc -w < {f}",
    "count-words": "wc -l < {f}",
    "first-line": "head -n 2 {f}",
    "last-line": "head -n 1 {f}",
    "count-match": "grep -c -v {word} {f}",
    "max-number": "sort {f} | tail -n 1",
    "min-number": "sort {f} | head -n 1",
    "sum": "wc -l < {f}",
    "count-distinct": "wc -l < {f}",
}
NUMERIC = {"max-number", "min-number", "sum"}


class _Quirk(BaseModel):
    """A shape a list may arrive in (quirks.toml)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    step: str | None = None
    """The step that turns the shipped file(s) {src} into plain text {f} (None: the list is text
    already, the question needs another command instead)."""
    breaks: tuple[str, ...]
    """The questions whose answer it changes when the shipped file is read as it is."""
    trap: str
    tells: tuple[str, ...]

    @field_validator("breaks")
    @classmethod
    def _known_questions(cls, breaks: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [q for q in breaks if q not in QUESTIONS]
        if unknown:
            raise ValueError(f"unknown question '{unknown[0]}'")
        return breaks


class _Quirks(BaseModel):
    model_config = ConfigDict(extra="forbid")

    quirk: dict[str, _Quirk]


_QUIRKS = load_toml_model(
    Path(__file__).parent / "quirks.toml", _Quirks, "shell-basics quirks"
).quirk
#: quirk -> the step that turns the shipped file(s) {src} into plain text {f}, or None.
QUIRKS: dict[str, str | None] = {name: q.step for name, q in _QUIRKS.items()}
#: quirk -> the questions whose answer it changes when the shipped file is read as it is.
BREAKS: dict[str, tuple[str, ...]] = {name: q.breaks for name, q in _QUIRKS.items()}
#: quirk -> its trap (the unannounced part, the words that would give it away).
TRAPS: dict[str, Trap] = {name: Trap(q.trap, q.tells) for name, q in _QUIRKS.items()}
ACCENTED = ["café", "crème", "piñata", "façade", "naïve", "über", "smörgås", "fiancé", "jalapeño"]


@dataclass
class Source:
    """One list: where it is, what the question asks, how it is shipped."""

    name: str
    folder: str
    question: str
    quirk: str | None
    lines: list[str]
    word: str = ""
    shipped: dict[str, bytes] = field(default_factory=dict)  # container path -> bytes

    @property
    def plain(self) -> str:
        """The path of the list as plain text: the shipped file, or the scratch copy."""
        if self.quirk in (None, "no-final-newline"):
            return f"{self.folder}/{self.name}.txt"
        return f"/tmp/{self.name}.txt"

    def decode_step(self) -> str | None:
        step = QUIRKS.get(self.quirk or "")
        if step is None:
            return None
        src = " ".join(shlex.quote(p) for p in sorted(self.shipped))
        return step.format(src=src, f=shlex.quote(self.plain))

    def command(self, on: str | None = None, near_miss: bool = False) -> str:
        """The question's command on ``on`` (default: the plain text)."""
        f = shlex.quote(on or self.plain)
        if near_miss:
            return NEAR_MISS[self.question].format(f=f, word=shlex.quote(self.word))
        if self.quirk == "no-final-newline" and on is None and self.question == "count-lines":
            return f"grep -c '' {f}"  # `wc -l` counts newlines: one short here
        return QUESTIONS[self.question][1].format(f=f, word=shlex.quote(self.word))

    def naive(self) -> str:
        """The question's command on the shipped file as it is (a quirk left alone): the first
        piece of a list cut into pieces."""
        return self.command(on=sorted(self.shipped)[0])

    @property
    def answer(self) -> str:
        return answer(self.question, self.lines, self.word)

    def ask(self) -> str:
        return QUESTIONS[self.question][0].format(list=f"the `{self.name}` list", word=self.word)


def answer(question: str, lines: list[str], word: str = "") -> str:
    """What the question's command prints for these lines (a plain text file)."""
    if question == "count-lines":
        return str(len(lines))
    if question == "count-words":
        return str(sum(len(line.split()) for line in lines))
    if question == "first-line":
        return lines[0]
    if question == "last-line":
        return lines[-1]
    if question == "count-match":
        return str(sum(word in line for line in lines))
    if question == "max-number":
        return str(max(int(v) for v in lines))
    if question == "min-number":
        return str(min(int(v) for v in lines))
    if question == "sum":
        return str(sum(int(v) for v in lines))
    return str(len(set(lines)))


def _numbers(rng: random.Random) -> list[str]:
    """8-20 numbers where a text sort picks neither the largest (more digits, a low first
    digit, and a 9xx elsewhere) nor the smallest (one digit, while others start with 1)."""
    values = [rng.randint(20, 5000) for _ in range(rng.randint(8, 20))]
    big, nine, small = rng.sample(range(len(values)), 3)
    values[big] = rng.randint(10000, 19999)
    values[nine] = rng.randint(900, 999)
    values[small] = rng.randint(2, 9)
    return [str(v) for v in values]


def _words(
    rng: random.Random, words: list[str], question: str, accented: bool
) -> tuple[list[str], str]:
    """8-25 entries of one to five words, and the word a count-match question asks about."""
    word = rng.choice(ACCENTED if accented else words)
    pool = [w for w in words if w != word] + (
        [a for a in ACCENTED if a != word] if accented else []
    )
    lines = [
        " ".join(rng.choice(pool) for _ in range(rng.randint(1, 5)))
        for _ in range(rng.randint(8, 25))
    ]
    if accented:  # first and last entries, and some others, hold a non-ASCII letter
        for i in {0, len(lines) - 1, *rng.sample(range(len(lines)), 3)}:
            lines[i] = f"{lines[i]} {rng.choice([a for a in ACCENTED if a != word])}"
    if question == "count-match":
        for i in rng.sample(range(len(lines)), rng.randint(2, (len(lines) - 1) // 2)):
            lines[i] = f"{lines[i]} {word}"
    if question == "count-distinct":
        lines += rng.sample(lines, rng.randint(2, len(lines) // 2))
        rng.shuffle(lines)
    return lines, word


def _ship(rng: random.Random, source: Source) -> None:
    """The shipped file(s) of ``source``, shaped by its quirk."""
    base = f"{source.folder}/{source.name}.txt"
    text = "".join(line + "\n" for line in source.lines)
    quirk = source.quirk
    if quirk == "gzip":
        source.shipped = {base + ".gz": gzip.compress(text.encode(), mtime=0)}
    elif quirk == "utf16":
        source.shipped = {base: b"\xff\xfe" + text.encode("utf-16-le")}
    elif quirk == "crlf":
        source.shipped = {base: text.replace("\n", "\r\n").encode()}
    elif quirk == "cr-only":
        source.shipped = {base: text.replace("\n", "\r").encode()}
    elif quirk == "bom":
        source.shipped = {base: b"\xef\xbb\xbf" + text.encode()}
    elif quirk == "latin1":
        source.shipped = {base: text.encode("latin-1")}
    elif quirk == "split":  # as `split -d -l K NAME.txt NAME.txt.` cuts it
        size = -(-len(source.lines) // 3)
        chunks = [source.lines[i : i + size] for i in range(0, len(source.lines), size)]
        source.shipped = {
            f"{base}.{i:02d}": "".join(line + "\n" for line in chunk).encode()
            for i, chunk in enumerate(chunks)
        }
    elif quirk == "no-final-newline":
        source.shipped = {base: text[:-1].encode()}
    else:
        source.shipped = {base: text.encode()}


def _left_alone_differs(source: Source) -> bool:
    """Whether the question read from the shipped file as it is gets another answer (checked
    here where the quirk leaves the text readable; the other quirks garble every answer
    :data:`BREAKS` gives them)."""
    right = answer(source.question, source.lines, source.word)
    if source.quirk == "split":
        first = sorted(source.shipped)[0]
        lines = source.shipped[first].decode().splitlines()
        return answer(source.question, lines, source.word) != right
    if source.quirk == "gzip" and source.question == "count-lines":
        return next(iter(source.shipped.values())).count(b"\n") != len(source.lines)
    if source.quirk == "bom" and source.question == "max-number":
        # `sort -n` takes the marked first line for 0: the largest must be that line
        return max(source.lines, key=int) == source.lines[0]
    return True


def draw_sources(
    rng: random.Random, words: list[str], folders: list[str], out_dirs: list[str]
) -> tuple[list[Source], str]:
    """Five or six lists with a question each; two to four of them quirky."""
    quirks = rng.sample(sorted(QUIRKS), rng.randint(2, 4))
    n = rng.randint(5, 6)
    questions: list[str | None] = [None] * n
    # the quirk with the fewest questions it can go with picks first
    slots = rng.sample(range(n), len(quirks))
    taken: set[str] = set()
    plan: dict[int, str] = {}
    for quirk, slot in sorted(zip(quirks, slots, strict=True), key=lambda qs: len(BREAKS[qs[0]])):
        question = rng.choice([q for q in BREAKS[quirk] if q not in taken])
        taken.add(question)
        questions[slot] = question
        plan[slot] = quirk
    for i in range(n):
        if questions[i] is None:
            questions[i] = rng.choice(sorted(set(QUESTIONS) - taken))
            taken.add(questions[i])
    names: set[str] = set()
    sources = []
    for i, question in enumerate(questions):
        assert question is not None
        while True:
            name = f"{rng.choice(words)}-{rng.randint(10, 99)}"
            if name.split("-")[0] not in {m.split("-")[0] for m in names}:
                break
        names.add(name)
        quirk = plan.get(i)
        folder = rng.choice(folders)
        for _ in range(100):
            if question in NUMERIC:
                lines, word = _numbers(rng), ""
                if quirk == "bom" and question == "max-number":
                    top = max(range(len(lines)), key=lambda k: int(lines[k]))
                    lines[0], lines[top] = lines[top], lines[0]
            else:
                lines, word = _words(rng, words, question, accented=quirk == "latin1")
            source = Source(name, folder, question, quirk, lines, word)
            _ship(rng, source)
            if quirk is None or _left_alone_differs(source):
                break
        else:  # pragma: no cover - every quirk finds data within a few tries
            raise AssertionError(f"no data for {quirk} under {question}")
        sources.append(source)
    out = f"{rng.choice(out_dirs)}/{rng.choice(['report', 'answers', 'summary'])}.txt"
    return sources, out


def traps_of(sources: list[Source]) -> list[Trap]:
    return [TRAPS[s.quirk] for s in sources if s.quirk]
