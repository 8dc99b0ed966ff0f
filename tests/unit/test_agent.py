from __future__ import annotations

import json

from factory.agent.actions import ActionFormat, parse_action
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
        },
        {"id": "c2", "function": {"name": "find_user", "arguments": '{"query": "ada"}'}},
    ]
    action = parse_action("", calls)
    assert [(c.id, c.name, c.arguments) for c in action.calls] == [
        ("c1", "bash", {"command": "wc -l f"}),
        ("c2", "find_user", {"query": "ada"}),
    ]
    assert not action.done and action.calls[0].describe() == "wc -l f"
    bad = parse_action("", [{"id": "c3", "function": {"name": "bash", "arguments": "{oops"}}])
    assert "JSON object arguments" in bad.calls[0].error and not bad.done
    listed = parse_action("", [{"id": "c4", "function": {"name": "x", "arguments": "[1]"}}])
    assert listed.calls[0].error


def test_tool_calls_written_in_text():
    text = (
        "Let me look.\n<tool_call>\n"
        '{"name": "bash", "arguments": {"command": "ls /app"}}\n</tool_call>\n'
        '<tool_call>[{"name": "get_event", "parameters": {"event_id": "ev-1"}}]</tool_call>'
    )
    action = parse_action(text, None, ActionFormat.TOOLS)
    assert [(c.name, c.arguments) for c in action.calls] == [
        ("bash", {"command": "ls /app"}),
        ("get_event", {"event_id": "ev-1"}),
    ]
    assert len({c.id for c in action.calls}) == 2
    cut_off = parse_action(
        '<tool_call>{"name": "bash", "arguments": {"command": "id"}}', None, ActionFormat.TOOLS
    )
    assert cut_off.calls[0].arguments == {"command": "id"}
    broken = parse_action("<tool_call>{name: bash}</tool_call>", None, ActionFormat.TOOLS)
    assert "valid JSON" in broken.calls[0].error
    assert parse_action("All done.", None, ActionFormat.TOOLS).done
    # the fenced format ignores tool-call text, the tool format ignores fences
    assert parse_action(text).done
    assert parse_action("```bash\nls\n```", None, ActionFormat.TOOLS).done


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
