"""A tool task with a simulated customer certifies in its container: the reference (which
writes the new reservation code to the reply) passes, and the near miss that does the right
work but never tells the customer the code is rejected by the communicate test."""

from __future__ import annotations

import pytest

from factory.generate.taxonomy import Difficulty
from factory.generate.trial import certify_trial, render_trial
from factory.validate.validator import Validator

pytestmark = [pytest.mark.docker]


def test_a_simulated_customer_task_certifies_and_rejects_an_untold_reply(runtime, tmp_path):
    trial = render_trial(
        "tool-airline",
        Difficulty.MEDIUM,
        1,
        tmp_path / "tasks",
        {"user": "simulated", "shape": "task"},
    )
    done = certify_trial(trial, Validator(runtime, tmp_path / "validation", repeats=1))
    assert done.certificate.valid, done.certificate.reason
    probes = {p.name: p for p in done.certificate.probes}
    assert probes["untold-facts"].rejected and probes["untold-facts"].reward == 0.0
