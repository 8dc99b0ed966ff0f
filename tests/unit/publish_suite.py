"""A small generated-suite folder made by hand (no Docker) for the publish and report tests.

The tasks are copies of examples/tasks/*, with a few entries added to one of them that a
careless exporter would lose: an empty directory, a relative symbolic link, binary content,
unusual permission bits, and a __pycache__ folder that must be left out.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from factory.generate.results import (
    CandidateResult,
    LeafCoverage,
    ProbeRecord,
    SuiteManifest,
    SuiteTask,
)
from factory.tasks.hashing import hash_tree

EXAMPLE_TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks"
LEAVES = ("terminal/text/reports", "terminal/dev/fixes")


def add_edge_cases(task: Path) -> None:
    env = task / "environment"
    (env / "empty-dir").mkdir()
    (env / "blob.bin").write_bytes(bytes(range(256)) * 3)
    (env / "private.txt").write_text("secret-ish\n")
    os.chmod(env / "private.txt", 0o600)
    (env / "locked").mkdir()
    (env / "locked" / "note.txt").write_text("inside a 0700 folder\n")
    os.chmod(env / "locked", 0o700)
    os.symlink("blob.bin", env / "blob-link")
    (task / "tests" / "__pycache__").mkdir()
    (task / "tests" / "__pycache__" / "junk.pyc").write_bytes(b"\x00cache")


def set_pass_rate(task: Path, rate: float) -> None:
    toml = task / "task.toml"
    text = toml.read_text()
    marker = "[metadata.factory]\n"
    assert marker in text
    toml.write_text(text.replace(marker, f"{marker}pass_rate = {rate}\n", 1))


def make_suite(root: Path, *, edge_cases: bool = True) -> Path:
    """A suite folder: suite.json, taxonomy.yaml, tasks/, results/, rejected/."""
    suite = root / "suite"
    (suite / "tasks").mkdir(parents=True)
    (suite / "results").mkdir()
    (suite / "rejected").mkdir()
    (suite / "taxonomy.yaml").write_text("suite: fixture\n")
    names = sorted(p.name for p in EXAMPLE_TASKS.iterdir() if p.is_dir())
    tasks, results = [], []
    difficulties = ("easy", "medium", "hard")
    for index, name in enumerate(names):
        dest = suite / "tasks" / name
        shutil.copytree(EXAMPLE_TASKS / name, dest, symlinks=True)
        if edge_cases and index == 0:
            add_edge_cases(dest)
        if index < 2:
            set_pass_rate(dest, 0.25 + 0.5 * index)
        leaf = LEAVES[index % 2]
        content_hash = hash_tree(dest)
        timings = {"generate": 0.1 * index, "validate": 5.0 + index, "probes": 3.0, "total": 9.0}
        tasks.append(
            SuiteTask(
                id=name,
                path=f"tasks/{name}",
                taxonomy_path=leaf,
                family="hand",
                difficulty=difficulties[index % 3],
                seed=1000 + index,
                generator="hand",
                content_hash=content_hash,
                verifier_strength=0.5 + 0.1 * index,
                timings=timings,
            )
        )
        results.append(
            CandidateResult(
                id=name,
                taxonomy_path=leaf,
                generator="hand",
                difficulty=difficulties[index % 3],
                seed=1000 + index,
                attempt=index,
                status="accepted",
                outcome="valid",
                reason="nop scored 0 and the oracle 1 in 2 of 2 repeats",
                content_hash=content_hash,
                verifier_strength=0.5 + 0.1 * index,
                probes=[
                    ProbeRecord(name="exit-0", kind="cheat", reward=0.0, rejected=True),
                    ProbeRecord(name="near-miss", kind="mutation", reward=0.0, rejected=True),
                ],
                timings=timings,
                path=f"tasks/{name}",
            )
        )
    for number, (outcome, strength) in enumerate(
        (("build_failed", None), ("weak_verifier", 0.2), ("leak", None))
    ):
        rejected_id = f"rejected-{number:03d}"
        (suite / "rejected" / rejected_id).mkdir()
        results.append(
            CandidateResult(
                id=rejected_id,
                taxonomy_path=LEAVES[number % 2],
                generator="hand",
                difficulty="hard",
                seed=9000 + number,
                attempt=100 + number,
                status="rejected",
                outcome=outcome,
                reason=f"<{outcome}> & why",
                verifier_strength=strength,
                timings={"generate": 0.2, "validate": 1.0, "total": 1.5},
                path=f"rejected/{rejected_id}",
            )
        )
    for result in results:
        (suite / "results" / f"{result.id}.json").write_text(result.model_dump_json(indent=2))
    coverage = []
    for leaf in LEAVES:
        mine = [r for r in results if r.taxonomy_path == leaf]
        valid = sum(r.status == "accepted" for r in mine)
        outcomes: dict[str, int] = {}
        for r in mine:
            outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
        coverage.append(
            LeafCoverage(
                taxonomy_path=leaf,
                generator="hand",
                quota=4,
                candidates=len(mine),
                valid=valid,
                distinct=valid,
                yield_=valid / len(mine),
                outcomes=outcomes,
                seconds=sum(r.timings["total"] for r in mine),
                complete=valid >= 4,
            )
        )
    candidates = len(results)
    valid = len(tasks)
    manifest = SuiteManifest(
        suite="fixture",
        factory_version="0.1.0",
        seed=7,
        taxonomy="taxonomy.yaml",
        tasks=tasks,
        coverage=coverage,
        totals={
            "quota": 8,
            "candidates": candidates,
            "valid": valid,
            "yield": valid / candidates,
            "seconds": sum(r.timings["total"] for r in results),
            "llm_tokens": 0,
            "llm_cost_usd": 0.0,
            "leaves_complete": sum(c.complete for c in coverage),
            "leaves": len(coverage),
        },
    )
    (suite / "suite.json").write_text(manifest.model_dump_json(indent=2, by_alias=True))
    return suite
