"""Simulated customers for tool-domain episodes (tau2-bench style): the agent talks to one with
``say`` and gets its reply as the observation.

* :class:`ScriptedUser` — deterministic replies from the profile's script (keyed by the reply's
  number or by what the agent asked); for tests and for runs without an endpoint.
* :class:`LlmUser` — a model behind any OpenAI-compatible endpoint (through
  :mod:`factory.llm`), given the hidden goal and facts and told to reveal them only as asked.

Both answer from the conversation so far (the customer's opening, then the agent's messages
and the customer's replies, in order) and say where each reply came from (:class:`UserKind`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from factory.tasks.user_profile import UserProfile

if TYPE_CHECKING:
    from factory.llm import LlmClient

STOP = "###STOP###"
"""What a customer says (in a reply) when the conversation is over for them."""


class UserKind(str, Enum):
    """Where a simulated customer's replies come from."""

    SCRIPTED = "scripted"
    LLM = "llm"


@dataclass(frozen=True)
class Utterance:
    """One message of the agent-customer conversation, as the transcript records it."""

    role: str
    """``agent`` or ``user``."""
    content: str
    source: str = ""
    """For the customer's messages: the :class:`UserKind` value (``opening``: from the profile)."""
    completion_tokens: int = 0
    """For an LLM customer's reply: tokens the endpoint generated for it."""
    actions: tuple[str, ...] = ()
    """Dual control: the customer's own tools they used with this reply, in order."""

    def to_json(self) -> dict:
        out: dict = {"role": self.role, "content": self.content}
        if self.source:
            out["source"] = self.source
        if self.completion_tokens:
            out["completion_tokens"] = self.completion_tokens
        if self.actions:
            out["actions"] = list(self.actions)
        return out


class UserSimulator:
    """A customer: :meth:`reply` answers the conversation so far (ending with the agent's
    message)."""

    kind: UserKind

    def __init__(self, profile: UserProfile) -> None:
        self.profile = profile

    def reply(self, conversation: list[Utterance]) -> Utterance:  # pragma: no cover
        raise NotImplementedError


class ScriptedUser(UserSimulator):
    """Replies from the profile's script: the first rule for this reply's number or matching
    the agent's last message, else the profile's ``default_reply``."""

    kind = UserKind.SCRIPTED

    def reply(self, conversation: list[Utterance]) -> Utterance:
        number = sum(1 for u in conversation if u.role == "user" and u.source != "opening") + 1
        asked = next((u.content for u in reversed(conversation) if u.role == "agent"), "")
        for rule in self.profile.script:
            if rule.turn == number or (
                rule.when is not None and re.search(rule.when, asked, re.IGNORECASE)
            ):
                acts = (rule.act,) if rule.act else ()
                return Utterance("user", rule.reply, self.kind.value, actions=acts)
        return Utterance("user", self.profile.default_reply, self.kind.value)


SYSTEM = """You play a customer talking to a {title} customer-service agent in a chat.
Stay in that role: write only the customer's next message, in one or two short sentences.

What you want (the agent does not know it yet): {goal}

What you know, to give only when the agent asks for it, one piece at a time:
{facts}

Do not invent other facts. Do not do the agent's work. When the agent has dealt with
everything you want, or you have nothing more to say, end your message with {stop}."""

ACTIONS = """
On your phone you can do these things yourself, and only these; do one only when the agent asks
you to, by writing its name in double brackets in your message (e.g. [[{example}]]):
{actions}"""
_ACTION = re.compile(r"\[\[\s*([A-Za-z_][A-Za-z0-9_]*)\s*\]\]")


class LlmUser(UserSimulator):
    """A customer played by the model behind ``client``: the profile's goal and facts in its
    system prompt, the agent's messages as ``user`` turns and its own as ``assistant`` turns
    (the opening first). Sampling is seeded per reply, so a rerun with a cache is free."""

    kind = UserKind.LLM

    def __init__(
        self,
        profile: UserProfile,
        client: LlmClient,
        *,
        title: str = "support",
        temperature: float = 0.0,
        max_tokens: int = 96,
        seed: int = 0,
    ) -> None:
        super().__init__(profile)
        self.client = client
        self.title = title
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed

    def system_prompt(self) -> str:
        facts = "\n".join(f"- {k}: {v}" for k, v in self.profile.facts.items()) or "- (nothing)"
        prompt = SYSTEM.format(title=self.title, goal=self.profile.goal, facts=facts, stop=STOP)
        if self.profile.actions:
            listed = "\n".join(f"- {k}: {v}" for k, v in self.profile.actions.items())
            prompt += ACTIONS.format(example=next(iter(self.profile.actions)), actions=listed)
        return prompt

    def messages(self, conversation: list[Utterance]) -> list[dict]:
        """The chat the model answers: the customer is the assistant here."""
        out = [{"role": "system", "content": self.system_prompt()}]
        for utterance in conversation:
            role = "assistant" if utterance.role == "user" else "user"
            out.append({"role": role, "content": utterance.content})
        return out

    def reply(self, conversation: list[Utterance]) -> Utterance:
        number = sum(1 for u in conversation if u.role == "user")
        completion = self.client.complete(
            self.messages(conversation),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed + number,
        )
        text = completion.text.strip()
        acts = tuple(a for a in _ACTION.findall(text) if a in self.profile.actions)
        if acts:  # the markers are the customer's doing, not words the agent reads
            text = _ACTION.sub("", text).strip()
        return Utterance("user", text, self.kind.value, completion.completion_tokens, actions=acts)
