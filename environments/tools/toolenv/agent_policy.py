"""Policy in the agent (tau2-bench style): the tools execute whatever they are asked.

In the default mode a domain's rules refuse a forbidden call (an error to the agent, the
violation in the call log). Here the rules are still checked before each call, but only to
record: a call that breaks the policy runs like any other, the agent sees its result and
nothing else, and the server's call log keeps the violation for the verifier. Following the
policy is the agent's job alone; the verifier fails the task when the end state differs from the
reference or the log shows a violation.

``python3 -m toolenv.agent_policy`` serves a domain this way, with the server's options (the
domain backend only). Shipped only in tasks of this mode; standard library only.
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import Any

from .core import JSON, Domain, Environment, Rule, load_domain

TASK_TAG = "policy-in-agent"
"""The tag factory gives a task of this mode (its in-process episodes read it)."""


class AgentPolicyEnvironment(Environment):
    """An :class:`Environment` whose rules record violations without refusing the call."""

    def __init__(self, domain: Domain, state: JSON) -> None:
        self._broken: list[str] = []
        watched = copy.copy(domain)  # no __post_init__: the policy text and tools stay as they are
        watched.rules = [self._watch(rule) for rule in domain.rules]
        super().__init__(watched, state)

    def _watch(self, rule: Rule) -> Rule:
        def check(state: JSON, tool: str, arguments: JSON) -> None:
            message = rule(state, tool, arguments)
            if message:
                self._broken.append(message)
            return None

        return check

    def call(self, name: str, arguments: Any) -> JSON:
        """Run a call (a forbidden one too); the log entry carries the first rule it broke as
        ``violation``, the result shown to the agent does not."""
        self._broken = []
        result = super().call(name, arguments)
        if self._broken:
            self.log[-1]["violation"] = self._broken[0]
        return result


def main(argv: list[str] | None = None) -> None:
    from .server import DomainBackend, parse_server_args, serve

    parser = argparse.ArgumentParser(
        description="Serve a tool domain whose tools execute forbidden calls (policy in the agent)."
    )
    parser.add_argument("--domain", required=True, help="domain module")
    parser.add_argument("--state", type=Path, required=True, help="initial state, JSON")
    args = parse_server_args(parser, argv)
    state = json.loads(args.state.read_text(encoding="utf-8"))
    backend = DomainBackend(AgentPolicyEnvironment(load_domain(args.domain), state))
    serve(backend, args.port, args.log, args.state_out, args.admin_socket)


if __name__ == "__main__":
    main()
