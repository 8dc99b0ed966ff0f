from __future__ import annotations

import json

import pytest

from factory.validate.outcome import Outcome, PhaseKind, PhaseResult, classify, parse_reward


def phases(nop, oracle, **extra):
    out = []
    for i, (n, o) in enumerate(zip(nop, oracle, strict=True), start=1):
        out.append(PhaseResult(kind=PhaseKind.NOP, repeat=i, reward=n))
        out.append(PhaseResult(kind=PhaseKind.ORACLE, repeat=i, reward=o, solve_exit_code=0))
    for key, value in extra.items():
        setattr(out[-1], key, value)
    return out


@pytest.mark.parametrize(
    ("nop", "oracle", "outcome"),
    [
        ([0, 0], [1, 1], Outcome.VALID),
        ([None, None], [1, 1], Outcome.VALID),  # tests died before writing a reward: counts as 0
        ([1, 1], [1, 1], Outcome.PASSES_WITHOUT_SOLUTION),
        ([0.5, 0.5], [1, 1], Outcome.PASSES_WITHOUT_SOLUTION),
        ([0, 0], [0, 0], Outcome.FAILS_WITH_SOLUTION),
        ([0, 0], [0.5, 0.5], Outcome.FAILS_WITH_SOLUTION),
        ([0, 0], [None, None], Outcome.FAILS_WITH_SOLUTION),
        ([0, 1], [1, 1], Outcome.FLAKY),
        ([0, 0], [1, 0], Outcome.FLAKY),
        ([1, 1], [0, 0], Outcome.PASSES_WITHOUT_SOLUTION),
    ],
)
def test_classify(nop, oracle, outcome):
    got, reason = classify(phases(nop, oracle))
    assert got is outcome
    assert reason and "\n" not in reason


def test_timeout_beats_everything_but_infra():
    got, reason = classify(phases([0], [1], timed_out="solve", timeout_sec=5.0))
    assert got is Outcome.TIMEOUT
    assert "solution/solve.sh" in reason and "agent.timeout_sec" in reason
    with_infra = phases([0], [1], timed_out="test", timeout_sec=5.0)
    with_infra[0].infra_error = "container died"
    assert classify(with_infra)[0] is Outcome.INFRA_ERROR


def test_reason_quotes_missing_reward():
    result = phases([0], [None])
    result[-1].reward_error = "the tests wrote neither /logs/verifier/reward.txt nor reward.json"
    result[-1].output_tail = "line1\nAssertionError: boom\n"
    got, reason = classify(result)
    assert got is Outcome.FAILS_WITH_SOLUTION
    assert "reward.txt" in reason and "AssertionError: boom" in reason


@pytest.mark.parametrize(
    ("files", "reward", "error"),
    [
        ({"reward.txt": b"1\n"}, 1.0, None),
        ({"reward.txt": b" 0.25 "}, 0.25, None),
        ({"reward.txt": b"PASS"}, None, "not a number"),
        ({"reward.txt": b""}, None, "not a finite number"),
        ({"reward.txt": b"nan"}, None, "not a finite number"),
        ({"reward.json": json.dumps({"reward": 1, "acc": 0.5}).encode()}, 1.0, None),
        ({"reward.json": json.dumps({"score": 0.75}).encode()}, 0.75, None),
        ({"reward.json": b"0.5"}, 0.5, None),
        ({"reward.json": json.dumps({"a": 1, "b": 0}).encode()}, None, "no 'reward' key"),
        ({"reward.json": b"{broken"}, None, "not valid JSON"),
        ({"reward.json": b"[1]"}, None, "object of numeric metrics"),
        ({}, None, "neither"),
        ({"reward.txt": b"1", "reward.json": b'{"reward": 0}'}, 1.0, None),
        ({"reward.txt": b"1e308"}, None, "1e+308, outside [0, 1]"),
        ({"reward.txt": b"-5"}, None, "-5, outside [0, 1]"),
        ({"reward.txt": b"inf"}, None, "not a finite number"),
        ({"reward.json": b'{"reward": 2}'}, None, "outside [0, 1]"),
    ],
)
def test_parse_reward(files, reward, error):
    got, _source, _metrics, got_error = parse_reward(files)
    assert got == reward
    if error is None:
        assert got_error is None
    else:
        assert error in got_error


def test_harness_seconds():
    phase = PhaseResult(
        kind=PhaseKind.ORACLE, repeat=1, timings={"total": 2.0, "solve": 0.5, "test": 1.0}
    )
    assert phase.harness_sec == pytest.approx(0.5)


def test_failing_solution_quotes_its_own_output_when_it_exited_nonzero():
    failed = phases(
        [0.0], [0.0], solve_exit_code=127, solve_output_tail="stamp: command not found\n"
    )
    outcome, reason = classify(failed)
    assert outcome is Outcome.FAILS_WITH_SOLUTION
    assert "solve.sh exit 127); solve.sh output: stamp: command not found" in reason
    assert "test output" not in reason  # the tests printed nothing
    quiet = phases([0.0], [0.0], solve_output_tail="done\n", output_tail="1 failed\n")
    assert classify(quiet)[1].endswith("solve.sh exit 0); test output: 1 failed")


@pytest.mark.parametrize("content", [b"1e308", b"-5", b"PASS", b"inf", b'{"reward": 7}'])
def test_a_reward_outside_the_unit_interval_is_its_own_outcome(content):
    from factory.validate.outcome import reward_is_invalid

    name = "reward.json" if content.startswith(b"{") else "reward.txt"
    reward, source, _metrics, error = parse_reward({name: content})
    assert reward is None and reward_is_invalid(source, error)
    oracle = phases([0], [None])
    oracle[-1].reward_error, oracle[-1].reward_invalid = error, True
    got, reason = classify(oracle)
    assert got is Outcome.INVALID_REWARD
    assert "[0, 1]" in reason and "oracle run 1" in reason
    nop = phases([None], [1])
    nop[0].reward_error, nop[0].reward_invalid = error, True
    assert classify(nop)[0] is Outcome.INVALID_REWARD
    # a missing reward file is not an invalid reward: the tests failed before writing one
    assert not reward_is_invalid(*parse_reward({})[1::2])
