"""Hybrid generation (``params: {mode: scenario}``): a model writes the content, a procedural
family builds the task.

The leaf's family declares the slots it opens (:class:`factory.families.slots.Slots`). The
model is asked for exactly that content (scenario, persona, names, vocabularies, column names)
as one JSON object held to the slots' bounded schema, so the reply is short and always
complete: every string has a bounded pattern and every list a maximum length, and
``max_tokens`` is the longest reply the schema admits (:func:`max_json_chars`). The family's
code validates the content, draws the task's data from it and computes the solution and the
tests from that data, exactly as for its own seeded content; certification is the same as for
any candidate.

A reply that is no JSON object, content the slot model refuses, content the family cannot use
(:class:`ContentError`) or a scenario that mentions the answer goes back to the model with the
reason (``parse_repairs`` times), then the candidate is rejected (``unparseable`` or
``bad_content``), never a crash. A candidate that fails certification goes back with the verdict
(``--repair-rounds``). Provenance (``[metadata.factory]``) records the model, the prompt
version, the slots filled and the content itself (with the seed it reproduces the task).
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

from pydantic import ValidationError

from factory.families import registry
from factory.families.base import Family
from factory.families.slots import ContentError, Slots, max_json_chars, slot_lines
from factory.generate.certify import Certificate
from factory.generate.conversation import ConversingBackend
from factory.generate.llm_backend import extract_json
from factory.generate.pipeline import GenerationError, persona_and_scenario
from factory.generate.procedural import render_candidate
from factory.generate.results import LlmUsage, QualityOutcome
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import SCENARIO_MODE, Difficulty, Leaf
from factory.llm import Completion
from factory.quality.leaks import instruction_leaks
from factory.resources import templates_dir
from factory.templating import render

SCENARIO_PROMPT = "scenario_v1"
SCENARIO_SYSTEM_PROMPT = "scenario_system_v1"
SCENARIO_REPAIR_PROMPT = "scenario_repair_v1"
THEMES_FILE = "scenario_themes_v1.txt"
TOKEN_MARGIN = 16
"""Completion tokens beyond the longest reply the schema admits (end of turn, and slack for a
server that counts a final empty token)."""


@cache
def themes() -> tuple[str, ...]:
    """The built-in themes a candidate's content is set in (when its leaf lists no
    ``scenarios``): one per line of ``templates/prompts/scenario_themes_v1.txt``."""
    text = (templates_dir() / "prompts" / THEMES_FILE).read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def slot_family(leaf: Leaf) -> Family:
    """The leaf's family, which must open slots (the taxonomy check makes sure it does)."""
    try:
        family = registry.get(leaf.skill.generator)
    except KeyError as exc:
        raise GenerationError(str(exc.args[0])) from None
    if family.slots is None:
        raise GenerationError(f"family {family.name} opens no slots for mode '{SCENARIO_MODE}'")
    return family


def reply_budget(slots: type[Slots]) -> int:
    """Completion tokens that always hold a reply to ``slots``' schema."""
    return max_json_chars(slots.bounded_schema()) + TOKEN_MARGIN


def scenario_messages(
    family: Family, leaf: Leaf, difficulty: Difficulty, seed: int
) -> list[dict[str, str]]:
    """The prompt for one candidate: the family, its slots and a theme drawn from the seed
    (the leaf's ``scenarios``, else the built-in themes); the leaf's ``personas`` as a hint."""
    assert family.slots is not None
    persona, scenario = persona_and_scenario(leaf, seed)
    theme = scenario or random.Random(seed ^ 0x7E3E).choice(themes())
    about = " ".join((family.slots.__doc__ or "").split())
    user = render(
        f"prompts/{SCENARIO_PROMPT}.j2",
        title=family.title,
        about=about,
        difficulty=difficulty.value,
        theme=theme,
        persona=persona,
        skill_description=leaf.skill.description,
        slots=slot_lines(family.slots),
    )
    return [
        {"role": "system", "content": render(f"prompts/{SCENARIO_SYSTEM_PROMPT}.j2")},
        {"role": "user", "content": user},
    ]


class ScenarioBackend(ConversingBackend):
    """Makes (and repairs) hybrid candidates: model-written content, family-built tasks."""

    # --- Backend protocol ------------------------------------------------------------
    def make(
        self, leaf: Leaf, difficulty: Difficulty, seed: int, task_id: str
    ) -> tuple[TaskSpec, LlmUsage]:
        family = slot_family(leaf)
        messages = scenario_messages(family, leaf, difficulty, seed)
        return self._fill(leaf, difficulty, seed, task_id, messages, SCENARIO_PROMPT)

    def repair(
        self, leaf: Leaf, spec: TaskSpec, certificate: Certificate
    ) -> tuple[TaskSpec, LlmUsage]:
        reason = (
            f"the task built from it was rejected ({certificate.outcome}): {certificate.reason}"
        )
        messages = [*self.history(spec.id), _repair_message(reason[:1500])]
        provenance = spec.config.provenance
        difficulty = Difficulty(spec.config.metadata.get("difficulty", "medium"))
        return self._fill(
            leaf,
            difficulty,
            provenance.seed or 0,
            spec.id,
            messages,
            f"{SCENARIO_PROMPT}+{SCENARIO_REPAIR_PROMPT}",
            call_seed=(provenance.seed or 0) + len(messages),
        )

    # --- internals ----------------------------------------------------------------------
    def _fill(
        self,
        leaf: Leaf,
        difficulty: Difficulty,
        seed: int,
        task_id: str,
        messages: list[dict[str, str]],
        prompt_version: str,
        call_seed: int | None = None,
    ) -> tuple[TaskSpec, LlmUsage]:
        """Ask for the content and build the task; unusable content goes back to the model
        with the reason (``parse_repairs`` times) before the candidate is rejected."""
        slots = slot_family(leaf).slots
        assert slots is not None
        model = self.client.settings.model
        known = {"prompt_version": prompt_version, "model": model}
        usage = LlmUsage()
        schema = slots.bounded_schema()
        outcome, error = QualityOutcome.UNPARSEABLE, ""
        for attempt in range(self.parse_repairs + 1):
            completion, messages = self.turn(
                task_id,
                messages,
                usage,
                known,
                schema=schema,
                max_tokens=reply_budget(slots),
                seed=(seed if call_seed is None else call_seed) + attempt,
            )
            try:
                data = extract_json(completion.text)
            except ValueError as exc:
                cut = " (the reply was cut off at max_tokens)" if _cut(completion) else ""
                outcome, error = QualityOutcome.UNPARSEABLE, f"not a JSON object: {exc}{cut}"
            else:
                try:
                    content = slots.model_validate(data)
                    spec = self._build(leaf, difficulty, seed, task_id, content, prompt_version)
                    return spec, usage
                except ValidationError as exc:
                    outcome, error = QualityOutcome.BAD_CONTENT, _first_error(exc)
                except ContentError as exc:
                    outcome, error = QualityOutcome.BAD_CONTENT, str(exc)
                except Exception as exc:  # noqa: BLE001 - a family failing on content rejects
                    outcome = QualityOutcome.BAD_CONTENT
                    error = f"the family could not use it ({type(exc).__name__}: {exc})"
            messages = [*messages, _repair_message(error)]
        raise GenerationError(
            f"no usable content after {self.parse_repairs + 1} tries: {error}",
            outcome,
            usage,
            **known,
        )

    def _build(
        self,
        leaf: Leaf,
        difficulty: Difficulty,
        seed: int,
        task_id: str,
        content: Slots,
        prompt_version: str,
    ) -> TaskSpec:
        """The family's task drawn from ``content`` with the candidate's seed."""
        family = slot_family(leaf)
        content.check_not_copied(family.title)
        family = family.with_content(content)
        params = {**family.default_params, **leaf.skill.params}
        params.pop("mode", None)
        origin = {
            "suite": self.suite,
            "prompt_version": prompt_version,
            "model": self.client.settings.model,
            "persona": content.persona,
            "scenario": content.scenario,
            "mode": SCENARIO_MODE,
            "content": content.model_dump(mode="json"),
        }
        spec = render_candidate(family, params, leaf, difficulty, seed, task_id, **origin)
        leaks = instruction_leaks(spec.instruction, spec.secrets)
        if leaks:
            raise ContentError(
                f"the scenario or the names give the answer away ({leaks[0]}); "
                "leave numbers and answers out"
            )
        return spec


def _repair_message(reason: str) -> dict[str, str]:
    return {
        "role": "user",
        "content": render(f"prompts/{SCENARIO_REPAIR_PROMPT}.j2", reason=reason),
    }


def _cut(completion: Completion) -> bool:
    return completion.finish_reason == "length"


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
    value: Any = first.get("input")
    shown = f" (you wrote {value!r:.80})" if isinstance(value, str | int | list) else ""
    return f"{loc}: {first.get('msg')}{shown}"
