"""pytest plugin that records what each test did (runs inside task containers).

Used by the screening runner and shipped with every repo-bug task's verifier. Writes a JSON
file ``{nodeid: {"outcome": passed|failed|skipped, "message": ..., "duration": s}}`` and, with
``trace`` on, the project functions each test ran (``path::qualname``): from
``sys.monitoring`` PY_START events on Python 3.12+ (each code object reported once per test),
from a profile hook on 3.11.

Standalone: imports nothing from factory.
"""

from __future__ import annotations

import json
import os
import sys
import threading


class Outcomes:
    def __init__(self, out: str, root: str = "", trace: bool = False) -> None:
        self.out = out
        self.root = os.path.realpath(root) + os.sep if root else ""
        self.results: dict[str, dict] = {}
        self.errors: list[str] = []
        self.covered: dict[str, list[str]] = {}
        self._current: set[str] | None = None
        self._tool = None
        self._profiling = False
        if trace and self.root:
            if hasattr(sys, "monitoring"):
                self._start_tracing()
            else:
                self._start_profiling()

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

    def _start_profiling(self) -> None:
        root, cut = self.root, len(self.root)
        keys: dict = {}

        def profile(frame, event, _arg):
            current = self._current
            if event == "call" and current is not None:
                code = frame.f_code
                key = keys.get(code, 0)
                if key == 0:
                    name = code.co_filename
                    key = f"{name[cut:]}::{code.co_qualname}" if name.startswith(root) else None
                    keys[code] = key
                if key:
                    current.add(key)

        threading.setprofile(profile)
        sys.setprofile(profile)
        self._profiling = True

    def pytest_runtest_protocol(self, item, nextitem):
        if self._tool is None and not self._profiling:
            return None
        self._current = set()
        if self._tool is not None:
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
        if self._profiling:
            sys.setprofile(None)
            threading.setprofile(None)
            data["covered"] = self.covered
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
