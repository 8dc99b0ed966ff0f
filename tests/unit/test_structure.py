"""Structure of tasks: solution steps, named traps, structural diversity."""

from __future__ import annotations

from factory.quality.structure import (
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
