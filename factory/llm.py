"""The one module that talks to an LLM endpoint (any OpenAI-compatible server: vLLM,
llama.cpp's server, hosted APIs), through the `openai` client.

What it adds on top of a bare chat call:

* a concurrency limit (a semaphore shared by all threads);
* the SDK's own retries on 408, 409, 429, 5xx, timeouts and dropped connections: exponential
  backoff with jitter, or the wait the server asks for (``Retry-After``, ``retry-after-ms``);
* a run-wide budget of tokens and of cost (estimated from per-1k-token prices);
* an on-disk response cache keyed by (model, messages, parameters): a rerun costs nothing;
* structured output: a JSON schema is passed as ``response_format`` in the OpenAI
  ``json_schema`` form, falling back to the ``json_object`` + ``schema`` form (llama.cpp) and
  then to plain text, whichever the server accepts first. Long length bounds stay out of the
  schema on the wire (:func:`wire_schema`); the caller validates the parsed answer anyway.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory.errors import FactoryError
from factory.fsutil import write_text_atomic

log = logging.getLogger(__name__)


class LlmError(FactoryError):
    """The endpoint failed for good (after retries), or refused the request."""


class BudgetExceededError(LlmError):
    """The run's token or cost budget is spent."""


@dataclass
class LlmSettings:
    base_url: str
    """OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1."""
    model: str
    api_key: str = "not-needed"
    concurrency: int = 4
    timeout_sec: float = 300.0
    max_retries: int = 4
    max_tokens_budget: int | None = None
    """Prompt + completion tokens the whole run may use."""
    max_cost_usd: float | None = None
    price_prompt_per_1k: float = 0.0
    price_completion_per_1k: float = 0.0
    cache_dir: Path | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cached: bool = False
    finish_reason: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """The reply's tool calls in OpenAI's format (``id``, ``type``, ``function``: ``name`` and
    ``arguments`` as a JSON string); empty when it answered in text."""


_RESPONSE_FORMATS = ("json_schema", "json_object", "none")

# Servers that enforce a schema with a grammar (llama.cpp) spell ``maxLength: N`` as N nested
# optional characters and ``maxItems: N`` as N nested optional items: a 2,000-character bound made
# llama.cpp's grammar parser crash the whole server (SIGSEGV). Bounds above these are left to the
# caller's validation of the parsed answer (a too-long field gets a repair round, as any other).
WIRE_MAX_LENGTH = 100
WIRE_MAX_ITEMS = 32


def wire_schema(schema: Any) -> Any:
    """``schema`` as sent to the endpoint: the same, less ``maxLength`` above
    :data:`WIRE_MAX_LENGTH` and ``maxItems`` above :data:`WIRE_MAX_ITEMS` anywhere in it."""
    if isinstance(schema, list):
        return [wire_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        too_long = key == "maxLength" and isinstance(value, int) and value > WIRE_MAX_LENGTH
        too_many = key == "maxItems" and isinstance(value, int) and value > WIRE_MAX_ITEMS
        if not (too_long or too_many):
            out[key] = wire_schema(value)
    return out


class LlmClient:
    """Thread-safe chat completions with retries, budget and cache."""

    def __init__(self, settings: LlmSettings) -> None:
        import openai  # lazily: only the LLM backend needs it

        self.settings = settings
        self._openai = openai
        self._client = _retrying_client(openai)(
            base_url=settings.base_url,
            api_key=settings.api_key,
            timeout=settings.timeout_sec,
            max_retries=settings.max_retries,
        )
        self._slots = threading.Semaphore(max(1, settings.concurrency))
        self._lock = threading.Lock()
        self.tokens_used = 0
        self.cost_used = 0.0
        self._format = 0  # index into _RESPONSE_FORMATS: the first form the server accepted

    # --- public ---------------------------------------------------------------------
    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: dict[str, Any] | None = None,
        temperature: float = 0.7,
        max_tokens: int = 2048,
        seed: int | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Completion:
        """One chat completion. ``tools`` (OpenAI's format) lets the model answer with tool
        calls (``tool_choice`` auto); ``messages`` may then hold its earlier calls and the
        ``role: tool`` results."""
        params: dict[str, Any] = {
            "temperature": temperature,
            "max_tokens": max_tokens,
            "seed": seed,
        }
        if tools:
            params["tools"] = tools
        key = self._cache_key(messages, schema, params)
        cached = self._cache_get(key)
        if cached is not None:
            return cached
        self._check_budget()
        with self._slots:
            completion = self._call_with_retries(messages, schema, params)
        with self._lock:
            self.tokens_used += completion.prompt_tokens + completion.completion_tokens
            self.cost_used += completion.cost_usd
        self._cache_put(key, completion)
        return completion

    # --- internals --------------------------------------------------------------------
    def _check_budget(self) -> None:
        s = self.settings
        with self._lock:
            if s.max_tokens_budget is not None and self.tokens_used >= s.max_tokens_budget:
                raise BudgetExceededError(f"token budget of {s.max_tokens_budget} is spent")
            if s.max_cost_usd is not None and self.cost_used >= s.max_cost_usd:
                raise BudgetExceededError(f"cost budget of ${s.max_cost_usd:.2f} is spent")

    def _call_with_retries(self, messages, schema, params) -> Completion:
        """One completion; the SDK retries transient failures, this turns the final one (and
        any refusal) into :class:`LlmError`."""
        openai = self._openai
        tries = self.settings.max_retries + 1
        try:
            return self._call(messages, schema, params)
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise LlmError(
                f"{self.settings.base_url}: gave up after {tries} tries: {exc}"
            ) from None
        except openai.APIStatusError as exc:
            if _transient(exc):
                raise LlmError(
                    f"{self.settings.base_url}: gave up after {tries} tries: "
                    f"{exc.status_code}: {exc.message}"
                ) from None
            raise LlmError(f"{self.settings.base_url}: {exc.status_code}: {exc.message}") from None

    def _call(self, messages, schema, params) -> Completion:
        openai = self._openai
        while True:
            index = self._format
            form = _RESPONSE_FORMATS[index] if schema else "none"
            kwargs: dict[str, Any] = {
                "model": self.settings.model,
                "messages": messages,
                "temperature": params["temperature"],
                "max_tokens": params["max_tokens"],
            }
            if params["seed"] is not None:
                kwargs["seed"] = params["seed"]
            if params.get("tools"):
                kwargs["tools"] = params["tools"]
                kwargs["tool_choice"] = "auto"  # llama.cpp ignores tools without it
            if form == "json_schema":
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": "response",
                        "schema": wire_schema(schema),
                        "strict": False,
                    },
                }
            elif form == "json_object":
                kwargs["response_format"] = {"type": "json_object", "schema": wire_schema(schema)}
            if self.settings.extra_body:
                kwargs["extra_body"] = self.settings.extra_body
            try:
                response = self._client.chat.completions.create(**kwargs)
            except openai.APIStatusError as exc:
                # Servers refuse an unknown response_format with 400, 422 or even 500 (llama.cpp).
                refused = exc.status_code in (400, 422) or "response_format" in str(exc)
                if refused and form != "none" and self._format + 1 < len(_RESPONSE_FORMATS):
                    log.info(
                        "server refused response_format %s (%s); trying the next form", form, exc
                    )
                    self._format += 1
                    continue
                raise
            return self._completion(response)

    def _completion(self, response) -> Completion:
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content or "") if choice is not None else ""
        usage = getattr(response, "usage", None)
        prompt = getattr(usage, "prompt_tokens", 0) or 0
        completion = getattr(usage, "completion_tokens", 0) or 0
        cost = (
            prompt * self.settings.price_prompt_per_1k
            + completion * self.settings.price_completion_per_1k
        ) / 1000
        calls = getattr(choice.message, "tool_calls", None) if choice is not None else None
        return Completion(
            text,
            prompt,
            completion,
            cost,
            False,
            getattr(choice, "finish_reason", None),
            [_tool_call(call) for call in calls or []],
        )

    def _cache_key(self, messages, schema, params) -> str:
        blob = json.dumps(
            {
                "model": self.settings.model,
                "messages": messages,
                "schema": schema,
                "params": params,
                "extra": self.settings.extra_body,
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    def _cache_get(self, key: str) -> Completion | None:
        if self.settings.cache_dir is None:
            return None
        path = self.settings.cache_dir / key[:2] / f"{key}.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return Completion(
            data["text"],
            data.get("prompt_tokens", 0),
            data.get("completion_tokens", 0),
            0.0,
            True,
            data.get("finish_reason"),
            data.get("tool_calls", []),
        )

    def _cache_put(self, key: str, completion: Completion) -> None:
        if self.settings.cache_dir is None:
            return
        path = self.settings.cache_dir / key[:2] / f"{key}.json"
        write_text_atomic(
            path,
            json.dumps(
                {
                    "text": completion.text,
                    "prompt_tokens": completion.prompt_tokens,
                    "completion_tokens": completion.completion_tokens,
                    "finish_reason": completion.finish_reason,
                    **({"tool_calls": completion.tool_calls} if completion.tool_calls else {}),
                }
            ),
        )


@functools.cache
def _retrying_client(openai: Any) -> type:
    """The SDK's client, retrying as it does (backoff, ``Retry-After``) except a 5xx that
    names ``response_format``: llama.cpp refuses a format it does not know with a 500, and
    that refusal is an answer (try the next form), not a busy server. If a future SDK stops
    consulting ``_should_retry``, refusals are merely retried before the next form is tried."""

    class RetryingClient(openai.OpenAI):
        def _should_retry(self, response: Any) -> bool:
            if response.status_code >= 500:
                try:
                    body = response.read()
                except Exception:  # noqa: BLE001 - a body we cannot read is no refusal
                    body = b""
                if b"response_format" in body:
                    return False
            return super()._should_retry(response)

    return RetryingClient


def _tool_call(call: Any) -> dict[str, Any]:
    function = getattr(call, "function", None)
    return {
        "id": getattr(call, "id", None) or "",
        "type": "function",
        "function": {
            "name": getattr(function, "name", "") or "",
            "arguments": getattr(function, "arguments", "") or "",
        },
    }


def _transient(exc: Exception) -> bool:
    """A failure the SDK retries (the server was busy or broken, not the request)."""
    status = getattr(exc, "status_code", None)
    return status in (408, 409, 429) or (status is not None and status >= 500)


def api_key_from_env(variable: str) -> str:
    """The API key from ``variable``; local servers accept any, so a placeholder otherwise."""
    return os.environ.get(variable) or "not-needed"
