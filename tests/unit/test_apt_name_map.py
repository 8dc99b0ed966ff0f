"""Ubuntu package names of ``apt-get install`` lines, mapped per stand-in Debian release
(factory.images.apt_names), and apt's "no such package" lines read back from a build log."""

from __future__ import annotations

import pytest

from factory.images.apt_names import map_package, rewrite_packages
from factory.images.toolchains import provide_toolchains


@pytest.mark.parametrize(
    ("name", "release", "expected"),
    [
        ("netcat", "bookworm", ["netcat-openbsd"]),
        ("libssl1.1", "bookworm", ["libssl3"]),
        ("libssl1.1", "trixie", ["libssl3t64"]),
        ("libssl3", "bookworm", ["libssl3"]),  # no bookworm entry: kept
        ("libssl3", "trixie", ["libssl3t64"]),
        ("software-properties-common", "bookworm", ["software-properties-common"]),
        ("software-properties-common", "trixie", []),
        ("language-pack-en", "trixie", ["locales"]),
        ("openjdk-17-jdk", "bookworm", ["openjdk-17-jdk"]),
        ("temurin-21-jdk", "trixie", ["openjdk-21-jdk"]),
        ("python3.10-venv", "bookworm", ["python3.11-venv"]),
        ("python3.12-dev", "trixie", ["python3.13-dev"]),
        ("libpython3.10-dev", "bookworm", ["libpython3.11-dev"]),
        ("python3.10-distutils", "bookworm", ["python3-distutils"]),
        ("python3.10-distutils", "trixie", []),
        ("python3.13", "trixie", ["python3.13"]),
        ("curl", "trixie", ["curl"]),
    ],
)
def test_names_map_per_release(name: str, release: str, expected: list[str]) -> None:
    names, _note, missing = map_package(name, release)
    assert names == expected
    assert missing is None


def test_a_change_is_explained_and_the_same_name_is_silent() -> None:
    _names, note, _ = map_package("libssl1.1", "trixie")
    assert note is not None and note.startswith("apt: libssl1.1 -> libssl3t64 on Debian trixie (")
    assert map_package("curl", "bookworm")[1] is None
    _, dropped, _ = map_package("software-properties-common", "trixie")
    assert dropped is not None and "-> nothing on Debian trixie" in dropped


def test_a_jdk_major_the_release_lacks_is_missing_by_name() -> None:
    names, _, missing = map_package("openjdk-21-jdk", "bookworm")
    assert names == []
    assert missing == "Java 21 (openjdk-21-jdk; Debian bookworm has OpenJDK 17)"
    _, _, missing = map_package("openjdk-11-jre-headless", "trixie")
    assert missing == "Java 11 (openjdk-11-jre-headless; Debian trixie has OpenJDK 21 and 25)"


def test_rewrite_packages_drops_provided_dedups_and_collects_missing() -> None:
    out = rewrite_packages(
        ["nodejs", "netcat", "netcat-openbsd", "openjdk-21-jdk", "git=1:2.39*"],
        "bookworm",
        provided={"nodejs", "npm"},
    )
    assert out.packages == ["netcat-openbsd", "git=1:2.39*"]
    assert out.missing == ["Java 21 (openjdk-21-jdk; Debian bookworm has OpenJDK 17)"]
    assert "apt: nodejs dropped (installed by the toolchain provider)" in out.notes


def test_install_lines_of_a_stand_in_stage_are_rewritten_with_options_kept() -> None:
    out = provide_toolchains(
        "FROM factory/base:trixie\n"
        "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "
        "--no-install-recommends libssl3 software-properties-common curl\n"
    )
    assert out.text.splitlines()[1] == (
        "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "
        "--no-install-recommends libssl3t64 curl"
    )
    assert len(out.notes) == 2 and all(n.startswith("Dockerfile line 2: apt: ") for n in out.notes)


def test_an_install_line_of_only_dropped_packages_becomes_true() -> None:
    out = provide_toolchains(
        "FROM factory/base:trixie\nRUN apt-get install -y software-properties-common\n"
    )
    assert out.text.splitlines()[1] == "RUN true"
