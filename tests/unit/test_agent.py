from __future__ import annotations

import json

from factory.agent.actions import parse_action
from factory.agent.harness import truncate
from factory.agent.suite import SuiteTask, split_suite


def test_fenced_actions():
    action = parse_action("I will look.\n```bash\nls -la /app\n```\nthen\n```bash\nrm -rf /\n```")
    assert action.commands == ["ls -la /app"] and not action.done  # one command per turn
    assert parse_action("DONE").done
    assert parse_action("All finished, nothing else to run.").done


def test_tool_call_actions():
    calls = [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": "wc -l f"})},
        }
    ]
    action = parse_action("", calls)
    assert action.commands == ["wc -l f"] and action.tool_call_ids == ["c1"]
    bad = parse_action("", [{"id": "c2", "function": {"name": "bash", "arguments": "{oops"}}])
    assert bad.error and not bad.done
    other = parse_action("", [{"id": "c3", "function": {"name": "python", "arguments": "{}"}}])
    assert "unknown tool" in other.error


def test_truncate_keeps_head_and_tail():
    text = "a" * 100 + "b" * 100
    cut = truncate(text, 50)
    assert cut.startswith("a" * 25) and cut.endswith("b" * 25) and "150 characters cut" in cut
    assert truncate("short", 50) == "short"


class FakeTask:
    def __init__(self, task_id: str) -> None:
        self.id = task_id


def entries():
    return [
        SuiteTask(FakeTask(f"{fam}-{i}"), fam)
        for fam in ("alpha", "beta", "gamma", "delta")
        for i in range(3)
    ]


def test_split_by_family_holds_out_whole_families():
    train, test = split_suite(entries(), test_families=[], test_fraction=0.25, seed=1)
    assert len({e.family for e in test}) == 1 and len(test) == 3
    assert not {e.family for e in train} & {e.family for e in test}
    train, test = split_suite(entries(), test_families=["beta"], test_fraction=0.25, seed=1)
    assert {e.family for e in test} == {"beta"}


def test_split_by_task():
    train, test = split_suite(entries(), test_families=[], test_fraction=0.25, seed=1, by="task")
    assert len(test) == 3 and len(train) == 9
    again = split_suite(entries(), test_families=[], test_fraction=0.25, seed=1, by="task")
    assert [e.task.id for e in again[1]] == [e.task.id for e in test]
