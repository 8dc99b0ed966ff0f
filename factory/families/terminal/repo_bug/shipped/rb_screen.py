"""Screening inside a project's container: the baseline run, then many mutants in a loop.

    python3 rb_screen.py JOB.json RESULT.jsonl

JOB: {"root": "/app", "pythonpath": ["src"], "mode": "baseline" | "mutants",
      "tests": [...] (baseline), "timeout": s (baseline), "maxfail": N,
      "mutants": [{"id", "files": {path: text}, "tests": [...], "timeout": s}]}
Each result is appended to RESULT as one JSON line as soon as it is known, so an interrupted
batch keeps what it finished. Every mutated file is restored before the next mutant.

Standalone: imports nothing from factory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.realpath(__file__))


def run_tests(job: dict, ids: list[str], *, trace: bool, maxfail: int, timeout: float) -> dict:
    out = tempfile.mktemp(suffix=".json", prefix="rb-")
    command = [sys.executable, "-I", "-B", os.path.join(HERE, "rb_run.py"), "--root", job["root"]]
    for entry in job.get("pythonpath") or ["."]:
        command += ["--pythonpath", entry]
    command += ["--out", out] + (["--trace"] if trace else [])
    command += (["--maxfail", str(maxfail)] if maxfail else []) + ["--", *ids]
    started = time.monotonic()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/root", "LANG": "C.UTF-8"}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=env, cwd=job["root"]
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": round(time.monotonic() - started, 2)}
    seconds = round(time.monotonic() - started, 2)
    try:
        with open(out, encoding="utf-8") as handle:
            data = json.load(handle)
        os.unlink(out)
    except (OSError, ValueError):
        tail = (proc.stdout + proc.stderr)[-1500:]
        return {"status": "error", "exit": proc.returncode, "seconds": seconds, "tail": tail}
    data["seconds"] = seconds
    data["status"] = "ran"
    return data


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as handle:
        job = json.load(handle)
    result_path = sys.argv[2]
    root = job["root"]
    for folder, dirs, _files in os.walk(root):
        if "__pycache__" in dirs:
            shutil.rmtree(os.path.join(folder, "__pycache__"), ignore_errors=True)
    with open(result_path, "a", encoding="utf-8") as results:
        if job["mode"] == "baseline":
            data = run_tests(job, job["tests"], trace=True, maxfail=0, timeout=job["timeout"])
            results.write(json.dumps(data) + "\n")
            return 0
        for mutant in job["mutants"]:
            originals = {}
            for path, text in mutant["files"].items():
                target = os.path.join(root, path)
                with open(target, encoding="utf-8") as handle:
                    originals[target] = handle.read()
                with open(target, "w", encoding="utf-8") as handle:
                    handle.write(text)
            try:
                data = run_tests(
                    job,
                    mutant["tests"],
                    trace=False,
                    maxfail=job.get("maxfail", 0),
                    timeout=mutant["timeout"],
                )
            finally:
                for target, text in originals.items():
                    with open(target, "w", encoding="utf-8") as handle:
                        handle.write(text)
            data.pop("covered", None)
            data["id"] = mutant["id"]
            results.write(json.dumps(data) + "\n")
            results.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
