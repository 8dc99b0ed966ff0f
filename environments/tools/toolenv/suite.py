"""Several tool domains served as one: a workplace whose apps (a CRM, a calendar, a drive, a
store...) each keep their own state, ids and policy, behind one tool server.

:func:`compose` builds a :class:`~.core.Domain` from existing domains without copying them: each
app's tools are served under its prefix (``crm_send_email``, ``drive_share_file``) and run on its
own part of the state (``state["crm"]``, ``state["drive"]``), each app's rules judge only that
app's calls, and each app's policy becomes a section of the suite's policy (the tool names in it
prefixed). On top come the suite's own rules, which see the whole state and so can tie the apps
together (a CRM change allowed only when the drive shows something), and one
``transfer_to_human`` for the handover reasons of every app (recorded in ``state["handovers"]``).

Standard library only, like the rest of the server.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .core import HANDOVER_TOOL, JSON, Domain, Rule, Tool


@dataclass(frozen=True)
class App:
    """One domain inside a suite: its tools are ``<prefix>_<name>``, its state ``state[prefix]``."""

    prefix: str
    domain: Domain
    policy: str
    """The app's policy as its module wrote it (without the handover section, which the suite
    writes once for all apps)."""


def compose(
    name: str,
    title: str,
    policy: str,
    apps: list[App],
    rules: list[Rule] | None = None,
    handovers: dict[str, str] | None = None,
) -> Domain:
    """The suite ``name``: ``policy`` (its own, cross-app rules) followed by each app's policy,
    every app's tools and rules under its prefix, plus the suite's ``rules`` (which see the whole
    state). ``handovers`` defaults to the union of the apps' reasons."""
    if handovers is None:
        handovers = {}
        for app in apps:
            clash = set(handovers) & set(app.domain.handovers)
            if clash:
                raise ValueError(f"suite {name}: handover reasons {sorted(clash)} clash")
            handovers.update(app.domain.handovers)
    sections = [policy.rstrip()]
    for app in apps:
        sections.append(app_section(app))
    suite = Domain(name, title, "\n\n".join(sections) + "\n", handovers=handovers)
    handover = suite.tools.pop(HANDOVER_TOOL, None)
    for app in apps:
        for tool in app.domain.tools.values():
            if tool.name == HANDOVER_TOOL:
                continue
            full = f"{app.prefix}_{tool.name}"
            if full in suite.tools:
                raise ValueError(f"suite {name}: two tools named {full}")
            suite.tools[full] = Tool(
                full,
                f"[{app.domain.title}] {tool.description}",
                tool.parameters,
                _on_part(tool.fn, app.prefix),
                tool.mutates,
            )
        suite.rules += [_app_rule(rule, app) for rule in app.domain.rules]
    suite.rules += list(rules or [])
    if handover is not None:
        suite.tools[HANDOVER_TOOL] = handover
    return suite


def app_section(app: App) -> str:
    """An app's policy as a section of the suite's: its headings one level down, under the app's
    title and prefix, and its tool names prefixed."""
    names = {t for t in app.domain.tools if t != HANDOVER_TOOL}

    def tool_name(match: re.Match[str]) -> str:
        word = match.group(1)
        return f"`{app.prefix}_{word}`" if word in names else match.group(0)

    body = re.sub(r"`([a-z_]+)`", tool_name, app.policy.strip())
    body = re.sub(r"^(#+) ", r"#\1 ", body, flags=re.MULTILINE)
    return f"# {app.domain.title} (the `{app.prefix}_*` tools)\n\n{body}"


def _on_part(fn: Callable[..., Any], key: str) -> Callable[..., Any]:
    def run(state: JSON, **arguments: Any) -> Any:
        return fn(state[key], **arguments)

    return run


def _app_rule(rule: Rule, app: App) -> Rule:
    head = f"{app.prefix}_"
    names = set(app.domain.tools)

    def check(state: JSON, tool: str, arguments: JSON) -> str | None:
        if not tool.startswith(head) or tool[len(head) :] not in names:
            return None
        return rule(state[app.prefix], tool[len(head) :], arguments)

    return check
