"""What a task's tests would download when they run (factory.images.offline_needs), and the
``git clone`` of sources Debian ships, replaced at import (factory.tasks.offline)."""

from __future__ import annotations

import os
from pathlib import Path

from fixtures.files import write_files

from factory.images.offline_needs import test_time_downloads as downloads
from factory.tasks.offline import scan_test_script

WRAPPER = "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.5-bin.zip\n"


def test_gradle_wrapper_distribution_is_named_when_the_tests_run_gradle(tmp_path: Path) -> None:
    write_files(tmp_path, {"app/gradle/wrapper/gradle-wrapper.properties": WRAPPER})
    (need,) = downloads(tmp_path, "cd app && ./gradlew test\n")
    assert need.startswith("Gradle 8.5 (app/gradle/wrapper/gradle-wrapper.properties: ")
    assert "Debian has Gradle 4.4.1 only" in need
    assert downloads(tmp_path, "python -m pytest\n") == []


def test_a_vendored_gradle_distribution_is_not_missing(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {"gradle/wrapper/gradle-wrapper.properties": WRAPPER, "dist/gradle-8.5-bin.zip": "zip"},
    )
    assert downloads(tmp_path, "gradle test") == []


def test_cargo_dependencies_are_named_unless_vendored(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "x"\n\n[dependencies]\nserde = "1"\n# c = "1"\n\n'
            '[dev-dependencies]\nproptest = "1"\n'
        },
    )
    (need,) = downloads(tmp_path, "cargo test --release")
    assert need.startswith("crates serde, proptest (Cargo.toml: ")
    write_files(tmp_path, {".cargo/config.toml": '[source.crates-io]\nreplace-with = "vendored"\n'})
    assert downloads(tmp_path, "cargo test") == []


def test_a_crate_without_dependencies_needs_nothing(tmp_path: Path) -> None:
    write_files(tmp_path, {"Cargo.toml": '[package]\nname = "bowling"\nversion = "0.1.0"\n'})
    assert downloads(tmp_path, "cargo test") == []


def test_go_modules_are_named_unless_vendored(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "go.mod": "module x\n\ngo 1.21\n\nrequire (\n\tgithub.com/a/b v1.2.3\n\tgolang.org/x/c v0.1.0\n)\n"
        },
    )
    (need,) = downloads(tmp_path, "go test ./...")
    assert need.startswith("Go modules github.com/a/b, golang.org/x/c (go.mod: ")
    (tmp_path / "vendor").mkdir()
    assert downloads(tmp_path, "go test ./...") == []


def test_go_single_require_and_no_require(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "a/go.mod": "module a\nrequire github.com/one/two v0.0.1\n",
            "b/go.mod": "module b\n\ngo 1.21\n",
        },
    )
    assert downloads(tmp_path, "go build ./...") == [
        "Go modules github.com/one/two (a/go.mod: the module proxy cannot be reached; vendor "
        "them with `go mod vendor`)"
    ]


def test_hostile_manifests_do_not_crash(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_bytes(b"[dependencies]\n\xff\xfe = \n" + b"x" * 200_000)
    (tmp_path / "go.mod").write_bytes(b"require (\n" + b"\x00" * 1000)
    write_files(tmp_path, {"gradle-wrapper.properties": "distributionUrl=" + "gradle-" * 10_000})
    needs = downloads(tmp_path, "cargo test && go test && gradle build")
    assert len(needs) == 1 and needs[0].startswith("crates ")


def test_googletest_clone_in_a_test_script_becomes_debians_sources() -> None:
    scan = scan_test_script(
        "#!/bin/bash\ngit clone --depth 1 https://github.com/google/googletest.git gtest\n"
        "cmake -S . -B build\n",
        name="run-tests.sh",
    )
    assert "cp -r /usr/src/googletest gtest" in scan.text
    assert "github.com" not in scan.text
    assert "googletest" in scan.apt_packages
    assert any("Debian's googletest sources" in n and "version differs" in n for n in scan.notes)


def test_a_fifo_manifest_is_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "Cargo.toml")
    write_files(tmp_path, {"sub/Cargo.toml": '[dependencies]\nrand = "0.8"\n'})
    (need,) = downloads(tmp_path, "cargo test")
    assert need.startswith("crates rand (sub/Cargo.toml: ")


def test_a_script_of_the_environment_that_runs_gradle_counts(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "repo/gradle/wrapper/gradle-wrapper.properties": WRAPPER,
            "repo/unit_test_script.sh": "./gradlew test\n",
        },
    )
    (need,) = downloads(tmp_path, "bash /app/repo/unit_test_script.sh\n")
    assert need.startswith("Gradle 8.5 (repo/gradle/wrapper/gradle-wrapper.properties: ")
