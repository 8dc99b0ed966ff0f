"""What the model-backed backends share: the client and its sampling, how often a reply that
cannot be used goes back to the model, and each candidate's conversation (kept for repairs)."""

from __future__ import annotations

from typing import Any

from factory.generate.pipeline import GenerationError
from factory.generate.results import LlmUsage
from factory.llm import BudgetExceededError, Completion, LlmClient, LlmError
from factory.templating import render


def ask(
    client: LlmClient,
    messages: list[dict[str, str]],
    usage: LlmUsage,
    known: dict[str, str | None],
    **request: Any,
) -> Completion:
    """One completion, its cost added to ``usage``; a spent budget or a failing endpoint
    becomes a :class:`GenerationError` carrying ``usage`` and the ``known`` provenance."""
    try:
        completion = client.complete(messages, **request)
    except BudgetExceededError as exc:
        raise GenerationError(str(exc), usage=usage, **known) from None
    except LlmError as exc:
        raise GenerationError(f"the endpoint failed: {exc}", usage=usage, **known) from None
    usage.add(usage_of(completion))
    return completion


def prompt_message(role: str, prompt: str, **values: Any) -> dict[str, str]:
    """A chat message whose content is the template ``prompts/<prompt>.j2`` given ``values``."""
    return {"role": role, "content": render(f"prompts/{prompt}.j2", **values)}


def cut_note(completion: Completion) -> str:
    """What a parse error adds when the reply ended at its token limit (else nothing)."""
    return " (the reply was cut off at max_tokens)" if completion.finish_reason == "length" else ""


def usage_of(completion: Completion) -> LlmUsage:
    """What one completion cost."""
    return LlmUsage(
        calls=0 if completion.cached else 1,
        cached_calls=1 if completion.cached else 0,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        cost_usd=completion.cost_usd,
    )


class ConversingBackend:
    """Base of :class:`~factory.generate.llm_backend.LlmBackend` and
    :class:`~factory.generate.scenario.ScenarioBackend`."""

    def __init__(
        self,
        client: LlmClient,
        suite: str,
        *,
        temperature: float = 0.7,
        parse_repairs: int = 1,
    ) -> None:
        self.client = client
        self.suite = suite
        self.temperature = temperature
        self.parse_repairs = parse_repairs
        """Times a reply that cannot be used goes back to the model with the reason."""
        self._conversations: dict[str, list[dict[str, str]]] = {}

    def history(self, task_id: str) -> list[dict[str, str]]:
        """The conversation that made ``task_id`` (a repair continues it)."""
        history = self._conversations.get(task_id)
        if history is None:
            raise GenerationError("no conversation to repair")
        return history

    def turn(
        self,
        task_id: str,
        messages: list[dict[str, str]],
        usage: LlmUsage,
        known: dict[str, str | None],
        **request: Any,
    ) -> tuple[Completion, list[dict[str, str]]]:
        """One completion at the backend's temperature; the conversation, reply included, is
        kept as ``task_id``'s and returned."""
        completion = ask(
            self.client, messages, usage, known, temperature=self.temperature, **request
        )
        messages = [*messages, {"role": "assistant", "content": completion.text}]
        self._conversations[task_id] = messages
        return completion, messages
