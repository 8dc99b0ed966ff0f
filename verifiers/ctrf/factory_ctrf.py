"""A small pytest plugin that writes a CTRF JSON report (``--ctrf PATH``).

Installed into factory's base images under the plugin name ``ctrf``, so verifier scripts written
for the ``pytest-json-ctrf`` package (``pytest --ctrf /logs/verifier/ctrf.json``) run offline.
When the real package is installed it is loaded under the same name and this one steps aside.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

_STATUS = {"passed": "passed", "failed": "failed", "skipped": "skipped"}


def pytest_addoption(parser):
    group = parser.getgroup("ctrf", "CTRF report (factory)")
    group.addoption("--ctrf", dest="ctrf_path", default=None, help="write a CTRF JSON report")


def pytest_configure(config):
    path = config.getoption("ctrf_path", default=None)
    if path:
        config.pluginmanager.register(_Reporter(Path(path)), "factory-ctrf-reporter")


class _Reporter:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.start = int(time.time() * 1000)
        self.tests: dict[str, dict] = {}

    def pytest_runtest_logreport(self, report):
        entry = self.tests.setdefault(
            report.nodeid, {"name": report.nodeid, "status": "passed", "duration": 0}
        )
        entry["duration"] += int(report.duration * 1000)
        if report.failed:
            entry["status"] = "failed"
            entry.setdefault("message", str(report.longrepr)[-2000:])
        elif report.skipped and entry["status"] == "passed":
            entry["status"] = "skipped"

    def pytest_sessionfinish(self, session):
        tests = list(self.tests.values())
        summary = {"tests": len(tests), "start": self.start, "stop": int(time.time() * 1000)}
        for status in ("passed", "failed", "skipped", "pending", "other"):
            summary[status] = sum(1 for t in tests if t["status"] == status)
        report = {"results": {"tool": {"name": "pytest"}, "summary": summary, "tests": tests}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(report, indent=2))
