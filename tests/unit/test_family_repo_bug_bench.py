"""bench/repo_bug.py --profile: where a repo-bug candidate's certification time went, read from
the logs the validator writes (fabricated here in the validator's formats)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "repo_bug.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_repo_bug", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = """Step 1/6 : FROM factory/python:bookworm
 ---> 5cd2d848d6c6
Step 2/6 : RUN python3 -m pip install pytest==8.3.5
 ---> Using cache
 ---> 69f0ab8fef02
Step 3/6 : RUN missing=""; for p in patch; do dpkg -s "$p"; done
{apt}
Step 4/6 : COPY overlay/ /tmp/overlay/
 ---> 5e751190838c
Step 5/6 : RUN python3 /tmp/fetch_sdist.py x 1.0 abc /tmp/sdist.tar.gz
 ---> Running in 00b8819821d0
Step 6/6 : WORKDIR /app
"""


def candidate(root: Path, apt: str) -> Path:
    logs = root / "logs"
    logs.mkdir()
    (logs / "build.log").write_text(BUILD.format(apt=apt))
    for name, solve, test in (("nop-1", None, 2.5), ("oracle-1", 0.5, 3.0), ("cheat-x", 1.0, 4.0)):
        (logs / name).mkdir()
        if solve is not None:
            (logs / name / "solve.log").write_text(f"# exit=0 timed_out=False seconds={solve}\n")
        session = f"1 failed, 11 passed in {test / 2}s\n" if solve != 1.0 else "FAIL: edited\n"
        (logs / name / "test.log").write_text(
            f"# exit=1 timed_out=False seconds={test}\n....\n{session}\n"
        )
    (logs / "ignored").mkdir()
    return logs


def test_profile_splits_a_candidate_into_build_probes_verifier_and_the_rest(tmp_path):
    bench = load_bench()
    logs = candidate(tmp_path, " ---> Using cache")
    row = bench.profile_candidate(logs, {"generate": 1.0, "total": 30.0})
    assert row["runs"] == 3 and row["solve"] == 1.5 and row["verify"] == 9.5
    assert row["pytest"] == 2.75  # the cheat's run stopped before pytest
    # a log folder the result does not list (an interrupted attempt's) is left out
    listed = bench.profile_candidate(logs, {"total": 30.0}, [{"kind": "mutation", "name": "x"}])
    assert listed["runs"] == 2 and listed["verify"] == 5.5
    assert row["prefix_cached"] == 1.0 and row["steps"] == 6 and row["reused_image"] == 0.0
    build = 0.0 if math.isnan(row["build"]) else row["build"]
    assert math.isclose(row["other"], 30.0 - 1.0 - build - 1.5 - 9.5)
    # a build log older than the candidate's own certification is not its build
    os.utime(logs / "build.log", (time.time() + 3600, time.time() + 3600))
    stale = bench.profile_candidate(logs, {"validate": 20.0, "total": 30.0})
    assert math.isnan(stale["build"]) or stale["build"] <= 20.0


def test_a_prefix_step_that_ran_counts_as_built(tmp_path):
    bench = load_bench()
    logs = candidate(tmp_path, " ---> Running in 1234\nGet:1 http://deb.debian.org bookworm")
    assert bench.build_steps(logs / "build.log") == (6, False, False)
    (logs / "build.log").write_text("# cached image factory-env:abc (environment unchanged)\n")
    assert bench.build_steps(logs / "build.log") == (0, True, True)


def test_profile_of_a_suite_prints_medians(tmp_path, capsys):
    bench = load_bench()
    suite = tmp_path / "suite"
    (suite / "results").mkdir(parents=True)
    (suite / "validation" / "logs").mkdir(parents=True)
    for i, total in enumerate((20.0, 40.0, 60.0)):
        name = f"leaf-{i:03d}"
        folder = tmp_path / name
        folder.mkdir()
        candidate(folder, " ---> Using cache").rename(suite / "validation" / "logs" / name)
        result = {"id": name, "difficulty": "easy", "outcome": "valid"}
        result["timings"] = {"generate": 0.5, "total": total}
        (suite / "results" / f"{name}.json").write_text(json.dumps(result))
    assert bench.profile(suite) == 0
    out = capsys.readouterr().out
    assert "median over 3 candidates" in out
    assert "  total        40.0  (100%)" in out
    assert "  verify        9.5  ( 24%)" in out
    assert "from the builder's cache or reused the image: 3 of 3" in out
