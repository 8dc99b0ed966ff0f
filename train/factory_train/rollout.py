"""Batched multi-turn rollouts: many episodes in step, one batched sampling call per turn.

Each episode keeps its own token sequence. The policy's sampled tokens are appended as they
were sampled, with the sampler's log-probs (mask 1: they train the model); the environment's
observations are appended as the chat template renders them (mask 0: they never train the
model). Re-tokenising the whole conversation each turn would drift from what was sampled;
building the sequence this way does not. No token is ever made up: a reply cut at its token
budget (``max_new_tokens``, or what is left of ``max_episode_tokens``) has no end-of-turn
token, so its commands still run but the episode ends there.

Episodes are any objects with the interface of :class:`factory.agent.harness.Episode`
(``start``, ``observe``, ``done``, ``finish``): Docker containers, in-process tool domains, or
Ray-hosted containers.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from factory.agent.chat_template import render_prompt
from factory.agent.harness import Episode, EpisodeResult


@dataclass
class TokenTrace:
    """The token sequence of one episode, which tokens the policy sampled, and the sampler's
    log-prob of each of those (0 elsewhere)."""

    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    truncated_turns: int = 0
    """Replies cut at their token budget."""

    def extend(self, ids: list[int], policy: bool, logprobs: list[float] | None = None) -> None:
        if policy and (logprobs is None or len(logprobs) != len(ids)):
            raise ValueError("sampled tokens need the sampler's log-prob of each token")
        self.ids.extend(ids)
        self.mask.extend([1 if policy else 0] * len(ids))
        self.logprobs.extend(logprobs if policy else [0.0] * len(ids))

    @property
    def policy_tokens(self) -> int:
        return sum(self.mask)


@dataclass
class Rollout:
    episode: EpisodeResult
    trace: TokenTrace
    group: int
    """Index of the task group this rollout belongs to."""
    advantage: float = 0.0
    """Set by the trainer: the episode's reward normalised within its group."""


class ChatFrame:
    """How the tokenizer's chat template frames an observation after an assistant turn."""

    _REPLY, _OBS = "XQZREPLY7531", "XQZOBS8642"

    def __init__(self, tokenizer, observation_role: str = "user") -> None:
        self.tokenizer = tokenizer
        self.eos_id = tokenizer.eos_token_id
        base = [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "u"},
            {"role": "assistant", "content": self._REPLY},
        ]
        full = tokenizer.apply_chat_template(
            [*base, {"role": observation_role, "content": self._OBS}],
            tokenize=False,
            add_generation_prompt=True,
        )
        after = full[full.index(self._REPLY) + len(self._REPLY) :]
        eos_text = tokenizer.decode([self.eos_id]) if self.eos_id is not None else ""
        if eos_text and after.startswith(eos_text):
            after = after[len(eos_text) :]
        self.before_obs, self.after_obs = after.split(self._OBS)

    def prompt_ids(self, messages: list[dict], tools: list[dict] | None = None) -> list[int]:
        text = render_prompt(self.tokenizer, messages, tools)  # tools: the tool-call format
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def observation_ids(self, observation: str) -> list[int]:
        text = self.before_obs + observation + self.after_obs
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]


class RolloutEngine:
    """Drives episodes with a sampler: ``sample(prompts, budgets) -> list of Sample``
    (:class:`factory_train.generation.HFSampler`)."""

    def __init__(
        self,
        sample,
        tokenizer,
        *,
        max_episode_tokens: int,
        concurrency: int = 8,
        reply_prefix: str = "",
    ) -> None:
        self.sample = sample
        self.tokenizer = tokenizer
        self.frame = ChatFrame(tokenizer)
        self._tool_frame: ChatFrame | None = None  # tool-call format: results as role "tool"
        self.max_episode_tokens = max_episode_tokens
        # Text every policy turn starts with, given rather than generated (e.g. an opening
        # ```bash fence that a small model then only has to complete).
        self.reply_prefix = reply_prefix
        self.prefix_ids = (
            tokenizer(reply_prefix, add_special_tokens=False)["input_ids"] if reply_prefix else []
        )
        self.pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="rollout")

    def run(
        self, episodes: list[Episode], groups: list[int]
    ) -> tuple[list[Rollout], dict[str, float]]:
        stats = {"generated_tokens": 0, "generate_sec": 0.0, "env_sec": 0.0, "turns": 0}
        started = time.monotonic()
        openings = list(self.pool.map(lambda e: e.start(), episodes))
        traces = [TokenTrace() for _ in episodes]
        for episode, trace, messages in zip(episodes, traces, openings, strict=True):
            prompt = self._frame(episode).prompt_ids(messages, episode.tools or None)
            trace.extend(prompt + self.prefix_ids, policy=False)
        stats["env_sec"] += time.monotonic() - started
        while True:
            for i, episode in enumerate(episodes):
                if not episode.done and self.max_episode_tokens - len(traces[i].ids) <= 0:
                    episode.done = True  # no room for another reply
            active = [i for i, e in enumerate(episodes) if not e.done]
            if not active:
                break
            mark = time.monotonic()
            samples = self.sample(
                [traces[i].ids for i in active],
                [self.max_episode_tokens - len(traces[i].ids) for i in active],
            )
            stats["generate_sec"] += time.monotonic() - mark
            stats["turns"] += len(active)
            replies = []
            for i, sample in zip(active, samples, strict=True):
                stats["generated_tokens"] += len(sample.ids)
                traces[i].extend(sample.ids, policy=True, logprobs=sample.logprobs)
                traces[i].truncated_turns += int(sample.truncated)
                replies.append(
                    self.reply_prefix + self.tokenizer.decode(sample.ids, skip_special_tokens=True)
                )
            mark = time.monotonic()
            observations = list(
                self.pool.map(
                    lambda pair: episodes[pair[0]].observe(pair[1]),
                    zip(active, replies, strict=True),
                )
            )
            stats["env_sec"] += time.monotonic() - mark
            for i, sample, observation in zip(active, samples, observations, strict=True):
                if sample.truncated:
                    episodes[i].done = True  # the turn never ended: nothing may follow it
                if observation is None or episodes[i].done:
                    continue
                traces[i].extend(
                    self._frame(episodes[i]).observation_ids(observation) + self.prefix_ids,
                    policy=False,
                )
        mark = time.monotonic()
        results = list(self.pool.map(lambda e: e.finish(), episodes))
        stats["env_sec"] += time.monotonic() - mark
        stats["rollout_sec"] = time.monotonic() - started
        rollouts = [Rollout(r, t, g) for r, t, g in zip(results, traces, groups, strict=True)]
        return rollouts, stats

    def _frame(self, episode: Episode) -> ChatFrame:
        if not episode.tools:
            return self.frame
        if self._tool_frame is None:
            self._tool_frame = ChatFrame(self.tokenizer, observation_role="tool")
        return self._tool_frame

    def close(self) -> None:
        self.pool.shutdown(wait=True)
