"""A tool task's simulated customer (a tool family's ``user: simulated``): the profile
(``tests/user.json``, :class:`~factory.tasks.user_profile.UserProfile`) made from the
scenario, and the reference reply that tells the customer what they must hear.

The agent sees only a short opening; the whole request is the customer's hidden goal, given
as the agent asks (:mod:`factory.agent.user_sim`). The scripted customer tells their goal when
asked what they need (or on their first reply) and each fact when it is named.
"""

from __future__ import annotations

import re
from enum import Enum

from factory.tasks.user_profile import RequiredFact, ScriptRule, UserProfile

OPENING = "Hi, I need some help with my account, please."


class UserMode(str, Enum):
    """A tool family's ``user`` parameter."""

    STATIC = "static"
    """The customer's whole request is the instruction (every task before simulated users)."""
    SIMULATED = "simulated"
    """A customer in a chat: the agent sees the opening and talks to them with ``say``."""
    DUAL = "dual"
    """A simulated customer who also holds part of the state and acts on it when the agent
    asks (dual control; families with ``dual_control``, :mod:`factory.toolenv.dual`)."""

    @classmethod
    def of(cls, value: str) -> UserMode:
        try:
            return cls(value)
        except ValueError:
            raise ValueError(
                f"parameter user must be static or simulated (or dual); not {value!r}"
            ) from None


def simulated_customer(request: str, facts: dict[str, str]) -> UserProfile:
    """The customer who wants ``request``: the opening, the request as the goal, ``facts`` to
    give when asked, and the scripted customer's rules."""
    script = [
        ScriptRule(when=_asks_for(name), reply=f"My {name} is {value}.")
        for name, value in facts.items()
    ]
    script += [
        ScriptRule(when=r"\b(help|what|how can|request|need)\b", reply=request),
        ScriptRule(turn=1, reply=request),
    ]
    return UserProfile(
        opening=OPENING,
        goal=request,
        facts=facts,
        script=script,
        default_reply="That is everything, thank you.",
    )


def _asks_for(name: str) -> str:
    """A pattern for a question naming ``name`` (``user id``: "user id", "user-id", "userid")."""
    return r"\b" + r"[\s_-]?".join(re.escape(word) for word in name.split()) + r"\b"


def told_reply(reply: str, facts: list[RequiredFact]) -> str:
    """The reference reply with every required fact told (its first spelling)."""
    if not facts:
        return reply
    told = "; ".join(f"{f.fact}: {f.any_of[0]}" for f in facts)
    return f"{reply} For your records: {told}."
