"""disk-cleanup's drafts: every hard draw has a budget to choose from."""

from __future__ import annotations

import random

import pytest

from factory.families import registry
from factory.vocabulary import Difficulty

FAMILY = registry.get("disk-cleanup")


@pytest.mark.parametrize("seed", [251, 687])
def test_a_hard_draw_with_few_old_exports_still_drafts(seed):
    # these seeds drew fewer than four exports older than the cut-off: the draft asserted
    # (no three exports left for the budget to choose from) instead of adding older ones
    draft = FAMILY.draft(random.Random(seed), Difficulty.HARD, dict(FAMILY.default_params))
    exports = [p for p in draft.context["expected"] if p.startswith("exports/")]
    # the oldest export is kept, so at least two others survive the budget's choice of k >= 2
    assert len(exports) >= 2 and draft.context["budget"] > 0


def test_hard_draws_never_fail():
    for seed in range(1, 301):
        FAMILY.draft(random.Random(seed), Difficulty.HARD, dict(FAMILY.default_params))
