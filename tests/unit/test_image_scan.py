"""The image scan for forbidden strings reports only what the task's build added or changed:
its decision, against a stand-in engine whose images are dicts of files (no Docker)."""

from __future__ import annotations

import hashlib

import pytest

from factory.errors import ContainerDiedError
from factory.images.aliases import AliasTable, rewrite_dockerfile
from factory.quality import leaks
from factory.quality.leaks import SCAN_CAP, added_or_changed, parse_sums, scan_image
from factory.runtime import ContainerSpec
from factory.runtime.sandbox import ExecResult

SECRET = "return self._reindent(tokens, width)"
BASE = "factory/python:bookworm"
TASK = "factory-env:task"
VENDORED = "/usr/lib/python3/dist-packages/pip/_vendor/pygments/lexer.py"


def _sum(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class _Box:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def exec(self, command, *, timeout_sec, what):
        """What the scan's two scripts print: the task image's grep (with each hit's digest) or
        the digests of the named paths (``sh -c SCRIPT sh PATH...``) in the base image."""
        if what == "image scan":
            found = [p for p, text in self.files.items() if SECRET in text][: SCAN_CAP + 1]
        else:
            found = [p for p in command[4:] if p in self.files]
        lines = [f"{_sum(self.files[p])} {p}" for p in found]
        return ExecResult(0, "".join(f"{line}\n" for line in lines), 0.1)


class _Engine:
    def __init__(self, images: dict[str, dict[str, str]]) -> None:
        self.images = images
        self.started: list[str] = []

    def start(self, spec: ContainerSpec):
        self.started.append(spec.image)
        if spec.image not in self.images:
            raise ContainerDiedError(f"image {spec.image} does not exist")
        return _Box(self.images[spec.image])


@pytest.fixture(autouse=True)
def _plain_spec(monkeypatch):
    import factory.validate.phases as phases

    monkeypatch.setattr(phases, "container_spec", lambda task, image: ContainerSpec(image=image))


def _images(**task_files: str) -> dict[str, dict[str, str]]:
    base = {VENDORED: f"x = 1\n{SECRET}\n", "/etc/os-release": "bookworm"}
    return {BASE: base, TASK: {**base, **task_files}}


def test_a_file_the_base_image_has_unchanged_is_not_reported():
    engine = _Engine(_images())
    assert scan_image(engine, None, TASK, [SECRET], base=BASE) == []
    assert engine.started == [TASK, BASE]


def test_a_file_the_task_adds_or_changes_is_reported():
    engine = _Engine(_images(**{"/app/sqlparse/filters.py": SECRET, VENDORED: f"{SECRET}\n# x"}))
    found = scan_image(engine, None, TASK, [SECRET], base=BASE)
    assert sorted(found) == ["/app/sqlparse/filters.py", VENDORED]


def test_without_a_base_or_its_container_every_file_is_reported():
    engine = _Engine(_images())
    assert scan_image(engine, None, TASK, [SECRET]) == [VENDORED]
    assert engine.started == [TASK]
    assert scan_image(engine, None, TASK, [SECRET], base="factory/gone:1") == [VENDORED]


def test_no_strings_no_scan():
    engine = _Engine(_images())
    assert scan_image(engine, None, TASK, [], base=BASE) == []
    assert engine.started == []


def test_hits_beyond_the_cap_are_not_passed_silently():
    many = {f"/usr/share/doc/{i}.txt": SECRET for i in range(SCAN_CAP + 5)}
    images = _images()
    images[BASE].update(many)
    images[TASK].update(many)
    found = scan_image(_Engine(images), None, TASK, [SECRET], base=BASE)
    assert len(found) == 1 and f"more than {SCAN_CAP} files" in found[0]


def test_a_timed_out_scan_says_so(monkeypatch):
    class Slow(_Box):
        def exec(self, command, *, timeout_sec, what):
            return ExecResult(None, "", timeout_sec, timed_out=True)

    engine = _Engine(_images())
    monkeypatch.setattr(engine, "start", lambda spec: Slow({}))
    assert scan_image(engine, None, TASK, [SECRET], base=BASE) == [
        "(the scan of the image timed out)"
    ]
    assert leaks.SCAN_TIMEOUT_SEC <= 300


def test_the_decision_compares_path_and_content():
    hits = parse_sums("aa /app/new.py\nbb /usr/lib/same.py\ncc /usr/lib/changed.py\n /unread\n")
    assert hits[-1] == ("/unread", "")
    base = {"/usr/lib/same.py": "bb", "/usr/lib/changed.py": "00", "/unread": ""}
    assert added_or_changed(hits, base) == ["/app/new.py", "/usr/lib/changed.py", "/unread"]
    assert added_or_changed([("/a b/c d.py", "ee")], {"/a b/c d.py": "ee"}) == []


@pytest.mark.parametrize(
    ("dockerfile", "base"),
    [
        ("FROM factory/python:bookworm\nRUN echo\n", "factory/python:bookworm"),
        ("FROM a:1 AS build\nRUN make\nFROM b:2\nCOPY --from=build /x /x\n", "b:2"),
        ("FROM a:1 AS Build\nFROM build AS test\nFROM test\n", "a:1"),
        ("FROM --platform=linux/amd64 a:1\nLABEL factory.managed=1\n", "a:1"),
        ("FROM a:1 AS build\nFROM scratch\n", None),
        ("ARG IMAGE=b:2\nFROM ${IMAGE}\n", "b:2"),
        ("RUN true\n", None),
    ],
)
def test_final_base_is_the_image_the_last_stage_builds_on(dockerfile, base):
    """Found by the Dockerfile rewrite as it points each FROM at a local image (an ARG in FROM
    it expands; one it cannot expand names no local image, and the build is refused)."""
    local = {"a:1", "b:2", "factory/python:bookworm"}
    assert rewrite_dockerfile(dockerfile, AliasTable(), local.__contains__).final_base == base
