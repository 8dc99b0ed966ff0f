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

Each slot is checked on its own (:meth:`Slots.salvage`). A reply that is no JSON object, a slot
its validators refuse or that only echoes the prompt, a slot the family cannot use
(:class:`ContentError` naming it) or one that gives an answer away goes back to the model with
the reason (``parse_repairs`` times); the usable slots of every reply are kept, and a slot no
reply filled usably is drafted from the family's own vocabulary instead, so one bad slot does
not cost the candidate. It is rejected (``unparseable`` or ``bad_content``), never a crash, when
no reply parsed, when the model filled fewer than half of the family's own slots, or when the
family cannot build from the content at all. A candidate that fails certification goes back
with the verdict (``--repair-rounds``). Provenance (``[metadata.factory]``) records the model,
the prompt version, exactly the slots the model filled and their content (with the seed it
reproduces the task), and a note per slot drafted from the family's content.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

from factory.families import registry
from factory.families.base import Family
from factory.families.slots import ContentError, Slots, max_json_chars, slot_lines
from factory.generate.certify import Certificate
from factory.generate.conversation import ConversingBackend, cut_note, prompt_message
from factory.generate.llm_backend import extract_json
from factory.generate.pipeline import GenerationError, persona_and_scenario
from factory.generate.procedural import render_candidate
from factory.generate.results import LlmUsage, QualityOutcome
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import SCENARIO_MODE, Difficulty, Leaf
from factory.quality.leaks import instruction_leaks
from factory.resources import templates_dir

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
    return [
        prompt_message("system", SCENARIO_SYSTEM_PROMPT),
        prompt_message(
            "user",
            SCENARIO_PROMPT,
            title=family.title,
            about=about,
            difficulty=difficulty.value,
            theme=theme,
            persona=persona,
            skill_description=leaf.skill.description,
            slots=slot_lines(family.slots),
        ),
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
        """Ask for the content and build the task.

        Each slot is checked on its own (:meth:`Slots.salvage`). When some cannot be used, the
        reasons go back to the model (``parse_repairs`` times); a later reply's usable slots
        replace the earlier ones, and slots no reply filled usably are drafted from the
        family's own vocabulary. The candidate is rejected only when no reply parsed or the
        model filled too few of the family's own slots (:func:`enough`); provenance records
        exactly the slots the model filled."""
        family = slot_family(leaf)
        slots = family.slots
        assert slots is not None
        model = self.client.settings.model
        known = {"prompt_version": prompt_version, "model": model}
        usage = LlmUsage()
        schema = slots.bounded_schema()
        outcome, error = QualityOutcome.UNPARSEABLE, ""
        unparsed = 0
        usable: dict[str, Any] = {}
        problems: dict[str, str] = {}
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
                unparsed += 1
                error = f"not a JSON object: {exc}{cut_note(completion)}"
                messages = [*messages, _repair_message(error)]
                continue
            outcome = QualityOutcome.BAD_CONTENT
            salvage = slots.salvage(data, family.title)
            usable.update(salvage.values)
            problems = {k: v for k, v in salvage.problems.items() if k not in usable}
            if not salvage.problems:
                try:
                    spec, dropped = self._build(
                        leaf, difficulty, seed, task_id, salvage.values, prompt_version
                    )
                except ContentError as exc:
                    error = str(exc)
                else:
                    if not dropped:
                        return _unparsed_note(spec, unparsed), usage
                    error = "; ".join(dropped.values())
            else:
                error = "; ".join(salvage.problems.values())
            messages = [*messages, _repair_message(error)]
        if outcome is QualityOutcome.BAD_CONTENT:
            # the usable slots; should the family fail on them as a whole, without each of
            # the family's own slots in turn
            own = [name for name in usable if name not in Slots.model_fields]
            for without in [None, *own]:
                content = {k: v for k, v in usable.items() if k != without}
                unusable = dict(problems)
                if without is not None:
                    unusable[without] = f"{without}: {error}"
                try:
                    spec, dropped = self._build(
                        leaf, difficulty, seed, task_id, content, prompt_version, unusable
                    )
                except ContentError as exc:
                    if without is None:
                        error = str(exc)
                    continue
                if enough(slots, spec.config.provenance.slots):
                    return _unparsed_note(spec, unparsed), usage
                missing = {**unusable, **dropped}
                error = "too few usable slots: " + "; ".join(missing.values())
                break
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
        content: dict[str, Any],
        prompt_version: str,
        problems: dict[str, str] | None = None,
    ) -> tuple[TaskSpec, dict[str, str]]:
        """The family's task drawn from ``content`` (the usable slots) with the candidate's
        seed, and the slots dropped on the way with the reason: a slot the family's draft
        refuses (:class:`ContentError` naming it) or a scenario or persona that gives an
        answer away is drafted from the family's own content instead. ``problems``: the
        slots already unusable, for the provenance's notes."""
        order = list(slot_family(leaf).slots.model_fields)  # type: ignore[union-attr]
        content = {name: content[name] for name in order if name in content}
        dropped: dict[str, str] = {}
        while True:
            family = slot_family(leaf).with_content(content)
            params = family.params_with(leaf.skill.params)
            params.pop("mode", None)
            persona, scenario = persona_and_scenario(leaf, seed)
            origin = {
                "suite": self.suite,
                "prompt_version": prompt_version,
                "model": self.client.settings.model,
                "persona": content.get("persona", persona),
                "scenario": content.get("scenario", scenario),
                "mode": SCENARIO_MODE,
                "content": content,
            }
            try:
                spec = render_candidate(family, params, leaf, difficulty, seed, task_id, **origin)
            except ContentError as exc:
                if exc.slot not in content:
                    raise
                dropped[exc.slot] = str(exc)
                del content[exc.slot]
                continue
            except Exception as exc:  # noqa: BLE001 - a family failing on content rejects
                raise ContentError(
                    f"the family could not use it ({type(exc).__name__}: {exc})"
                ) from None
            leaks = instruction_leaks(spec.instruction, spec.secrets)
            culprits = _leaking_slots(content, spec) if leaks else []
            if culprits:
                for slot in culprits:
                    dropped[slot] = (
                        f"{slot}: it gives the answer away ({leaks[0]}); "
                        "leave numbers and answers out"
                    )
                    del content[slot]
                continue
            if leaks:
                raise ContentError(
                    f"the names give the answer away ({leaks[0]}); leave numbers and answers out"
                )
            fallbacks = {**(problems or {}), **dropped}
            if fallbacks:
                provenance = spec.config.provenance
                provenance.notes += [
                    f"slot {slot} drafted from the family's own content: the model's value "
                    f"could not be used ({reason})"[:300]
                    for slot, reason in fallbacks.items()
                ]
                spec.config.set_provenance(provenance)
            return spec, dropped


def _leaking_slots(content: dict[str, Any], spec: TaskSpec) -> list[str]:
    """The slots whose text mentions an answer the instruction gives away."""
    leaked = [s for s in spec.secrets if instruction_leaks(spec.instruction, [s])]
    return [
        name
        for name, value in content.items()
        if instruction_leaks(" ".join(value) if isinstance(value, list) else str(value), leaked)
    ]


def _unparsed_note(spec: TaskSpec, unparsed: int) -> TaskSpec:
    """``spec`` with a provenance note of how many of the model's replies did not parse."""
    if unparsed:
        provenance = spec.config.provenance
        provenance.notes.append(f"replies that were no JSON object: {unparsed}")
        spec.config.set_provenance(provenance)
    return spec


def enough(slots: type[Slots], filled: list[str]) -> bool:
    """Whether the model filled enough of a family's own slots (those beyond the scenario and
    the persona) for the candidate to count as hybrid: at least half of them, rounded up."""
    own = [name for name in slots.model_fields if name not in Slots.model_fields]
    return 2 * sum(name in filled for name in own) >= len(own)


def _repair_message(reason: str) -> dict[str, str]:
    return prompt_message("user", SCENARIO_REPAIR_PROMPT, reason=reason)
