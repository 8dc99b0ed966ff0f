"""Batched multi-turn rollouts: many episodes in step, one batched `generate` per turn.

Each episode keeps its own token sequence. The policy's generated tokens are appended as they
were sampled (mask 1: they train the model); the environment's observations are appended as
the chat template renders them (mask 0: they never train the model). Re-tokenising the whole
conversation each turn would drift from what was sampled; building the sequence this way does
not.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from factory.agent.chat_template import render_prompt
from factory.agent.harness import Episode, EpisodeResult


@dataclass
class TokenTrace:
    """The token sequence of one episode and which tokens the policy produced."""

    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)

    def extend(self, ids: list[int], policy: bool) -> None:
        self.ids.extend(ids)
        self.mask.extend([1 if policy else 0] * len(ids))

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
    """Drives episodes with a generator: ``generate(list of id lists) -> list of new id lists``."""

    def __init__(
        self,
        generate,
        tokenizer,
        *,
        max_episode_tokens: int,
        concurrency: int = 8,
        reply_prefix: str = "",
    ) -> None:
        self.generate = generate
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
            active = [i for i, e in enumerate(episodes) if not e.done]
            if not active:
                break
            mark = time.monotonic()
            outputs = self.generate([traces[i].ids for i in active])
            stats["generate_sec"] += time.monotonic() - mark
            stats["turns"] += len(active)
            replies = []
            for i, new_ids in zip(active, outputs, strict=True):
                stats["generated_tokens"] += len(new_ids)
                traces[i].extend(new_ids, policy=True)
                if not new_ids or new_ids[-1] != self.frame.eos_id:
                    traces[i].extend([self.frame.eos_id], policy=False)  # cut off: close the turn
                replies.append(
                    self.reply_prefix + self.tokenizer.decode(new_ids, skip_special_tokens=True)
                )
            mark = time.monotonic()
            observations = list(
                self.pool.map(
                    lambda pair: episodes[pair[0]].observe(pair[1]),
                    zip(active, replies, strict=True),
                )
            )
            stats["env_sec"] += time.monotonic() - mark
            for i, observation in zip(active, observations, strict=True):
                if observation is None:
                    continue
                traces[i].extend(
                    self._frame(episodes[i]).observation_ids(observation) + self.prefix_ids,
                    policy=False,
                )
                if len(traces[i].ids) >= self.max_episode_tokens:
                    episodes[i].done = True
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
