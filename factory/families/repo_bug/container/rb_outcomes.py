"""pytest plugin that records what each test did (runs inside task containers).

Used by the screening runner and shipped with every repo-bug task's verifier. Writes a JSON
file ``{nodeid: {"outcome": passed|failed|skipped, "message": ..., "duration": s}}`` and, with
``trace`` on (Python 3.12+), the project functions each test ran (``path::qualname``), from
``sys.monitoring`` PY_START events (each code object is reported once per test).

Standalone: imports nothing from factory.
"""

from __future__ import annotations

import json
import os
import sys


class Outcomes:
    def __init__(self, out: str, root: str = "", trace: bool = False) -> None:
        self.out = out
        self.root = os.path.realpath(root) + os.sep if root else ""
        self.results: dict[str, dict] = {}
        self.errors: list[str] = []
        self.covered: dict[str, list[str]] = {}
        self._current: set[str] | None = None
        self._tool = None
        if trace and hasattr(sys, "monitoring") and self.root:
            self._start_tracing()

    # --- tracing ---------------------------------------------------------------------------
    def _start_tracing(self) -> None:
        monitoring = sys.monitoring
        tool = monitoring.COVERAGE_ID
        try:
            monitoring.use_tool_id(tool, "repo-bug-screen")
        except ValueError:
            return
        self._tool = tool
        root, cut = self.root, len(self.root)

        def started(code, _offset):
            current = self._current
            if current is not None and code.co_filename.startswith(root):
                current.add(f"{code.co_filename[cut:]}::{code.co_qualname}")
            return monitoring.DISABLE

        monitoring.register_callback(tool, monitoring.events.PY_START, started)
        monitoring.set_events(tool, monitoring.events.PY_START)

    def pytest_runtest_protocol(self, item, nextitem):
        if self._tool is None:
            return None
        self._current = set()
        sys.monitoring.restart_events()
        return None

    def pytest_runtest_logfinish(self, nodeid, location):
        if self._current is not None:
            self.covered[nodeid] = sorted(self._current)
            self._current = None

    # --- outcomes --------------------------------------------------------------------------
    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(f"{report.nodeid}: {_message(report)}")

    def pytest_runtest_logreport(self, report):
        record = self.results.setdefault(report.nodeid, {"outcome": "passed", "duration": 0.0})
        record["duration"] = round(record["duration"] + report.duration, 4)
        if report.failed:
            if record["outcome"] != "failed":
                record["outcome"] = "failed"
                record["when"] = report.when
                record["message"] = _message(report)
        elif report.skipped and record["outcome"] == "passed":
            record["outcome"] = "skipped"

    def pytest_sessionfinish(self, session, exitstatus):
        data = {"results": self.results, "collect_errors": self.errors, "exit": int(exitstatus)}
        if self._tool is not None:
            data["covered"] = self.covered
            sys.monitoring.set_events(self._tool, 0)
            sys.monitoring.free_tool_id(self._tool)
            self._tool = None
        with open(self.out, "w", encoding="utf-8") as handle:
            json.dump(data, handle)


def _message(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message)[:2000]
    return str(report.longrepr)[-2000:]
