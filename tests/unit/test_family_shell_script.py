"""shell-script, without Docker: the CSV tool's cases catch a join that glues the last row of a
file without a final newline to the next file's first row (the reference tool and the near miss
run here with bash and awk on the generated cases)."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.vocabulary import Difficulty

FAMILY = registry.get("shell-script")
pytestmark = grammar.needs_tools("bash", "awk")


def tool_of(script: str) -> str:
    return re.search(r"<<'__FACTORY_TOOL__'\n(.*?)\n__FACTORY_TOOL__", script, re.S).group(1)


def failures(script: str, cases: list[dict], tmp_path: Path) -> list[str]:
    failed = []
    for index, case in enumerate(cases):
        folder = tmp_path / f"case{index}"
        folder.mkdir()
        (folder / "tool.sh").write_text(tool_of(script))
        for name, text in case["files"].items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if not name.endswith("/keep"):
                path.write_text(text)
        run = subprocess.run(
            ["bash", "tool.sh", *case["args"]],
            cwd=folder,
            input=case["stdin"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if run.stdout != case["stdout"] or run.returncode != case["code"]:
            failed.append(case["why"])
    return failed


@pytest.mark.parametrize("seed", [1, 2])
def test_a_tail_join_is_caught_by_the_file_without_a_final_newline(seed, tmp_path):
    d = FAMILY.draft(random.Random(seed), Difficulty.HARD, {"kind": "csv-filter"})
    # the reference tool installed whole (a hard task's own solution repairs its draft instead)
    reference = FAMILY.template("solution/solve.sh.j2").render(**{**d.context, "repair": []})
    (tmp_path / "ref").mkdir()
    (tmp_path / "mut").mkdir()
    assert failures(reference, d.context["cases"], tmp_path / "ref") == []
    assert failures(d.mutations["tail-join"], d.context["cases"], tmp_path / "mut") == [
        "a file without a final newline, then another file"
    ]
