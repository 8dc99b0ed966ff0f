"""The shared vocabulary of generation: words that families, the taxonomy and the pipeline all
speak. It sits below all of them and imports nothing from factory, so that a family never has
to import the pipeline that uses it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Domain(str, Enum):
    """What kind of environment a leaf's tasks run in."""

    TERMINAL = "terminal"
    """A shell in a container: files, processes, programs."""
    WEB = "web"
    """A small web app in the container, used through a text browser."""
    TOOL = "tool"
    """A tool server (JSON functions over HTTP/MCP) for a stateful domain."""


class Difficulty(str, Enum):
    """How hard a task is; each family documents what its knobs do at each level."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


AGENT_USER = "agent"
"""The unprivileged OS user web and tool tasks run the agent as (task.toml ``[agent] user``);
their images create it (``templates/families/_shared/dockerfile_users.j2``), and the service
(web app, tool server) runs as a user of its own whose data the agent cannot write."""


@dataclass(frozen=True)
class Trap:
    """A difficulty a task plants without announcing it: the agent must discover it."""

    name: str
    """What the trap is, in a few words ('stale PID file', 'token unreadable by the user')."""
    tells: tuple[str, ...]
    """Words or phrases that would give the trap away if the instruction used them (matched
    case-insensitively, as whole words); at ``hard`` none may appear in the instruction."""
