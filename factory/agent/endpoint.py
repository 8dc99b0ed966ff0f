"""A policy behind an OpenAI-compatible endpoint (vLLM, llama.cpp's server, a hosted API),
through :mod:`factory.llm` (retries, concurrency limit, budget, response cache).

The endpoint returns text, so the episode uses the fenced action format (one ```bash block
per reply, no block = done). Each episode gets its own sampling seed, so k episodes of one
task are k samples, and a rerun with the same seeds is answered from the cache.
"""

from __future__ import annotations

from pathlib import Path

from factory.agent.harness import Episode, EpisodeResult, HarnessConfig, ReplyPolicy
from factory.llm import LlmClient, LlmError
from factory.runtime import DockerRuntime
from factory.tasks.model import Task


class EndpointPolicy(ReplyPolicy):
    """Answers a conversation with one chat completion per turn."""

    def __init__(
        self,
        client: LlmClient,
        *,
        temperature: float = 0.7,
        max_tokens: int = 512,
        seed: int | None = None,
    ) -> None:
        self.client = client
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed

    def reply(self, messages: list[dict]) -> tuple[str, list[dict] | None]:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        plain = [{"role": m["role"], "content": m.get("content") or ""} for m in messages]
        completion = self.client.complete(
            plain,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=None if self.seed is None else self.seed + turn,
        )
        return completion.text, None


def run_policy_episode(
    runtime: DockerRuntime,
    task: Task,
    image: str,
    policy: ReplyPolicy,
    config: HarnessConfig,
    log_dir: Path | None = None,
) -> EpisodeResult:
    """One episode; an endpoint that fails for good ends it as an infrastructure failure
    (reward None), and the container is removed on every path."""
    episode = Episode(runtime, task, image, config, log_dir)
    messages = episode.start()
    try:
        while not episode.done:
            text, tool_calls = policy.reply(messages)
            episode.observe(text, tool_calls)
            messages = episode.messages
    except LlmError as exc:
        episode.infra_error = episode.infra_error or f"policy endpoint: {exc}"
        episode.done = True
    except BaseException:
        episode.done = True
        if episode.box is not None:
            episode.box.close()
        raise
    return episode.finish()
