"""A policy behind an OpenAI-compatible endpoint (vLLM, llama.cpp's server, a hosted API),
through :mod:`factory.llm` (retries, concurrency limit, budget, response cache).

In the fenced format the endpoint answers in text (one ```bash block per reply, no block =
done); in the tool-call format it is offered the episode's tools (``tools=``, bash and the
task's MCP tools) and answers with structured tool calls, whose results come back as
``role: tool`` messages. Each episode gets its own sampling seed, so k episodes of one task are
k samples, and a rerun with the same seeds is answered from the cache.
"""

from __future__ import annotations

import hashlib
from dataclasses import KW_ONLY, dataclass

from factory.agent.harness import ReplyPolicy
from factory.llm import LlmClient

_MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


@dataclass(eq=False)
class EndpointPolicy(ReplyPolicy):
    """Answers a conversation with one chat completion per turn."""

    client: LlmClient
    _: KW_ONLY
    temperature: float = 0.7
    max_tokens: int = 512
    seed: int | None = None
    """Turn t of an episode is sampled with seed + t (None: unseeded)."""

    def reply(
        self, messages: list[dict], tools: list[dict] | None = None
    ) -> tuple[str, list[dict] | None]:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        completion = self.client.complete(
            [_wire(m) for m in messages],
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=None if self.seed is None else self.seed + turn,
            tools=tools or None,
        )
        return completion.text, completion.tool_calls or None


def _wire(message: dict) -> dict:
    """A message as the chat API takes it (no harness-only keys; content never missing)."""
    out = {k: message[k] for k in _MESSAGE_KEYS if message.get(k) is not None}
    out["content"] = message.get("content") or ""
    return out


def episode_seed(key: str, index: int, base: int = 0) -> int:
    """The sampling seed of episode ``index`` of task ``key`` (stable across runs)."""
    digest = hashlib.sha256(f"{base}:{key}:{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")
