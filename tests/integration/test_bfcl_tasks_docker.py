"""Imported BFCL multi-turn base tasks certify in real containers (nop fails, oracle passes).

Three entries over different API classes: 0 (TwitterAPI + GorillaFileSystem, with an excluded
function), 101 (MessageAPI + TradingBot) and 57 (VehicleControlAPI + MathAPI: python3-mpmath is
installed at build time; its final state equals the initial one, so only the response check
fails the do-nothing run). Skipped without a ``bfcl_eval-*.whl``, as the unit tests are.
"""

from __future__ import annotations

import pytest

from factory.importers import bfcl, bfcl_tasks
from factory.validate.outcome import Outcome
from factory.validate.validator import Validator

pytestmark = pytest.mark.docker

IDS = ["0", "101", "57"]


def test_imported_bfcl_tasks_are_valid(runtime, tmp_path):
    wheel = bfcl.find_wheel()
    if wheel is None or not wheel.is_file():
        pytest.skip(
            "no bfcl-eval wheel: set FACTORY_BFCL_WHEEL or run "
            "`pip download bfcl-eval --no-deps -d ~/.cache/factory/wheels`"
        )
    report = bfcl_tasks.import_bfcl(tmp_path / "tasks", source=wheel, ids=IDS)
    assert not report.skipped, [(r.entry_id, r.skipped) for r in report.skipped]
    dirs = [r.dest for r in report.imported]
    assert len(dirs) == 3
    result = Validator(runtime, tmp_path / "out", jobs=1).run(dirs)
    bad = {t.id: t.reason for t in result.tasks if t.outcome is not Outcome.VALID}
    assert not bad, bad
