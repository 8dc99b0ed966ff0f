"""Structure of tasks: solution steps, named traps, structural diversity."""

from __future__ import annotations

import pytest
from rich.console import Console

from factory.errors import TaskFormatError
from factory.generate.display import print_structure
from factory.generate.results import SuiteManifest, SuiteTask
from factory.generate.taxonomy import parse_taxonomy
from factory.quality.structure import (
    admits,
    diversity,
    named_traps,
    read_structure,
    solution_steps,
    structure_of,
)

GENERIC = """#!/bin/bash
# A generic solver: one program, whatever the task.
set -euo pipefail
python3 - <<'PY'
import os; os.system("chmod 600 /x && chown a /y")
for i in range(3):
    print(i)
PY
"""

BY_HAND = """#!/bin/bash
set -e
cat /etc/app/app.conf            # look first
sed -i 's/^port = .*/port = 8080/' /etc/app/app.conf && chmod 640 /etc/app/token
printf '%s' 'a = 1
b = "x # not a comment"
' > /etc/app/extra.conf
for f in /var/log/app/*.log; do
    gzip -9 "$f"
done
if [ -e /run/app.pid ]; then rm -f /run/app.pid; fi
install -d -o app \\
    -m 755 /var/log/app
x=$(pgrep -f app) ; kill -HUP "$x"
for _ in $(seq 50); do curl -fs localhost:8080/health && break; sleep 0.1; done
"""


def test_a_generic_solver_is_one_step():
    steps = solution_steps(GENERIC)
    assert [s.verb for s in steps] == ["python3-script"]


def test_commands_and_edits_are_counted_as_typed():
    verbs = [s.verb for s in solution_steps(BY_HAND)]
    # a '#' inside quotes is not a comment, and the quoted newline keeps printf one step; loop
    # headers, sleep and break are not steps; x=$(pgrep ...) is the pgrep
    assert verbs == [
        "cat",
        "sed",
        "chmod",
        "printf>",
        "gzip",
        "[",
        "rm",
        "install",
        "pgrep",
        "kill",
        "curl",
    ]


def test_a_heredoc_file_write_is_one_edit():
    script = "cat > /etc/x.conf <<EOF\nport = 1\nbind = 2\nEOF\nchmod 600 /etc/x.conf\n"
    assert [s.verb for s in solution_steps(script)] == ["cat>", "chmod"]


def test_hostile_scripts_do_not_break_the_counter():
    for script in ("", "'unterminated\n", "<<EOF\n", "cat <<'X'\nno end", "$(((", "\\"):
        solution_steps(script)


def test_named_traps_match_whole_words_case_insensitively():
    traps = [("stale pid", ("pid file", "stale")), ("override", ("PORT=",))]
    text = "The PID File is fine. Nothing is stalemate. Set PORT=1."
    found = named_traps(text, traps)
    assert found == [
        "stale pid: the instruction says 'pid file'",
        "override: the instruction says 'PORT='",
    ]
    assert named_traps("nothing here", traps) == []


def test_diversity_counts_combinations_not_names(tmp_path):
    a = structure_of(["bind", "port"], "def test_a():\n    pass\n", "chmod 1 x\n")
    b = structure_of(["port", "bind"], "def test_a():\n    pass\n", "chmod 2 y\n")
    c = structure_of(["perm"], "def test_b():\n    pass\n", "chown a x\nchmod 1 x\n")
    result = diversity([a, b, c])
    assert result.tasks == 3
    assert result.fault_combinations == 2  # a and b: the same faults in another order
    assert result.structures == 2
    assert result.solution_shapes == 2
    assert 0 < result.mean_distance < 1
    assert result.per_100(result.fault_combinations) == 200 / 3
    assert diversity([a]).mean_distance is None
    assert diversity([]).tasks == 0


def test_read_structure_from_a_task_directory(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "solution").mkdir()
    (tmp_path / "task.toml").write_text('[metadata.factory]\nfaults = ["b", "a"]\n')
    (tmp_path / "tests" / "test_outputs.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "solution" / "solve.sh").write_text("cat /x\n")
    s = read_structure(tmp_path)
    assert s.faults == ("a", "b") and s.tests == ("test_x",) and s.steps == ("cat",)
    (tmp_path / "task.toml").write_text("not = [toml")
    assert read_structure(tmp_path).faults == ()


def test_admits_keeps_a_leaf_at_its_target():
    accepted = [["a", "b"], ["c"], ["a", "b"]]  # 2 distinct of 3
    assert admits(["d"], accepted, 0.9)  # a new combination is always welcome
    assert admits(["b", "a"], accepted, 0.5)  # 2 / 4 = 0.5: still at the target
    assert not admits(["b", "a"], accepted, 0.6)
    assert admits(["a", "b"], accepted, 0.0)  # no target
    assert admits([], accepted, 1.0)  # a family without a grammar is not held to it


def test_the_taxonomy_target_is_a_leaf_setting():
    data = {
        "suite": "s",
        "defaults": {"min_fault_combinations": 0.5},
        "domains": [
            {
                "name": "terminal",
                "categories": [
                    {
                        "name": "c",
                        "skills": [
                            {"name": "a", "generator": "service-config"},
                            {
                                "name": "b",
                                "generator": "service-config",
                                "min_fault_combinations": 0.8,
                            },
                        ],
                    }
                ],
            }
        ],
    }
    leaves = list(parse_taxonomy(data).leaves())
    assert [leaf.setting("min_fault_combinations") for leaf in leaves] == [0.5, 0.8]
    data["defaults"]["min_fault_combinations"] = 2
    with pytest.raises(TaskFormatError, match="min_fault_combinations"):
        parse_taxonomy(data)


def test_suite_show_reports_structure_per_leaf(tmp_path):
    tasks = []
    for index, faults in enumerate([["a", "b"], ["b", "a"], ["c"]]):
        folder = tmp_path / "tasks" / f"t{index}"
        (folder / "tests").mkdir(parents=True)
        (folder / "solution").mkdir()
        quoted = ", ".join(f'"{f}"' for f in faults)
        (folder / "task.toml").write_text(f"[metadata.factory]\nfaults = [{quoted}]\n")
        (folder / "tests" / "test_outputs.py").write_text(f"def test_{index % 2}():\n    pass\n")
        (folder / "solution" / "solve.sh").write_text("cat /x\nchmod 600 /y\n")
        tasks.append(
            SuiteTask(
                id=f"t{index}",
                path=f"tasks/t{index}",
                taxonomy_path="terminal/c/a",
                family="f",
                difficulty="hard",
                seed=index,
                generator="f",
                faults=faults,
            )
        )
    manifest = SuiteManifest(suite="s", factory_version="0", seed=0, taxonomy="t", tasks=tasks)
    console = Console(record=True, width=200)
    print_structure(manifest, tmp_path, console)
    text = console.export_text()
    row = next(line for line in text.splitlines() if "terminal/c/a" in line)
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    # 3 tasks; 2 fault combinations, 2 test structures, 1 solution shape (per 100: 67, 67, 33)
    assert cells[1:5] == ["3", "67", "67", "33"]
    assert 0 < float(cells[5]) < 1 and cells[6] == "2"
