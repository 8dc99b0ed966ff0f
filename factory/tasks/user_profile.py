"""The simulated customer of a tool task: ``tests/user.json`` (hidden from the agent, like the
rest of ``tests/``). A task that opts into a simulated user (a tool family's ``user:
simulated``) shows the agent only the customer's first message; the goal and the facts stay
with the simulator, which reveals them as the agent asks (:mod:`factory.agent.user_sim`).
``communicate`` lists what the agent must tell the customer (:mod:`factory.agent.communicate`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from factory.errors import TaskFormatError

USER_FILE = "user.json"
"""The profile's name in a task's ``tests/``."""


class ScriptRule(BaseModel):
    """One scripted reply: used on the customer's ``turn``-th reply, or when the agent's message
    matches ``when``; the first rule that applies wins."""

    model_config = ConfigDict(extra="forbid")

    turn: int | None = Field(default=None, ge=1)
    """The customer's reply number it answers (1: the reply to the agent's first message)."""
    when: str | None = None
    """A regular expression searched (case-insensitively) in the agent's message."""
    reply: str
    """What the customer says."""
    act: str | None = None
    """Dual control: a tool on the customer's side (``actions``) they use before replying."""


class RequiredFact(BaseModel):
    """A fact the agent must tell the customer (e.g. a new reservation's code)."""

    model_config = ConfigDict(extra="forbid")

    fact: str
    """What it is, in words (shown when the check fails)."""
    any_of: list[str] = Field(min_length=1)
    """Spellings that count (matched case-insensitively, whitespace collapsed)."""


class UserProfile(BaseModel):
    """The customer: what they say first, what they want, what they know, what they must be
    told."""

    model_config = ConfigDict(extra="forbid")

    opening: str
    """The customer's first message (the agent sees it in the instruction)."""
    goal: str
    """What the customer wants, in full (hidden from the agent)."""
    facts: dict[str, str] = Field(default_factory=dict)
    """What the customer knows and gives only when asked (e.g. ``user id``)."""
    script: list[ScriptRule] = Field(default_factory=list)
    """The scripted customer's replies (:class:`~factory.agent.user_sim.ScriptedUser`)."""
    default_reply: str = "Is there anything else you need from me?"
    """The scripted customer's reply when no rule applies."""
    communicate: list[RequiredFact] = Field(default_factory=list)
    """What the agent must tell the customer for the task to count as solved."""
    actions: dict[str, str] = Field(default_factory=dict)
    """Dual control: the tools on the customer's side (name -> what it does); the agent cannot
    call them, the customer uses them when asked (:mod:`factory.toolenv.dual`)."""
    reply_path: str | None = None
    """Where the task's tests read the reply to the customer (e.g. ``/home/agent/reply.md``):
    an episode in the task's container adds what the agent said to the customer there before
    the verifier runs. None: only the harness judges the conversation."""


def load_user_profile(tests_dir: Path) -> UserProfile | None:
    """The task's profile, or None when the task has no simulated user."""
    path = tests_dir / USER_FILE
    if not path.is_file():
        return None
    try:
        return UserProfile.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError) as exc:
        raise TaskFormatError(path, f"not a valid simulated-user profile: {exc}") from None
