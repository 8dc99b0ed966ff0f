"""npm dependencies whose install script downloads a binary from outside the registry
(factory.images.npm_downloads): chromedriver and puppeteer get Debian's Chromium through the
variables their install scripts read, PhantomJS is named missing with its host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factory.images.npm_downloads import provide_npm_downloads

DOCKERFILE = "FROM factory/deveval:bookworm\nWORKDIR /app\nCOPY repo/ /app/\n"


def _project(root: Path, **deps: str) -> Path:
    (root / "repo").mkdir(parents=True, exist_ok=True)
    (root / "repo" / "package.json").write_text(
        json.dumps({"name": "x", "dependencies": {"vue": "^2.5.2"}, "devDependencies": deps})
    )
    return root


def test_chromedriver_comes_from_debian_in_every_stand_in_stage(tmp_path: Path) -> None:
    env = _project(tmp_path, chromedriver="^2.46.0")
    out = provide_npm_downloads(DOCKERFILE, env, "cd /app && npm install\n")
    lines = out.text.splitlines()
    assert lines[0] == "FROM factory/deveval:bookworm"
    assert lines[1].startswith("RUN apt-get update && apt-get install -y")
    assert "--no-install-recommends chromium chromium-driver &&" in lines[1]
    assert lines[1].endswith("&& chromedriver --version")  # the build log shows the version
    assert lines[2] == "ENV CHROMEDRIVER_FILEPATH=/usr/bin/chromedriver"
    assert lines[3:] == ["WORKDIR /app", "COPY repo/ /app/"]
    (note,) = out.notes
    assert "npm chromedriver ^2.46.0 (repo/package.json) downloads ChromeDriver 2.46" in note
    assert "chromedriver.storage.googleapis.com" in note
    assert "Debian bookworm's chromium and chromium-driver (150.x)" in note
    assert "the version differs" in note
    assert out.missing == []


def test_phantomjs_is_named_missing_with_its_host_and_package(tmp_path: Path) -> None:
    env = _project(tmp_path, chromedriver="^2.46.0", **{"phantomjs-prebuilt": "^2.1.14"})
    out = provide_npm_downloads(DOCKERFILE, env, "npm install; npm run unit")
    (missing,) = out.missing
    assert missing.startswith(
        "PhantomJS (npm package phantomjs-prebuilt ^2.1.14 in repo/package.json: its install "
        "script downloads it from github.com"
    )
    assert "Debian's archive has no phantomjs package (bookworm and trixie)" in missing
    assert "CHROMEDRIVER_FILEPATH" in out.text  # chromedriver is still provided


def test_puppeteer_uses_debian_chromium(tmp_path: Path) -> None:
    env = _project(tmp_path, puppeteer="^21.0.0")
    out = provide_npm_downloads("FROM factory/node:trixie\nRUN npm ci\n", env, "")
    assert "ENV PUPPETEER_SKIP_DOWNLOAD=true PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=true " in out.text
    assert "PUPPETEER_EXECUTABLE_PATH=/usr/bin/chromium" in out.text
    assert "install -y --no-install-recommends chromium &&" in out.text
    assert "Debian trixie's chromium (156.x)" in out.notes[0]


def test_nothing_changes_without_an_install_a_stand_in_or_a_downloader(tmp_path: Path) -> None:
    env = _project(tmp_path, chromedriver="^2.46.0")
    assert provide_npm_downloads(DOCKERFILE, env, "npm test\n").text == DOCKERFILE
    on_real_image = "FROM node:20\nRUN npm install\n"
    assert provide_npm_downloads(on_real_image, env, "").text == on_real_image
    plain = _project(tmp_path / "plain", mocha="^10")
    out = provide_npm_downloads(DOCKERFILE, plain, "npm install")
    assert (out.text, out.notes, out.missing) == (DOCKERFILE, [], [])


def test_node_modules_and_broken_manifests_are_ignored(tmp_path: Path) -> None:
    nested = tmp_path / "repo" / "node_modules" / "a"
    nested.mkdir(parents=True)
    (nested / "package.json").write_text(json.dumps({"dependencies": {"phantomjs": "2"}}))
    (tmp_path / "repo" / "package.json").write_text("{not json")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "package.json").write_text("[1, 2]")
    out = provide_npm_downloads(DOCKERFILE, tmp_path, "npm install")
    assert (out.text, out.missing) == (DOCKERFILE, [])


@pytest.mark.parametrize(
    ("spec", "provided"),
    [
        ("^2.46.0", True),
        ("^110.0.0", True),
        ("114.0.1", True),
        ("^114.0.0", False),  # resolves to 114.0.3
        ("114.0.2", False),
        ("~115.0.0", False),
        ("^116.0.0", False),
        ("117.0.0", False),
        ("^117.0.0", True),  # resolves to 117.0.3 or later
        ("^157.0.0", True),
        ("latest", True),
    ],
)
def test_chromedriver_releases_that_ignore_the_local_file_are_named_missing(
    tmp_path: Path, spec: str, provided: bool
) -> None:
    env = _project(tmp_path, chromedriver=spec)
    out = provide_npm_downloads(DOCKERFILE, env, "npm install")
    assert ("CHROMEDRIVER_FILEPATH" in out.text) is provided
    if provided:
        assert out.missing == []
    else:
        (missing,) = out.missing
        assert f"npm package chromedriver {spec} in repo/package.json" in missing
        assert "114.0.2 - 117.0.2 take a local file only while looking up" in missing
