"""The command line as scripts use it, without Docker: --json documents on stdout (logs on
stderr), exit statuses, choices in --help, checked path arguments, and one name and one default
per idea across commands. (The Docker commands' --json is tested with them in tests/integration.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer
from fixtures.task_dirs import TB2_STYLE
from publish_suite import make_suite
from typer.testing import CliRunner

from factory.cli import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str | Path, code: int = 0):
    result = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def document(*args: str | Path, code: int = 0) -> dict:
    """The one JSON document a command printed on stdout."""
    return json.loads(run(*args, "--json", code=code).stdout)


def test_tasks_check_json_lists_every_task_and_exits_1_on_a_bad_one():
    data = document("tasks", "check", EXAMPLES / "broken", code=1)
    bad = {Path(t["path"]).name: t["error"] for t in data["tasks"] if not t["ok"]}
    assert data["invalid"] == len(bad) >= 4
    assert "environment.cpus" in bad["bad-field"] and "invalid TOML" in bad["invalid-toml"]
    good = document("tasks", "check", EXAMPLES / "tasks", EXAMPLES / "tb1")
    assert good["invalid"] == 0 and all(t["ok"] and t["id"] for t in good["tasks"])
    tb1 = [p for p in (EXAMPLES / "tb1").iterdir() if p.is_dir()]
    assert len(good["tasks"]) == len(list((EXAMPLES / "tasks").iterdir())) + len(tb1)


def test_families_list_json_and_plain_rows_when_piped():
    data = document("families", "list")
    names = [f["name"] for f in data["families"]]
    assert data["broken"] == {} and "file-permissions" in names
    assert {"name", "domain", "category", "title"} == set(data["families"][0])
    rows = run("families", "list").stdout.splitlines()
    assert len(rows) == len(names)  # one row a family, no table, no wrapping
    assert [r.split("\t")[0] for r in rows] == names and all(r.count("\t") == 3 for r in rows)


def test_families_try_render_only_json(tmp_path):
    data = document(
        "families", "try", "file-permissions", "-d", "easy", "-s", "3", "--render-only",
        "-o", tmp_path,
    )  # fmt: skip
    (trial,) = data["trials"]
    assert (trial["family"], trial["difficulty"], trial["seed"]) == ("file-permissions", "easy", 3)
    assert (Path(trial["path"]) / "task.toml").is_file() and "outcome" not in trial
    run("families", "try", "no-such-family", "--render-only", "-o", tmp_path, code=1)


def test_suite_show_export_import_report_json(tmp_path):
    suite = make_suite(tmp_path / "suite")
    shown = document("suite", "show", suite)
    assert shown["path"] == str(suite) and shown["suite"] == "fixture"
    assert len(shown["tasks"]) == 6 and shown["coverage"]

    exported = document("export", suite, "--format", "jsonl", "--out", tmp_path / "x")
    assert exported["out"] == str(tmp_path / "x")
    assert exported["manifest"]["format"] == "jsonl"
    assert exported["manifest"]["task_count"] == 6

    back = document("import", tmp_path / "x", "--out", tmp_path / "y")
    assert back["failed"] == 0 and len(back["tasks"]) == 6
    assert {t["format"] for t in back["tasks"]} == {"jsonl"}
    assert {t["status"] for t in back["tasks"]} == {"imported"}
    assert all((Path(t["dest"]) / "task.toml").is_file() for t in back["tasks"])
    again = document("import", tmp_path / "x", "--out", tmp_path / "y", "--format", "jsonl")
    assert {t["status"] for t in again["tasks"]} == {"unchanged"}

    page = document("report", suite, "-o", tmp_path / "r.html")
    assert page["report"] == str(tmp_path / "r.html") and (tmp_path / "r.html").is_file()
    run("report", suite, "--html", tmp_path / "old.html")  # the old spelling still works
    assert (tmp_path / "old.html").is_file()


def test_import_takes_public_layouts_and_reports_each_failure(tmp_path):
    broken = tmp_path / "src" / "broken"
    shutil.copytree(EXAMPLES / "tb1" / "csv-column-sum", broken)
    (broken / "task.yaml").write_text(": : :\n")
    data = document(
        "import", EXAMPLES / "tb1", TB2_STYLE, broken, "--out", tmp_path / "out",
        code=1,
    )  # fmt: skip
    by_source = {Path(t["source"]).name: t for t in data["tasks"]}
    assert data["failed"] == 1 and by_source["broken"]["status"] == "failed"
    assert "task.yaml" in by_source["broken"]["error"]
    assert by_source["count-error-lines"]["format"] == "terminal-bench-1"
    assert by_source["json-config-merge"]["format"] == "harbor"
    assert by_source["count-error-lines"]["notes"]  # what the conversion rewrote
    assert (tmp_path / "out" / "count-error-lines" / "tests" / "test.sh").is_file()
    wrong = run("import", EXAMPLES / "harbor", "-o", tmp_path / "o2", "-f", "terminal-bench-1",
                code=1)  # fmt: skip
    assert "task.yaml: file is missing" in wrong.stderr


def test_missing_paths_are_usage_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in (
        ["validate", "/nonexistent"],
        ["tasks", "check", "/nonexistent"],
        ["generate", "/nonexistent.yaml"],
        ["eval", "/nonexistent"],
        ["export", "/nonexistent", "-f", "jsonl", "-o", "x"],
        ["calibrate", "/nonexistent"],
        ["solve", "/nonexistent", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
    ):
        result = run(*args, code=2)
        assert "does not exist" in result.stderr, args
    assert not (tmp_path / "validation").exists()  # nothing written


def test_help_lists_the_choices():
    for args, choices in {
        ("export",): "jsonl|harbor|hf",
        ("import",): "jsonl|harbor|hf|terminal-bench-1|bfcl",
        ("generate",): "procedural|llm",
        ("eval",): "test|train|all",
        ("calibrate",): "tools|fenced",
        ("lint",): "harbor-docker",
        ("validate",): "local|ray",
        ("families", "try"): "easy|medium|hard",
    }.items():
        assert choices in run(*args, "--help").stdout, args
    bad = run("export", ".", "-f", "xml", "-o", "x", code=2)
    assert "xml" in bad.stderr and "Traceback" not in bad.stderr


def _options() -> dict[str, list[tuple[str, click.Parameter]]]:
    """Every visible option of every command: each of its names -> (command, option)."""
    found: dict[str, list[tuple[str, click.Parameter]]] = {}

    def walk(command: click.Command, path: str) -> None:
        for param in command.params:
            if param.param_type_name == "option" and not getattr(param, "hidden", False):
                for name in param.opts:
                    found.setdefault(name, []).append((path, param))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}".strip())

    walk(typer.main.get_command(app), "")
    return found


@pytest.mark.parametrize(
    "option",
    ["--jobs", "--json", "--executor", "--ray-address", "--k", "--config", "--model",
     "--base-url", "--api-key-env", "--llm-base-url", "--llm-model", "--llm-api-key-env",
     "--batch", "--max-tokens", "--flake-runs", "--action-format"],
)  # fmt: skip
def test_one_name_one_help_one_default_per_idea(option):
    uses = _options()[option]
    assert len({(p.help, repr(p.default)) for _cmd, p in uses}) == 1, [c for c, _ in uses]
    assert len({tuple(p.opts) for _cmd, p in uses}) == 1


def test_the_vocabulary():
    options = _options()
    jobs = {cmd: p.default for cmd, p in options["--jobs"]}
    assert set(jobs) >= {"validate", "generate", "eval", "calibrate", "families try"}
    assert set(jobs.values()) == {2}
    assert {cmd for cmd, _ in options["-k"]} == {"eval", "calibrate"}  # episodes, nowhere else
    assert "--repeats" in dict(options) and "--html" not in options  # hidden alias only
    assert {cmd for cmd, _ in options["--out"]} >= {"validate", "generate", "eval", "report"}
    for name in ("--llm-base-url", "--base-url"):  # the task writer vs the policy
        assert {cmd for cmd, _ in options[name]} == (
            {"generate", "calibrate", "families try"}
            if name.startswith("--llm")
            else {"eval", "calibrate", "solve"}
        )


def test_lint_json_is_one_document_and_exits_1_on_findings(tmp_path):
    task = tmp_path / "unpinned"
    shutil.copytree(EXAMPLES / "tasks" / "access-log-report", task)
    (task / "tests" / "test.sh").write_text("#!/bin/bash\npip install pytest\npytest /tests\n")
    data = document("lint", task, code=1)
    assert data["tasks"] == 1 and data["findings"]
    script = [f for f in data["findings"] if f["path"] == "tests/test.sh"]
    assert script and all(f["task"] == "unpinned" for f in data["findings"])
    assert {"rule", "source", "where", "message"} <= set(script[0])
    plain = run("lint", task, code=1)
    assert len(plain.stdout.splitlines()) == len(data["findings"])
    assert any(line.startswith("unpinned: tests/test.sh") for line in plain.stdout.splitlines())
    assert "finding(s) in 1 task(s)" in plain.stderr


def test_the_action_format_of_a_policy():
    from factory.agent.actions import ActionFormat
    from factory.agent.policy import PolicyChoice

    def chosen(**choice) -> ActionFormat:
        policy = PolicyChoice(**choice)
        return policy.harness(policy.settings()).action_format

    endpoint = {"model": "m", "base_url": "http://127.0.0.1:9/v1"}
    assert chosen(**endpoint) is ActionFormat.TOOLS  # endpoints take tools=
    assert chosen(**endpoint, action_format=ActionFormat.FENCED) is ActionFormat.FENCED
    assert chosen(model="local") is ActionFormat.FENCED  # a local model: the settings'
    assert chosen(model="local", action_format=ActionFormat.TOOLS) is ActionFormat.TOOLS
    local = PolicyChoice(model="local", action_format=ActionFormat.TOOLS)
    assert local.settings().action_format == "tools"  # the trainer's runner reads it there


def test_a_bad_split_is_one_line(tmp_path):
    from factory.agent.evaluation import evaluate_endpoint
    from factory.errors import FactoryError
    from factory.llm import LlmClient, LlmSettings

    client = LlmClient(LlmSettings(base_url="http://127.0.0.1:9/v1", model="m"))
    with pytest.raises(FactoryError, match="split must be test, train or all, not 'heldout'"):
        evaluate_endpoint(
            tmp_path, client, None, runtime=object(), split="heldout", out=tmp_path / "o"
        )
    result = run("eval", EXAMPLES / "tasks", "--split", "heldout", code=2)
    assert "heldout" in result.stderr and "Traceback" not in result.stderr


def test_an_endpoint_policy_needs_its_model_name():
    done = subprocess.run(
        [sys.executable, "-m", "factory", "eval", str(EXAMPLES / "tasks"), "--base-url",
         "http://127.0.0.1:9/v1"],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 2 and "--base-url needs --model" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
