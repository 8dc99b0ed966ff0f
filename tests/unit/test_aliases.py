from __future__ import annotations

import pytest

from factory.errors import BaseImageMissingError, RecipeError
from factory.images.aliases import (
    AliasTable,
    load_alias_file,
    normalize_reference,
    rewrite_dockerfile,
)

LOCAL = {
    "factory/base:bookworm",
    "factory/build:bookworm",
    "factory/python:bookworm",
    "factory/python:trixie",
    "my/local:1",
}


def exists(ref: str) -> bool:
    return ref in LOCAL


@pytest.fixture
def table(monkeypatch):
    monkeypatch.delenv("FACTORY_IMAGE_ALIASES", raising=False)
    monkeypatch.setenv("HOME", "/nonexistent-home")
    return AliasTable.load()


@pytest.mark.parametrize(
    ("ref", "normalized"),
    [
        ("python:3.12-slim", "python:3.12-slim"),
        ("docker.io/library/python:3.12", "python:3.12"),
        ("ubuntu", "ubuntu:latest"),
        ("ghcr.io/org/img@sha256:abc", "ghcr.io/org/img:latest"),
        ("localhost:5000/img", "localhost:5000/img:latest"),
    ],
)
def test_normalize(ref, normalized):
    assert normalize_reference(ref) == normalized


@pytest.mark.parametrize(
    ("ref", "target"),
    [
        ("ghcr.io/laude-institute/t-bench/python-3-13:20250620", "factory/base:bookworm"),
        ("ghcr.io/laude-institute/t-bench/ubuntu-24-04:latest", "factory/base:bookworm"),
        ("python:3.13-slim-bookworm", "factory/python:trixie"),
        ("python:3.12-slim-bookworm", "factory/python:bookworm"),
        ("docker.io/library/python:3.11", "factory/python:bookworm"),
        ("python:3.12", "factory/python:trixie"),
        ("ubuntu:24.04", "factory/base:bookworm"),
        ("debian:bookworm-slim", "factory/base:bookworm"),
        ("buildpack-deps:bookworm", "factory/build:bookworm"),
        ("my/local:1", "my/local:1"),
    ],
)
def test_resolve(table, ref, target):
    assert table.resolve(ref, exists) == target


@pytest.mark.parametrize(
    ("ref", "target"),
    [
        ("ghcr.io/laude-institute/t-bench/python-3-13:20250620", "factory/base:trixie"),
        ("ghcr.io/laude-institute/t-bench/ubuntu-24-04:latest", "factory/base:trixie"),
        ("python:3.13-slim-bookworm", "factory/python:trixie"),
        ("python:3.12", "factory/python:trixie"),
        ("python:3", "factory/python:trixie"),
        ("python:3.11-slim", "factory/python:bookworm"),
        ("python:3.9.18-slim", "factory/python:bookworm"),
        ("ubuntu:24.04", "factory/base:trixie"),
        ("ubuntu:22.04", "factory/base:bookworm"),
        ("debian:trixie-slim", "factory/base:trixie"),
        ("debian:bookworm", "factory/base:bookworm"),
    ],
)
def test_resolve_prefers_the_closer_release_when_built(table, ref, target):
    local = LOCAL | {"factory/base:trixie"}
    assert table.resolve(ref, local.__contains__) == target


def test_resolve_falls_back_to_next_target(table):
    only_base = {"factory/base:bookworm"}
    assert table.resolve("buildpack-deps:curl", only_base.__contains__) == "factory/base:bookworm"


def test_unknown_image_resolves_to_none(table):
    assert table.resolve("registry.example.com/x:1", exists) is None


def test_user_alias_file_wins(tmp_path, monkeypatch):
    extra = tmp_path / "aliases.toml"
    extra.write_text('[[alias]]\npattern = "python:*"\ntargets = ["my/local:1"]\n')
    monkeypatch.setenv("FACTORY_IMAGE_ALIASES", str(extra))
    assert AliasTable.load().resolve("python:3.12", exists) == "my/local:1"


def test_bad_alias_file(tmp_path):
    bad = tmp_path / "a.toml"
    bad.write_text('[[alias]]\npattern = "x"\n')
    with pytest.raises(RecipeError, match=r"alias\.0\.targets"):
        load_alias_file(bad)
    bad.write_text("[[alias]\n")
    with pytest.raises(RecipeError, match="invalid TOML"):
        load_alias_file(bad)


def test_rewrite_from_lines(table):
    dockerfile = (
        "# syntax=docker/dockerfile:1\n"
        "ARG BASE=python:3.12-slim\n"
        "FROM --platform=linux/amd64 ${BASE} AS builder\n"
        "RUN echo build\n"
        "FROM ubuntu:24.04\n"
        "COPY --from=builder /x /x\n"
        "COPY --from=python:3.11 /usr/bin/python3 /usr/bin/python3\n"
        "from scratch as empty\n"
    )
    result = rewrite_dockerfile(dockerfile, table, exists)
    lines = result.text.splitlines()
    assert lines[2] == "FROM factory/python:trixie AS builder"
    assert lines[4] == "FROM factory/base:bookworm"
    assert lines[5] == "COPY --from=builder /x /x"
    assert lines[6] == "COPY --from=factory/python:bookworm /usr/bin/python3 /usr/bin/python3"
    assert lines[7] == "FROM scratch as empty"
    assert ("python:3.12-slim", "factory/python:trixie") in result.substitutions
    assert result.base_images == [
        "factory/python:trixie",
        "factory/base:bookworm",
        "factory/python:bookworm",
    ]
    assert any("--platform" in note for note in result.notes)


def test_rewrite_raises_for_unmapped_image(table):
    with pytest.raises(BaseImageMissingError) as info:
        rewrite_dockerfile("FROM quay.io/acme/tool:2\n", table, exists, dockerfile="env/Dockerfile")
    assert "quay.io/acme/tool:2" in str(info.value)
    assert "env/Dockerfile" in str(info.value)
    assert "factory images build" in str(info.value)


@pytest.mark.parametrize(
    ("ref", "target"),
    [
        ("node:20-bookworm-slim", "factory/node:trixie"),
        ("golang:1.22", "factory/golang:trixie"),
        ("rust:1.70", "factory/rust:trixie"),
        ("eclipse-temurin:21-jdk", "factory/java:trixie"),
        ("rust:1.70-alpine", None),  # an empty rule: Alpine has no stand-in
        ("node:22-alpine3.20", None),
    ],
)
def test_language_images_and_alpine(table, ref, target):
    toolchains = {"factory/node:trixie", "factory/golang:trixie", "factory/rust:trixie"}
    available = LOCAL | toolchains | {"factory/java:trixie"}
    assert table.resolve(ref, available.__contains__) == target


def test_every_alias_target_is_a_recipe(table):
    from factory.images.recipes import load_recipes

    recipes = {r.name for r in load_recipes()}
    targets = {t for rule in table.rules for t in rule.targets}
    assert targets and targets <= recipes, targets - recipes


@pytest.mark.parametrize(
    ("dockerfile", "note"),
    [
        ("FROM python:3.12-slim-bookworm\n", "CPython 3.11"),
        ("FROM python:3.12-slim\n", "CPython 3.13"),
    ],
)
def test_python_stand_in_names_the_minor_version_it_differs_by(table, dockerfile, note):
    rewrite = rewrite_dockerfile(dockerfile, table, LOCAL.__contains__)
    assert rewrite.text.startswith("FROM factory/python:")
    assert any(note in line and "(alias: stand-in" in line for line in rewrite.notes)


def test_python_stand_in_that_matches_adds_no_caveat(table):
    rewrite = rewrite_dockerfile("FROM python:3.11-slim-bookworm\n", table, LOCAL.__contains__)
    assert rewrite.notes == [
        "base image python:3.11-slim-bookworm -> factory/python:bookworm (alias)"
    ]


def test_python_images_never_fall_back_to_the_tool_laden_base(table):
    assert (
        table.resolve("python:3.12-slim-bookworm", {"factory/base:bookworm"}.__contains__) is None
    )
