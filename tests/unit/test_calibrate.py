"""`factory calibrate` without a model or Docker: the band, the journal, stamping, retiring,
the manifest, resuming, regeneration for thin leaves, and the LLM prompt that cites
transcripts (against the stub server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.generate_cli import shell_basics_taxonomy
from fixtures.llm_stub import GOOD_TASK, Stub, reply

from factory.agent.endpoint import EndpointPolicy
from factory.agent.harness import EpisodeResult
from factory.calibrate.band import (
    IN_BAND,
    TOO_EASY,
    TOO_HARD,
    Band,
    bin_labels,
    histogram,
    retires,
    share_in_band,
)
from factory.calibrate.journal import Journal, calibration_hash, record_from_rewards
from factory.calibrate.regenerate import (
    EASIER,
    HARDER,
    CalibrationLlmBackend,
    ThinLeaf,
    cite,
    thin_leaves,
)
from factory.calibrate.run import KEPT, RETIRED, Calibrator
from factory.calibrate.suite import SuiteFolder
from factory.errors import FactoryError
from factory.generate.pipeline import (
    SuiteGenerator,
    candidate_record,
    load_suite_manifest,
)
from factory.generate.procedural import ProceduralBackend
from factory.generate.results import ACCEPTED, CandidateResult
from factory.generate.taxonomy import Difficulty, parse_taxonomy
from factory.llm import LlmClient, LlmSettings
from factory.runtime import DockerRuntime
from factory.tasks.config import FactoryProvenance, TaskConfig
from factory.tasks.hashing import hash_tree
from factory.tasks.model import load_task_config

# --- the band -------------------------------------------------------------------------------


def test_band_parse_and_verdicts():
    band = Band.parse("0.1, 0.7")
    assert (band.low, band.high) == (0.1, 0.7)
    assert [band.verdict(r) for r in (0.0, 0.1, 0.5, 0.7, 0.75, 1.0)] == [
        TOO_HARD,
        IN_BAND,
        IN_BAND,
        IN_BAND,
        TOO_EASY,
        TOO_EASY,
    ]
    # always solved is retired whatever the band says
    assert Band.parse("0,1").verdict(1.0) == TOO_EASY
    assert Band.parse("0,1").verdict(0.0) == IN_BAND
    assert retires(TOO_EASY) and not retires(TOO_HARD) and retires(TOO_HARD, retire_too_hard=True)
    assert not retires(IN_BAND, retire_too_hard=True)


@pytest.mark.parametrize("text", ["0.7,0.1", "0.1", "a,b", "-0.1,0.5", "0.2,1.5"])
def test_band_rejects(text):
    with pytest.raises(FactoryError, match="--band"):
        Band.parse(text)


def test_histogram_bins():
    rates = [0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 0.2, 0.8]
    assert histogram(rates) == [2, 2, 1, 1, 2]
    assert sum(histogram(rates)) == len(rates)
    assert bin_labels()[0] == "[0.0, 0.2)" and bin_labels()[-1] == "[0.8, 1.0]"
    assert share_in_band(rates, Band(0.25, 0.75)) == 3 / 8
    assert share_in_band([], Band(0, 1)) == 0.0


# --- metadata and journal -----------------------------------------------------------------


def test_provenance_fields_round_trip_and_keep_unknown_keys():
    config = TaskConfig.from_toml(
        '[task]\nname = "a/b"\n[metadata.factory]\nsource = "x"\nfuture_key = 3\n'
    )
    provenance = config.provenance.model_copy(
        update={
            "pass_rate": 0.25,
            "calibration_k": 8,
            "calibration_model": "m",
            "calibration_verdict": IN_BAND,
            "flake_rate": 0.0,
            "flake_runs": 8,
        }
    )
    config.set_provenance(provenance)
    again = TaskConfig.from_toml(config.to_toml())
    p = again.provenance
    assert (p.pass_rate, p.calibration_k, p.calibration_model) == (0.25, 8, "m")
    assert (p.calibration_verdict, p.flake_rate, p.flake_runs) == (IN_BAND, 0.0, 8)
    assert again.metadata["factory"]["future_key"] == 3
    with pytest.raises(ValueError):
        FactoryProvenance(pass_rate=1.5)


def write_task(root: Path, name: str, answer: str = "42") -> Path:
    task = root / name
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    (task / "instruction.md").write_text(f"Write {answer} to /app/answer.txt.\n")
    (task / "environment" / "Dockerfile").write_text("FROM factory/base:bookworm\n")
    (task / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    (task / "solution" / "solve.sh").write_text(f"#!/bin/bash\necho {answer} > /app/answer.txt\n")
    (task / "task.toml").write_text(
        f'[task]\nname = "t/{name}"\n[metadata]\ndifficulty = "easy"\n'
        '[metadata.factory]\nsource = "hand-written"\n[environment]\ncpus = 1\n'
    )
    return task


def test_calibration_hash_ignores_the_stamps_but_not_the_task(tmp_path):
    task = write_task(tmp_path, "a")
    before = calibration_hash(task)
    folder = SuiteFolder(tmp_path)
    entry = folder.load(task)
    folder.stamp(entry, pass_rate=0.5, episodes=4, model="m", verdict=IN_BAND)
    assert load_task_config(task / "task.toml").provenance.pass_rate == 0.5
    assert calibration_hash(task) == before  # also: cpus = 1 was rewritten as 1.0
    (task / "instruction.md").write_text("Write 43 to /app/answer.txt.\n")
    assert calibration_hash(task) != before


def test_journal_answers_only_for_the_same_model_k_and_content(tmp_path):
    journal = Journal(tmp_path)
    record = record_from_rewards("a", "m", 4, "h1", [1.0, 0.0, None, 1.0], 2.0, "p")
    assert (record.successes, record.episodes, record.infra_failures) == (2, 3, 1)
    assert record.pass_rate == 2 / 3
    journal.put(record)
    assert journal.fresh("a", "m", 4, "h1", "p") is not None
    assert journal.fresh("a", "m", 4, "h1", "other-settings") is None
    assert journal.fresh("a", "other", 4, "h1", "p") is None
    assert journal.fresh("a", "m", 8, "h1", "p") is None
    assert journal.fresh("a", "m", 4, "h2", "p") is None
    journal.path("a").write_text("{torn")
    assert journal.get("a") is None
    lost = record_from_rewards("b", "m", 2, "h", [None, None], 1.0)
    assert lost.pass_rate is None and lost.error


# --- a whole calibration, with a scripted policy ------------------------------------------

TAXONOMY = shell_basics_taxonomy(
    "cal", 3, "{quota: 3, difficulty: {easy: 1}, attempts_per_task: 2, repeats: 1}"
)


def make_suite(root: Path) -> Path:
    """A generated suite as `factory generate` leaves it, without running containers."""
    (root / "tasks").mkdir(parents=True)
    (root / "results").mkdir()
    (root / "taxonomy.yaml").write_text(TAXONOMY)
    taxonomy = parse_taxonomy(__import__("yaml").safe_load(TAXONOMY))
    backend = ProceduralBackend(taxonomy.suite)
    for leaf in taxonomy.leaves():
        for attempt in range(leaf.quota):
            accept(root, taxonomy, backend, leaf, Difficulty.EASY, attempt)
    generator = SuiteGenerator(
        taxonomy, TAXONOMY, root, DockerRuntime("unit-calibrate"), lambda _leaf: backend
    )
    generator._prepare()
    generator.write_manifest()
    return root


def accept(root, taxonomy, backend, leaf, difficulty, attempt) -> CandidateResult:
    record = candidate_record(leaf, taxonomy.seed, difficulty, attempt)
    task_id = record["id"]
    spec, _ = backend.make(leaf, difficulty, record["seed"], task_id)
    folder = spec.write(root / "tasks" / task_id)
    result = CandidateResult(
        **record,
        status=ACCEPTED,
        outcome="valid",
        reason="ok",
        path=f"tasks/{task_id}",
        content_hash=hash_tree(folder),
    )
    (root / "results" / f"{task_id}.json").write_text(result.model_dump_json())
    return result


class ScriptedRunner:
    """Rewards per task from a table (default: a pattern by the task's name)."""

    model_name = "scripted"
    fingerprint = "settings-1"

    def __init__(self, rewards: dict[str, list[float]], default=(1.0, 0.0)) -> None:
        self.rewards = rewards
        self.default = default
        self.measured: list[str] = []

    def run(self, site, jobs, k, log_dir, on_task) -> None:
        for job in jobs:
            self.measured.append(job.key)
            pattern = list(self.rewards.get(job.key, self.default))
            rewards = (pattern * k)[:k]
            folder = log_dir(job.key)
            folder.mkdir(parents=True, exist_ok=True)
            results = []
            for reward in rewards:
                messages = [
                    {"role": "user", "content": job.task.instruction},
                    {"role": "assistant", "content": f"```bash\necho try-{job.key}\n```"},
                    {"role": "user", "content": "(no output)"},
                ]
                with (folder / "transcript.jsonl").open("a") as handle:
                    handle.write(json.dumps({"reward": reward, "messages": messages}) + "\n")
                results.append(EpisodeResult(job.task.id, reward, 1, transcript=messages))
            on_task(job, results, 0.01)

    def close(self) -> None:
        pass


@pytest.fixture
def no_images(monkeypatch):
    def build(self, entries):
        for entry in entries:
            self.images[entry.key] = "factory-env:fake"
        return ["factory-env:fake"] * len(entries)

    monkeypatch.setattr(Calibrator, "_build", build)


def calibrator(suite: Path, runner, **options) -> Calibrator:
    defaults = dict(k=4, band=Band(0.25, 0.75))
    return Calibrator(suite, runner, DockerRuntime("unit-calibrate"), **{**defaults, **options})


B0, B1, B2 = "shell-basics-000", "shell-basics-001", "shell-basics-002"
W0, W1, W2 = "shell-words-000", "shell-words-001", "shell-words-002"
RATES = {
    B0: [1.0],  # always solved: retired
    B1: [1.0, 0.0],  # 0.5: in band
    B2: [0.0],  # never: too hard, kept
    W0: [1.0, 0.0],
    W1: [1.0, 1.0, 1.0, 0.0],  # 0.75: in band (the edge)
    W2: [1.0, 0.0, 0.0, 0.0],  # 0.25: in band (the edge)
}


def test_calibration_stamps_retires_and_rebuilds_the_manifest(tmp_path, no_images):
    suite = make_suite(tmp_path / "suite")
    runner = ScriptedRunner(RATES)
    summary = calibrator(suite, runner).run()

    assert sorted(runner.measured) == sorted(RATES)
    by_key = {t.key: t for t in summary.tasks}
    assert (by_key[B0].verdict, by_key[B0].action) == (TOO_EASY, RETIRED)
    assert (by_key[B2].verdict, by_key[B2].action) == (TOO_HARD, KEPT)
    assert all(by_key[k].verdict == IN_BAND for k in (B1, W0, W1, W2))
    assert sorted(summary.before) == [0.0, 0.25, 0.5, 0.5, 0.75, 1.0]
    assert sorted(summary.after) == [0.0, 0.25, 0.5, 0.5, 0.75]
    # k = 4 episodes each: pass@4 is "any solved" (all but B2), pass^4 "all solved" (B0 only)
    assert (by_key[B0].pass_at_k, by_key[B0].pass_hat_k) == (1.0, 1.0)
    assert (by_key[W1].pass_at_k, by_key[W1].pass_hat_k) == (1.0, 0.0)
    assert (by_key[B2].pass_at_k, by_key[B2].pass_hat_k) == (0.0, 0.0)
    assert summary.to_json()["pass_at_4"] == 5 / 6 and summary.to_json()["pass_hat_4"] == 1 / 6

    # the retired task moved, with a note, and its record says so
    assert not (suite / "tasks" / B0).exists()
    note = json.loads((suite / "retired" / B0 / "retirement.json").read_text())
    assert note["verdict"] == TOO_EASY and note["pass_rate"] == 1.0 and note["model"] == "scripted"
    assert note["leaf"] == "terminal/shell/basics" and "above the band" in note["reason"]
    record = CandidateResult.model_validate_json((suite / "results" / f"{B0}.json").read_text())
    assert (record.status, record.outcome, record.path) == ("retired", "retired", f"retired/{B0}")

    # every task carries its rate; the records' hashes follow the stamped task.toml
    p = load_task_config(suite / "tasks" / B1 / "task.toml").provenance
    assert (p.pass_rate, p.calibration_k, p.calibration_model, p.calibration_verdict) == (
        0.5,
        4,
        "scripted",
        IN_BAND,
    )
    assert load_task_config(suite / "retired" / B0 / "task.toml").provenance.pass_rate == 1.0
    manifest = load_suite_manifest(suite)
    assert B0 not in {t.id for t in manifest.tasks} and len(manifest.tasks) == 5
    for entry in manifest.tasks:
        assert entry.content_hash == hash_tree(suite / entry.path)
    basics = next(c for c in manifest.coverage if c.taxonomy_path == "terminal/shell/basics")
    assert (basics.valid, basics.outcomes, basics.complete) == (
        2,
        {"retired": 1, "valid": 2},
        False,
    )
    assert basics.yield_ == 1.0 and manifest.totals["yield"] == 1.0  # retired were valid
    # transcripts and the summary are kept
    assert (suite / "calibration" / "episodes" / B1 / "transcript.jsonl").is_file()
    assert json.loads((suite / "calibration" / "summary.json").read_text())["k"] == 4


def test_a_rerun_resumes_from_the_journal(tmp_path, no_images):
    suite = make_suite(tmp_path / "suite")
    calibrator(suite, ScriptedRunner(RATES)).run()
    again = ScriptedRunner(RATES)
    summary = calibrator(suite, again, band=Band(0.0, 0.5)).run()  # another band: free
    assert again.measured == []
    assert all(t.cached for t in summary.tasks) and len(summary.tasks) == 5  # B0 is retired
    assert {t.key for t in summary.retired} == {W1}  # 0.75 > 0.5 now
    # another k, or a changed task, is measured again
    (suite / "tasks" / W0 / "instruction.md").write_text("changed\n")
    third = ScriptedRunner(RATES)
    calibrator(suite, third).run()
    assert third.measured == [W0]
    fourth = ScriptedRunner(RATES)
    calibrator(suite, fourth, k=2).run()
    assert len(fourth.measured) == 4
    # the same model sampled otherwise (another temperature, prefix, turns) is another policy
    fifth = ScriptedRunner(RATES)
    fifth.fingerprint = "settings-2"
    calibrator(suite, fifth, k=2).run()
    assert len(fifth.measured) == 4


def test_a_task_lost_to_the_engine_is_retried(tmp_path, no_images, monkeypatch):
    suite = make_suite(tmp_path / "suite")

    class Flaky(ScriptedRunner):
        def run(self, site, jobs, k, log_dir, on_task):
            for job in jobs:
                self.measured.append(job.key)
                on_task(job, [EpisodeResult(job.task.id, None, 0, "engine")] * k, 0.0)

    summary = calibrator(suite, Flaky({})).run()
    assert all(t.action == "error" and t.pass_rate is None for t in summary.tasks)
    assert len(list((suite / "tasks").iterdir())) == 6  # nothing retired on no evidence
    retry = ScriptedRunner(RATES)
    calibrator(suite, retry).run()
    assert len(retry.measured) == 6


def test_retire_too_hard_and_plain_folders(tmp_path, no_images):
    plain = tmp_path / "plain"
    for name in ("easy", "ok", "hard"):
        write_task(plain, name)
    rates = {"easy": [1.0], "ok": [1.0, 0.0], "hard": [0.0]}
    summary = calibrator(plain, ScriptedRunner(rates), retire_too_hard=True).run()
    assert {t.key for t in summary.retired} == {"easy", "hard"}
    assert sorted(p.name for p in (plain / "retired").iterdir()) == ["easy", "hard"]
    assert [p.name for p in plain.iterdir() if (p / "task.toml").is_file()] == ["ok"]
    rerun = calibrator(plain, ScriptedRunner(rates)).run()  # retired/ is not a task
    assert [t.key for t in rerun.tasks] == ["ok"] and rerun.tasks[0].cached
    with pytest.raises(FactoryError, match="generated suite"):
        calibrator(plain, ScriptedRunner(rates), regenerate=True)


# --- regeneration ---------------------------------------------------------------------------


def test_thin_leaves_and_their_direction():
    taxonomy = parse_taxonomy(__import__("yaml").safe_load(TAXONOMY))
    basics, words = list(taxonomy.leaves())
    from collections import Counter

    thin = thin_leaves(
        [basics, words],
        Counter({basics.path: 1, words.path: 3}),
        {basics.path: Counter({TOO_EASY: 2, IN_BAND: 1})},
    )
    assert [(t.leaf.path, t.need, t.direction) for t in thin] == [(basics.path, 2, HARDER)]
    assert thin[0].difficulty is Difficulty.HARD
    thin = thin_leaves([basics], Counter(), {basics.path: Counter({TOO_HARD: 2, TOO_EASY: 1})})
    assert thin[0].direction == EASIER and thin[0].difficulty is Difficulty.EASY


@pytest.fixture
def offline_candidates(monkeypatch):
    """SuiteGenerator._candidate without containers: render, accept, journal (so settling
    has nothing left to do)."""
    made = []

    def candidate(self, leaf, plan, attempt):
        backend = ProceduralBackend(self.taxonomy.suite)
        result = accept(self.out, self.taxonomy, backend, leaf, plan[attempt % len(plan)], attempt)
        made.append(result)
        return result

    monkeypatch.setattr(SuiteGenerator, "_candidate", candidate)
    monkeypatch.setattr(SuiteGenerator, "_settle", lambda self, result: result)  # journalled
    return made


def test_regenerate_refills_a_thin_leaf_with_harder_tasks(tmp_path, no_images, offline_candidates):
    suite = make_suite(tmp_path / "suite")
    rates = {**RATES, B2: [1.0]}  # basics: two always solved, one in band
    # round 1 makes two new tasks: one in band, one always solved (retired in turn);
    # round 2 makes the one still missing
    rates["shell-basics-006"] = [1.0, 0.0]
    rates["shell-basics-007"] = [1.0]
    rates["shell-basics-008"] = [0.0, 1.0]
    runner = ScriptedRunner(rates)
    summary = calibrator(suite, runner, regenerate=True, rounds=2, jobs=1).run()

    made = [r.id for r in summary.regenerated]
    assert made == ["shell-basics-006", "shell-basics-007", "shell-basics-008"]
    assert all(r.difficulty == "hard" for r in offline_candidates)
    new = {t.key: t for t in summary.tasks if t.new}
    assert new["shell-basics-006"].action == KEPT and new["shell-basics-007"].action == RETIRED
    # attempts beyond the budget (6 = quota 3 x 2) carry new seeds
    seeds = {r.seed for r in offline_candidates}
    assert len(seeds) == 3
    manifest = load_suite_manifest(suite)
    ids = {t.id for t in manifest.tasks}
    assert {"shell-basics-006", "shell-basics-008"} <= ids and "shell-basics-007" not in ids
    basics = next(c for c in manifest.coverage if c.taxonomy_path == "terminal/shell/basics")
    assert basics.valid == 3 and basics.complete
    # a later `factory generate` sees the extra attempts and the retired ones
    generator = SuiteGenerator(
        parse_taxonomy(__import__("yaml").safe_load(TAXONOMY)),
        TAXONOMY,
        suite,
        DockerRuntime("unit-calibrate"),
        lambda _leaf: None,
    )
    generator._prepare()
    state = generator.states["terminal/shell/basics"]
    assert sorted(state.results) == [0, 1, 2, 6, 7, 8]
    assert state.valid == 3 and state.next_attempt() is None


def test_cited_transcripts_reach_the_llm_prompt():
    record = {
        "reward": 0.0,
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "Count the words in /data/x.txt"},
            {"role": "assistant", "content": "```bash\nwc -l /data/x.txt\n```"},
            {"role": "user", "content": "12 /data/x.txt"},
        ],
    }
    won = {**record, "reward": 1.0}
    failed, solved = cite([("t1", 0.5, record), ("t2", 0.0, record), ("t1", 0.5, won)])
    assert [f["task"] for f in failed] == ["t1", "t2"]  # closest to the band first
    assert "POLICY: ```bash\nwc -l /data/x.txt" in failed[0]["text"]
    assert "TASK: Count the words" in failed[0]["text"] and "sys" not in failed[0]["text"]
    assert [s["task"] for s in solved] == ["t1"]

    taxonomy = parse_taxonomy(
        {
            "suite": "s",
            "domains": [
                {
                    "name": "terminal",
                    "categories": [{"name": "text", "skills": [{"name": "w", "generator": "llm"}]}],
                }
            ],
        }
    )
    (leaf,) = taxonomy.leaves()
    stub = Stub()
    try:
        from factory.generate.llm_backend import LlmBackend

        stub.queue = [reply(json.dumps(GOOD_TASK))]
        client = LlmClient(LlmSettings(base_url=stub.url, model="m", max_retries=0))
        thin = ThinLeaf(leaf, 1, HARDER, failed=failed, solved=solved)
        backend = CalibrationLlmBackend(LlmBackend(client, "s"), {leaf.path: thin})
        spec, _usage = backend.make(leaf, Difficulty.HARD, 11, "text-w-009")
    finally:
        stub.server.shutdown()
    prompt = stub.requests[0]["messages"][-1]["content"]
    assert "FAILED" in prompt and "wc -l /data/x.txt" in prompt and "SUCCEEDED" in prompt
    assert "harder" in prompt and "Reply with a JSON object" in prompt  # the leaf's own prompt
    assert "Write one hard task" in prompt
    assert spec.config.provenance.prompt_version == "task_v1+calibrate_v1"


def test_endpoint_policy_seeds_each_turn():
    stub = Stub()
    try:
        stub.queue = [reply("```bash\nls\n```"), reply("DONE")]
        client = LlmClient(LlmSettings(base_url=stub.url, model="m", max_retries=0))
        policy = EndpointPolicy(client, temperature=0.5, max_tokens=64, seed=100)
        messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
        text, calls = policy.reply(messages)
        assert text == "```bash\nls\n```" and calls is None
        messages += [
            {"role": "assistant", "content": text, "tool_calls": None},
            {"role": "user", "content": "out"},
        ]
        assert policy.reply(messages)[0] == "DONE"
    finally:
        stub.server.shutdown()
    first, second = stub.requests
    assert (first["seed"], second["seed"]) == (100, 101)
    assert first["temperature"] == 0.5 and first["max_tokens"] == 64
    assert all(set(m) == {"role", "content"} for m in second["messages"])
