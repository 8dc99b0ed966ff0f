"""New tasks for the leaves calibration left thin (fewer in-band tasks than their quota).

The leaf's own generator makes them, through the suite's :class:`SuiteGenerator` (so they are
certified, deduplicated and journaled like any candidate, with new attempt numbers beyond the
leaf's budget and therefore new seeds):

* a procedural family at another difficulty: ``hard`` when the leaf's tasks were mostly too
  easy for the policy, ``easy`` when they were mostly too hard;
* the LLM backend with ``calibrate_v1``: the leaf's usual prompt, preceded by transcripts of
  episodes the policy failed (and, for a too-easy leaf, ones it solved) and the direction.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from factory.calibrate.band import TOO_EASY, TOO_HARD
from factory.generate.results import ACCEPTED, CandidateResult, LlmUsage
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import Difficulty, Leaf

CALIBRATE_PROMPT = "calibrate_v1"
HARDER, EASIER = "harder", "easier"


@dataclass
class ThinLeaf:
    leaf: Leaf
    need: int
    """In-band tasks missing to reach the quota."""
    direction: str
    """'harder' or 'easier'."""
    verdicts: Counter = field(default_factory=Counter)
    failed: list[dict[str, Any]] = field(default_factory=list)
    """Cited failed episodes: {task, pass_rate, text}."""
    solved: list[dict[str, Any]] = field(default_factory=list)

    @property
    def difficulty(self) -> Difficulty:
        return Difficulty.HARD if self.direction == HARDER else Difficulty.EASY


def thin_leaves(
    leaves: list[Leaf], in_band: Counter, verdicts: dict[str, Counter]
) -> list[ThinLeaf]:
    """Leaves with fewer in-band tasks than their quota. ``verdicts``: leaf path -> counts of
    the verdicts of its tasks (retired ones included); the majority of too-easy vs too-hard
    picks the direction (ties: harder, the issue's default)."""
    out = []
    for leaf in leaves:
        missing = leaf.quota - in_band.get(leaf.path, 0)
        if missing <= 0:
            continue
        counts = verdicts.get(leaf.path, Counter())
        direction = EASIER if counts[TOO_HARD] > counts[TOO_EASY] else HARDER
        out.append(ThinLeaf(leaf, missing, direction, counts))
    return out


def render_episode(record: dict, limit: int = 1400) -> str:
    """A transcript as plain text for a prompt: the instruction, then each turn."""
    lines = []
    for message in record.get("messages", []):
        role, content = message.get("role"), (message.get("content") or "").strip()
        if role == "system":
            continue
        if role == "user" and not lines:
            lines.append(f"TASK: {content[:500]}")
        elif role == "assistant":
            lines.append(f"POLICY: {content[:300]}")
        else:
            lines.append(f"OUTPUT: {content[:300]}")
    lines.append(f"REWARD: {record.get('reward')}")
    text = "\n".join(lines)
    return text if len(text) <= limit else text[: limit - 20] + "\n... [cut]"


def cite(
    episodes: list[tuple[str, float, dict]], *, failed: int = 2, solved: int = 1
) -> tuple[list[dict], list[dict]]:
    """Pick transcripts to cite: ``episodes`` are (task, pass rate, record). Failed episodes of
    the tasks the policy solves most often first (closest to the band), then solved ones."""
    losses = [e for e in episodes if (e[2].get("reward") or 0.0) < 1.0]
    wins = [e for e in episodes if (e[2].get("reward") or 0.0) >= 1.0]
    losses.sort(key=lambda e: (-e[1], e[0]))
    wins.sort(key=lambda e: (e[1], e[0]))
    pick_l, seen = [], set()
    for task, rate, record in losses:
        if task not in seen:
            seen.add(task)
            pick_l.append({"task": task, "pass_rate": rate, "text": render_episode(record)})
        if len(pick_l) == failed:
            break
    pick_w = [
        {"task": task, "pass_rate": rate, "text": render_episode(record)}
        for task, rate, record in wins[:solved]
    ]
    return pick_l, pick_w


def calibrate_messages(base_messages: list[dict], thin: ThinLeaf) -> list[dict]:
    """The leaf's usual generation messages with the user prompt wrapped by calibrate_v1."""
    from factory.templating import render

    counts = thin.verdicts
    summary = ", ".join(f"{v}: {counts[v]}" for v in sorted(counts) if counts[v]) or "no tasks left"
    advice = (
        "more steps, less guidance in the instruction, a subtler catch the policy misses"
        if thin.direction == HARDER
        else "fewer steps, an explicit instruction that names the tool, one clear output"
    )
    wrapped = render(
        f"prompts/{CALIBRATE_PROMPT}.j2",
        summary=summary,
        direction=thin.direction,
        failed=thin.failed,
        solved=thin.solved,
        advice=advice,
        task_prompt=base_messages[-1]["content"],
    )
    return [*base_messages[:-1], {"role": "user", "content": wrapped}]


class CalibrationLlmBackend:
    """Wraps an :class:`LlmBackend`: same model, modes and parsing; the leaf's usual prompt
    wrapped by calibrate_v1 (transcripts, direction)."""

    def __init__(self, base, thin: dict[str, ThinLeaf]) -> None:
        self.base = base
        self.thin = thin

    def messages(self, leaf: Leaf, difficulty: Difficulty, seed: int) -> tuple[list[dict], str]:
        """(messages, prompt name) exactly as the LLM backend would ask, then wrapped."""
        messages, prompt = self.base.task_messages(leaf, difficulty, seed)
        thin = self.thin.get(leaf.path)
        return (calibrate_messages(messages, thin) if thin else messages), prompt

    def make(
        self, leaf: Leaf, difficulty: Difficulty, seed: int, task_id: str
    ) -> tuple[TaskSpec, LlmUsage]:
        if leaf.path not in self.thin:
            return self.base.make(leaf, difficulty, seed, task_id)
        messages, prompt = self.messages(leaf, difficulty, seed)
        origin = self.base.origin(leaf, seed, f"{prompt}+{CALIBRATE_PROMPT}")
        return self.base._ask(task_id, messages, self.base._mode(leaf), difficulty, origin, seed)

    def repair(self, leaf, spec, certificate):
        return self.base.repair(leaf, spec, certificate)


def regenerate(
    generator,
    thin: list[ThinLeaf],
    *,
    jobs: int = 2,
    on_result: Callable[[CandidateResult], None] | None = None,
) -> list[CandidateResult]:
    """Candidates for each thin leaf until it has ``need`` new valid tasks or its extra
    attempt budget (need x attempts_per_task) is spent. Returns every finished candidate."""
    from concurrent.futures import ThreadPoolExecutor

    from factory.generate.taxonomy import LLM_GENERATOR

    base_pick = generator.backend_for
    by_path = {t.leaf.path: t for t in thin}

    def pick(leaf: Leaf):
        backend = base_pick(leaf)
        llm = leaf.skill.generator == LLM_GENERATOR or hasattr(backend, "client")
        return CalibrationLlmBackend(backend, by_path) if llm else backend

    generator.backend_for = pick
    results: list[CandidateResult] = []
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="regen") as pool:
            for item in thin:
                state = generator.states[item.leaf.path]
                budget = math.ceil(item.need * item.leaf.setting("attempts_per_task"))
                first = max([*state.results, item.leaf.attempt_budget - 1]) + 1
                attempts = list(range(first, first + budget))
                accepted = 0
                while attempts and accepted < item.need:
                    batch = attempts[: max(1, min(jobs, item.need - accepted))]
                    attempts = attempts[len(batch) :]
                    done = list(
                        pool.map(
                            lambda a, it=item: generator._candidate(it.leaf, [it.difficulty], a),
                            batch,
                        )
                    )
                    for attempt, certified in zip(batch, done, strict=True):
                        result = generator._settle(certified)  # in attempt order
                        state.results[attempt] = result
                        accepted += result.status == ACCEPTED
                        results.append(result)
                        if on_result is not None:
                            on_result(result)
                    generator.write_manifest()
    finally:
        generator.backend_for = base_pick
    return results
