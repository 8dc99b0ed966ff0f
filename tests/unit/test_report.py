"""factory report: the HTML page has its sections and well-formed inline SVG charts."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from publish_suite import make_suite

from factory.generate.results import SuiteManifest
from factory.publish import svg
from factory.publish.report import SECTIONS, collect, pick_samples, render, write_report

TITLES = [title for _, title in SECTIONS]


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.h2: list[str] = []
        self.section_ids: list[str] = []
        self.links: list[str] = []
        self.external: list[str] = []
        self._in_h2 = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "h2":
            self._in_h2 = True
            self.h2.append("")
        if tag == "section":
            self.section_ids.append(attrs.get("id", ""))
        if tag == "a" and not attrs.get("href", "").startswith("#"):
            self.links.append(attrs["href"])
        if tag in ("script", "link", "img", "iframe") or (
            tag != "svg" and re.match(r"https?://", attrs.get("src", "") or "")
        ):
            self.external.append(tag)

    def handle_endtag(self, tag):
        if tag == "h2":
            self._in_h2 = False

    def handle_data(self, data):
        if self._in_h2:
            self.h2[-1] += data


def svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(block) for block in re.findall(r"<svg\b.*?</svg>", html, re.S)]


def test_report_has_every_section_and_chart(tmp_path):
    suite = make_suite(tmp_path)
    out = tmp_path / "site" / "report.html"
    write_report(suite, out)
    html = out.read_text()
    page = _Page()
    page.feed(html)
    assert page.h2 == TITLES
    assert page.section_ids == [key for key, _ in SECTIONS]
    assert page.external == []  # self-contained: no scripts, stylesheets or images to fetch
    charts = svgs(html)  # every chart parses as XML
    # coverage, yield, outcomes, difficulty, pass rate, timings x2, verifier strength
    assert len(charts) == 8
    titles = [c.find("{http://www.w3.org/2000/svg}title").text for c in charts]
    assert any("wanted vs valid" in t for t in titles)
    assert any("pass rate" in t for t in titles)
    assert any("verifier strength" in t for t in titles)
    # outcome histogram: valid plus each rejection kind, each bar with its count
    for outcome, count in (("valid", 6), ("build_failed", 1), ("weak_verifier", 1), ("leak", 1)):
        assert f"{outcome} — candidates: {count}</title>" in html
    # rejection reasons are escaped
    assert "&lt;leak&gt; &amp; why" in html and "<leak>" not in html
    # sample tasks link to files that exist, relative to the page
    assert page.links
    for href in page.links:
        assert (out.parent / unquote(href)).exists(), href


def test_samples_cover_every_leaf():
    from factory.publish.report import TaskInfo

    manifest_leaves = ["a/x", "a/x", "a/x", "b/y", "c/z"]
    tasks = [
        TaskInfo(
            id=f"t{i}",
            path=Path("."),
            taxonomy_path=leaf,
            difficulty="easy",
            verifier_strength=None,
        )
        for i, leaf in enumerate(manifest_leaves)
    ]
    picked = pick_samples(tasks, 3)
    assert {t.taxonomy_path for t in picked} == {"a/x", "b/y", "c/z"}
    assert len(pick_samples(tasks, 10)) == 5


def test_empty_suite_renders(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    manifest = SuiteManifest(suite="empty", factory_version="0.1.0", seed=1, taxonomy="t.yaml")
    (suite / "suite.json").write_text(manifest.model_dump_json())
    html = render(collect(suite), tmp_path / "r.html")
    page = _Page()
    page.feed(html)
    assert page.h2 == TITLES
    assert "no valid tasks yet" in html


def test_report_without_pass_rates_says_so(tmp_path):
    suite = make_suite(tmp_path, edge_cases=False)
    for toml in (suite / "tasks").glob("*/task.toml"):
        toml.write_text(re.sub(r"pass_rate = .*\n", "", toml.read_text()))
    html = render(collect(suite), tmp_path / "r.html")
    assert "No pass rates recorded yet" in html
    assert len(svgs(html)) == 7


def test_histogram_and_ticks():
    counts = svg.histogram_counts([0.0, 0.05, 0.5, 1.0, 1.7], svg.bin_edges(0, 1, 10))
    assert counts == [2, 0, 0, 0, 0, 1, 0, 0, 0, 2]
    assert svg.nice_step(36) == 10 and svg.nice_step(1.0) == 0.25
    chart = svg.vbars(["a", "b"], [svg.Series("n", [1, 2], "#000")], title="t <&>")
    root = ET.fromstring(chart)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "t &lt;&amp;&gt;" in chart


def test_cli_report(tmp_path):
    suite = make_suite(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "factory", "report", str(suite), "--html", str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    missing = subprocess.run(
        [sys.executable, "-m", "factory", "report", str(tmp_path), "--html", str(tmp_path / "x")],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2 and "no suite here" in missing.stderr


@pytest.mark.slow
def test_report_renders_in_headless_chromium(tmp_path):
    """Debian's chromium loads the page from disk and its DOM shows every section."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        if os.environ.get("FACTORY_REQUIRE_BROWSER") == "1":  # scripts/test.sh installs it
            pytest.fail("FACTORY_REQUIRE_BROWSER=1 but there is no chromium binary")
        pytest.skip("no chromium binary (apt-get install chromium)")
    suite = make_suite(tmp_path)
    out = write_report(suite, tmp_path / "report.html")
    started = time.monotonic()
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--dump-dom",
            f"file://{out.resolve()}",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    page = _Page()
    page.feed(dom)
    assert page.h2 == TITLES, (page.h2, time.monotonic() - started)
    assert dom.count("<svg") == 8
