"""Verifier flake rate: the perturbation plan and how a phase is judged (no Docker)."""

from __future__ import annotations

from pathlib import Path

from factory.quality.flake import (
    PERTURBATIONS,
    FlakePhase,
    FlakeResult,
    judge,
    perturbation,
    stamp_flake_rate,
)
from factory.tasks.model import load_task_config
from factory.validate.outcome import PhaseKind, PhaseResult


def test_perturbations_cycle_through_zone_seed_load_and_all():
    plan = [perturbation(i, cpus=2.0) for i in range(5)]
    assert [p.name for p in plan] == [*PERTURBATIONS, "tz"]
    tz, seed, load, every, _ = plan
    assert tz.env == {"TZ": "Pacific/Kiritimati"} and tz.load == 0
    assert set(seed.env) == {"PYTHONHASHSEED", "FACTORY_SEED"} and seed.load == 0
    assert load.env == {} and load.load == 2  # one hog per CPU of the container
    assert every.env["TZ"] == "America/St_Johns" and "PYTHONHASHSEED" in every.env
    assert every.load == 2
    assert seed.env["PYTHONHASHSEED"] != every.env["PYTHONHASHSEED"]
    assert perturbation(1).env == perturbation(1).env  # deterministic


def phase(kind: PhaseKind, **fields) -> PhaseResult:
    return PhaseResult(kind=kind, repeat=1, **fields)


def test_judge_against_the_expected_reward():
    assert judge(PhaseKind.NOP, phase(PhaseKind.NOP, reward=0.0)).flaky is False
    assert judge(PhaseKind.NOP, phase(PhaseKind.NOP, reward=1.0)).flaky is True
    assert judge(PhaseKind.ORACLE, phase(PhaseKind.ORACLE, reward=1.0)).flaky is False
    assert judge(PhaseKind.ORACLE, phase(PhaseKind.ORACLE, reward=0.5)).flaky is True
    assert judge(PhaseKind.ORACLE, phase(PhaseKind.ORACLE, reward=None)).flaky is True
    timed_out = judge(PhaseKind.ORACLE, phase(PhaseKind.ORACLE, timed_out="test"))
    assert timed_out.flaky is True and "timed out" in timed_out.detail
    lost = judge(PhaseKind.NOP, phase(PhaseKind.NOP, infra_error="engine gone"))
    assert lost.flaky is None


def test_flake_rate_leaves_infra_errors_out(tmp_path):
    result = FlakeResult(tmp_path)
    result.phases = [
        FlakePhase(1, "tz", "nop", 0.0, 0.0, False),
        FlakePhase(1, "tz", "oracle", 0.0, 1.0, True),
        FlakePhase(2, "seed", "nop", None, 0.0, None, "engine"),
        FlakePhase(2, "seed", "oracle", 1.0, 1.0, False),
    ]
    assert result.flake_rate == 1 / 3
    assert result.infra_errors == 1
    assert result.by_perturbation() == {"tz": (1, 2), "seed": (0, 1)}
    assert FlakeResult(tmp_path).flake_rate is None


def test_stamp_keeps_other_metadata(tmp_path: Path):
    (tmp_path / "task.toml").write_text(
        '[task]\nname = "x/y"\n[metadata]\ndifficulty = "easy"\n'
        '[metadata.factory]\nsource = "hand-written"\ncustom_key = "kept"\n'
    )
    result = FlakeResult(tmp_path)
    result.phases = [FlakePhase(1, "tz", "nop", 0.0, 0.0, False)] * 3 + [
        FlakePhase(1, "tz", "oracle", 0.0, 1.0, True)
    ]
    assert stamp_flake_rate(tmp_path, result)
    config = load_task_config(tmp_path / "task.toml")
    assert config.provenance.flake_rate == 0.25 and config.provenance.flake_runs == 4
    assert config.metadata["factory"]["custom_key"] == "kept"
    assert config.metadata["difficulty"] == "easy"
    assert not stamp_flake_rate(tmp_path, FlakeResult(tmp_path))
