"""Tool environments as procedural families: one family per tool domain.

A tool family seeds a domain's database, samples a request whose reference solution is a chain
of tool calls that follows the tools' dependency graph (one call's output is the next one's
input), runs that chain on the host against the very code the container will serve
(:mod:`factory.toolenv`), and writes the resulting state as the verifier's expectation.

Difficulty is chain length, distractor tools (every domain serves all its tools, most of them
irrelevant to a given request) and policy traps: requests may include parts the policy forbids
(none to a few, more at hard), and the task fails when the agent tries one (the tool server logs
the violation). Besides doing what is asked (:attr:`Shape.TASK`), a request may be one to refuse
as a whole (:attr:`Shape.REFUSAL`: nothing may change, and the reply to the customer must say
what was refused) or need a human colleague for a part (:attr:`Shape.HANDOVER`:
``transfer_to_human`` with the reason the policy gives for it).

The agent runs as an unprivileged user; the tool server runs as its own user and keeps its
state and call log where only that user (and root: the verifier) can write, and answers resets
only on an admin socket the agent cannot reach. Each task carries cheat probes
(``templates/families/_tool/cheats/``) that try the known ways around that after a wrong call:
wiping the record with a reset, and restarting the server from its saved state.

The tests run in a separate verifier (Harbor's ``environment_mode = "separate"``): a collect
hook, run as root in the agent's container once the agent is done (its processes frozen), copies
the server's record (the state file and the call log, exactly what a shared verifier reads)
into a folder it creates afresh (:data:`SNAPSHOT_DIR`), and that folder travels to the fresh
container with the reply, where the tests read it. A refusal's hook also copies the harness's
trajectory (:data:`TRAJECTORY_PATH`, whose last message may be the reply) into that folder:
Harbor forbids artifacts under the log folders it mounts. The fresh container's own tool server starts
from the image's initial state with an empty log; the tests never read its record (only the
image's ``initial.json``). A failed hook leaves no folder, so the tests fail: the record can be
neither forged nor erased on the way.

Modes (family parameters; each ships its extra server file only in its own tasks, so the
default tasks are unchanged): ``user: simulated`` (a customer the agent talks to,
:mod:`factory.families.tool.customer`); ``policy: agent`` (the tools execute forbidden calls and
only the call log records the violation, :mod:`factory.toolenv.agent_policy`; the instruction
says the policy is the agent's to follow); ``user: dual`` (the customer also holds part of the
state and acts on it when the agent asks, :mod:`factory.toolenv.dual`; families with
``dual_control``).

Every tool family shares the templates in ``templates/families/_tool``.
"""

from __future__ import annotations

import datetime
import json
import random
import shlex
from collections.abc import Callable, Mapping
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar

from factory.families.base import SNAPSHOT_DIR, Draft, Family, fresh_folder_hook
from factory.families.tool.customer import UserMode, simulated_customer, told_reply
from factory.families.tool.scenario import (
    REPLY_PATH,
    SAY_CALL,
    Call,
    Part,
    Scenario,
    Shape,
    chain_runner,
    customer_reply,
    draw_shape,
    draw_trap_count,
    lasting_mistake,
    refusal_subjects,
    run_chain_logged,
    solve_script,
)
from factory.families.tool.wordings import Wordings
from factory.resources import templates_dir, toolenv_dir
from factory.tasks.tool_server import HEALTHCHECK, TOOL_PORT, mcp_servers
from factory.tasks.user_profile import USER_FILE, RequiredFact, ScriptRule
from factory.toolenv.agent_policy import TASK_TAG as POLICY_IN_AGENT_TAG
from factory.toolenv.core import HANDOVER_TOOL, JSON, Environment, load_domain
from factory.toolenv.dual import TASK_TAG as DUAL_TAG
from factory.toolenv.dual import dual_domain
from factory.vocabulary import AGENT_USER, Difficulty, Domain

TOOLENV_DIR = toolenv_dir()
KIT_FILES = (
    "__init__.py",
    "core.py",
    "server.py",
    "mcp.py",
    "cli.py",
    "admin.py",
    "domains/__init__.py",
)
DUAL_FILE = "dual.py"
"""The dual-control server (:mod:`factory.toolenv.dual`), shipped only with ``user: dual``."""
CUSTOMER_FILE = "customer.json"
"""The scripted customer's profile in a dual-control image (under the server's folder)."""
AGENT_POLICY_FILE = "agent_policy.py"
"""The lenient server (:mod:`factory.toolenv.agent_policy`), shipped only with ``policy: agent``."""
RECORD_DIR = "/var/lib/toolenv"
"""The tool server's record in the container: initial.json, state.json, calls.jsonl."""


TRAJECTORY_PATH = "/logs/agent/trajectory.json"
"""Where Harbor's agents leave their ATIF trajectory (a refusal's tests read its last message,
from the snapshot: Harbor forbids artifacts under its own log folders)."""
SNAPSHOT_TRAJECTORY = "trajectory.json"
"""The trajectory's copy in a refusal's snapshot folder."""
IMAGE_DD = "/usr/bin/dd"
"""The image's coreutils ``dd`` (Debian's; root's, so the agent cannot have replaced it)."""
TRAJECTORY_LIMIT = 32 * 1024 * 1024
"""At most this many bytes of the trajectory are copied (a longer one is cut, and its JSON
then reads as no trajectory: the reply file still counts)."""


def snapshot_hook(
    record: str = RECORD_DIR, folder: str = SNAPSHOT_DIR, trajectory: str | None = None
) -> str:
    """The collect hook: the server's ``record`` (state.json, calls.jsonl) copied into
    ``folder``, replaced as a whole (:func:`~factory.families.base.fresh_folder_hook`). A
    server that never got a call has no log yet: an empty one is written, as a shared verifier
    reads a missing log as empty.

    With ``trajectory`` (a refusal's: the harness's log of what the agent said, in a folder the
    agent can write), that file is copied too, as ``folder``/:data:`SNAPSHOT_TRAJECTORY`, when
    it is there: opened without following a symlink (root must not copy what the agent could
    not read) and without blocking (a FIFO must not stall the hook), at most
    :data:`TRAJECTORY_LIMIT` bytes, by the image's own GNU ``dd`` (:data:`IMAGE_DD`: the
    busybox a harness may put first on ``PATH`` has no ``nofollow``). Whatever goes wrong there
    leaves no copy and does not fail the hook: a missing trajectory only means the reply file
    alone is read."""
    r = shlex.quote(record)
    fill = (
        f"cp {r}/state.json {{tmp}}/state.json && "
        f"if [ -e {r}/calls.jsonl ]; then cp {r}/calls.jsonl {{tmp}}/calls.jsonl; "
        "else : > {tmp}/calls.jsonl; fi"
    )
    if trajectory is not None:
        copy = f"{{tmp}}/{SNAPSHOT_TRAJECTORY}"
        fill += (
            f" && {{ {IMAGE_DD} if={shlex.quote(trajectory)} of={copy} bs=65536 "
            f"count={TRAJECTORY_LIMIT} iflag=nofollow,nonblock,count_bytes status=none "
            f"2>/dev/null || rm -f {copy}; }}"
        )
    return fresh_folder_hook(folder, fill)


class PolicyMode(str, Enum):
    """A tool family's ``policy`` parameter: who enforces the domain's policy."""

    TOOLS = "tools"
    """The tools refuse a forbidden call and say why (every task before this mode)."""
    AGENT = "agent"
    """The tools execute whatever they are asked (tau2-bench style); only the agent holds the
    policy, and the verifier fails a task whose end state or call log shows a violation."""

    @classmethod
    def of(cls, value: str) -> PolicyMode:
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"parameter policy must be tools or agent; not {value!r}") from None


def request_text(hello: str, parts: list[str], bye: str) -> str:
    """What the customer says: the greeting, the request's parts, the goodbye (an empty one
    left out)."""
    return " ".join(w for w in [hello, *parts, bye] if w)


def compose(
    rng: random.Random,
    parts: list[Part],
    traps: list[tuple[str, Call]],
    *,
    greetings: Callable[[], list[str]],
    byes: list[str],
    tags: list[str],
) -> Scenario:
    """The scenario of a request made of ``parts`` with the words of ``traps`` slipped in, between
    a greeting (drawn from ``greetings()``, called after the traps are placed) and a goodbye. A
    part's near miss replaces that part's calls in the otherwise right chain."""
    calls = [c for p in parts for c in p.calls]
    near = {}
    for i, part in enumerate(parts):
        if part.near:
            name, wrong = part.near
            near[name] = (
                [c for p in parts[:i] for c in p.calls]
                + wrong
                + [c for p in parts[i + 1 :] for c in p.calls]
            )
    words = [p.text for p in parts]
    for text, _ in traps:
        words.insert(rng.randint(1, len(words)), text)
    hello = rng.choice(greetings())
    bye = rng.choice(byes)
    return Scenario(
        request=request_text(hello, words, bye),
        calls=calls,
        traps=[t for _, t in traps],
        near_misses=near,
        secrets=[s for p in parts for s in p.secrets],
        tags=tags,
        shape=Shape.REFUSAL if traps and not parts else Shape.TASK,
    )


def hard_traps(
    rng: random.Random,
    difficulty: Difficulty,
    traps: list[Callable[[Any], tuple[str, Call]]],
    helper: Any,
) -> list[tuple[str, Call]]:
    """A request's traps, each made on ``helper``: one or two (one more often) at hard, none
    below."""
    if difficulty is not Difficulty.HARD:
        return []
    return [make(helper) for make in rng.sample(traps, rng.choice([1, 1, 2]))]


def handover_part(
    rng: random.Random,
    domain: Any,
    reason: str,
    texts: list[str],
    summary: str,
    reads: list[Call] | None = None,
) -> Part:
    """A part of a request only a human may handle: its words, the reads that confirm it and
    ``transfer_to_human`` with ``reason``; the near miss hands over for another reason."""
    others = sorted(code for code in domain.handovers if code != reason)
    head = list(reads or [])
    right = Call(HANDOVER_TOOL, {"reason": reason, "summary": summary})
    wrong = Call(HANDOVER_TOOL, {"reason": rng.choice(others), "summary": summary})
    return Part(rng.choice(texts), [*head, right], ("wrong-handover-reason", [*head, wrong]))


class Plan:
    """Builds one scenario piece by piece: each piece plants what it needs in the state and adds
    calls, words, near misses and traps. Subclasses add the pieces of their domain."""

    domain: Any
    """The tool domain (its handover reasons, :meth:`hand_over`)."""
    wordings: Wordings
    """How the family's requests word their pieces (:meth:`say`, :meth:`forbid`)."""

    def __init__(self, rng: random.Random, state: JSON, me: JSON) -> None:
        self.rng, self.state, self.me = rng, state, me
        self.calls: list[Call] = []
        self.parts: list[str] = []
        self.traps: list[Call] = []
        self.near: dict[str, list[Call]] = {}
        self.secrets: list[str] = []
        self.tags: list[str] = []
        self.shape = Shape.TASK
        """Set to REFUSAL by a family that only adds traps."""

    def wording(self, name: str, /, **values: object) -> str:
        """One of the wordings ``name`` (of :attr:`wordings`), filled with ``values``."""
        return self.wordings.draw(self.rng, name, **values)

    def say(self, tag: str, /, **values: object) -> None:
        """Add one of the wordings ``tag`` (:meth:`wording`) to the request's words, and ``tag``
        to the task's tags."""
        self.parts.append(self.wording(tag, **values))
        self.tags.append(tag)

    def miss(self, near: str, calls: list[Call], wrong: Call, *, reads: int = -1) -> None:
        """The near miss ``near`` of a piece about to add ``calls``: the calls so far, the first
        ``reads`` of ``calls`` (all but the last by default), then ``wrong`` instead of the rest."""
        self.near[near] = [*self.calls, *calls[:reads], wrong]

    def forbid(self, name: str, call: Call, /, **values: object) -> None:
        """Add a part the policy forbids: one of the wordings ``name`` (:meth:`wording`), and
        the ``call`` it must refuse."""
        self.parts.append(self.wording(name, **values))
        self.traps.append(call)

    def change(self, calls: list[Call], near: str, wrong: Call, *, reads: int = -1) -> None:
        """Add ``calls`` with their near miss (:meth:`miss`)."""
        self.miss(near, calls, wrong, reads=reads)
        self.calls += calls

    def hand_over(
        self, reason: str, texts: list[str], summary: str, *reads: Call, tag: str = "handover"
    ) -> None:
        """Add a part for a human (:func:`handover_part`, in :attr:`domain`) that ``reads``
        confirm."""
        self.handover(handover_part(self.rng, self.domain, reason, texts, summary, [*reads]), tag)

    def handover(self, part: Part, tag: str = "handover") -> None:
        """Add a part that goes to a human (see :func:`handover_part`)."""
        self.parts.append(part.text)
        if part.near:
            name, wrong = part.near
            self.near[name] = [*self.calls, *wrong]
        self.calls += part.calls
        self.tags.append(tag)

    def scenario(self, domain: Any, request: str, tag: str) -> Scenario:
        """The scenario of the pieces added so far; a read made once is not repeated."""
        mutating = {name for name, tool in domain.tools.items() if tool.mutates}
        calls, seen = [], set()
        for call in self.calls:
            key = (call.name, call.arguments_json)
            if call.name in mutating or key not in seen:
                calls.append(call)
            seen.add(key)
        return Scenario(
            request=request,
            calls=calls,
            traps=self.traps,
            near_misses=self.near,
            secrets=sorted(set(self.secrets)),
            tags=[tag, *self.tags],
            shape=self.shape,
        )


def draw_today(
    rng: random.Random, start: datetime.date = datetime.date(2026, 1, 5)
) -> datetime.date:
    """The day a seeded state lives in: ``start`` (5 January 2026) plus up to 300 days."""
    return start + datetime.timedelta(days=rng.randrange(300))


def shift_date(date: str, days: int) -> str:
    """An ISO date ``days`` later (earlier when negative)."""
    return (datetime.date.fromisoformat(date) + datetime.timedelta(days=days)).isoformat()


Piece = Callable[["Plan"], None]
"""A trap or a handover part: plants what it needs in the plan's state and adds itself."""


def refuse_all(plan: Plan, traps: list[Piece], difficulty: Difficulty) -> None:
    """Make the request one to refuse as a whole: one trap at easy, one or two above."""
    plan.shape = Shape.REFUSAL
    count = 1 if difficulty is Difficulty.EASY else plan.rng.randint(1, 2)
    for trap in plan.rng.sample(traps, count):
        trap(plan)


def draw_pieces(
    plan: Plan,
    shape: Shape,
    difficulty: Difficulty,
    traps: list[Piece],
    handovers: list[Piece],
    easy: list[Callable[[], None]],
    more: Callable[[], None],
) -> None:
    """A single-app request's pieces: one to refuse as a whole (:func:`refuse_all`), one of the
    ``easy`` pieces at easy (none when a part goes to a human), else what ``more`` adds; then the
    shape's part for a human and the traps (:func:`add_shape_parts`)."""
    if shape is Shape.REFUSAL:
        refuse_all(plan, traps, difficulty)
    elif difficulty is Difficulty.EASY:
        if shape is not Shape.HANDOVER:
            plan.rng.choice(easy)()
    else:
        more()
    add_shape_parts(plan, shape, difficulty, traps, handovers)


def add_shape_parts(
    plan: Plan, shape: Shape, difficulty: Difficulty, traps: list[Piece], handovers: list[Piece]
) -> None:
    """After the request's own pieces: a part for a human (a handover request), and the drawn
    number of traps (:func:`draw_trap_count`; none more for a refusal)."""
    if shape is Shape.HANDOVER:
        plan.rng.choice(handovers)(plan)
    if shape is not Shape.REFUSAL:
        for trap in plan.rng.sample(traps, draw_trap_count(plan.rng, difficulty, len(traps))):
            trap(plan)


class ToolFamily(Family):
    """Base of tool-domain families. Subclasses name their ``toolenv_domain`` and implement
    :meth:`seed_state` and :meth:`sample`."""

    domain = Domain.TOOL
    category = "tool-use"
    toolenv_domain: ClassVar[str]
    """Module name under ``factory.toolenv.domains``."""
    toolenv_modules: ClassVar[tuple[str, ...]] = ()
    """More server files the domain imports, relative to the server's folder (a suite of apps,
    :mod:`factory.toolenv.suite`: the suite module and its apps' domains)."""

    @property
    def templates(self) -> Path:
        return templates_dir() / "families" / "_tool"

    default_params: ClassVar[Mapping[str, Any]] = {
        "shape": "any",
        "user": "static",
        "policy": PolicyMode.TOOLS.value,
    }
    """``shape``: ``any`` (drawn by difficulty among :attr:`shapes`), or one of them.
    ``user``: ``static`` (the request is the instruction) or ``simulated`` (a customer the
    agent talks to; :mod:`factory.families.tool.customer`). ``policy``: ``tools`` (the tools
    refuse forbidden calls) or ``agent`` (they execute them; :class:`PolicyMode`)."""
    shapes: ClassVar[tuple[Shape, ...]] = (Shape.TASK,)
    """The request shapes :meth:`sample` can draw."""
    dual_control: ClassVar[bool] = False
    """Whether the family offers ``user: dual`` (its domain has a dual variant)."""

    def dual_setup(self, state: JSON, scenario: Scenario) -> Scenario:
        """Dual control: plant the customer's side in ``state`` and return the scenario with
        the steps that need the customer (a :data:`SAY_CALL` they act on)."""
        raise NotImplementedError

    def dual_rules(self) -> tuple[list[ScriptRule], dict[str, str]]:
        """Dual control: the scripted customer's rules that use their tools (first in their
        script), and those tools (name -> what it does)."""
        raise NotImplementedError

    def seed_state(self, rng: random.Random, difficulty: Difficulty) -> JSON:
        raise NotImplementedError

    def sample(
        self, rng: random.Random, state: JSON, difficulty: Difficulty, shape: Shape = Shape.TASK
    ) -> Scenario:
        raise NotImplementedError

    def customer_facts(self, state: JSON, scenario: Scenario) -> dict[str, str]:
        """What a simulated customer knows and gives only when asked (e.g. their user id)."""
        return {}

    def facts_to_tell(self, state: JSON, expected: JSON) -> list[RequiredFact]:
        """What the agent must tell a simulated customer (e.g. a new booking's code)."""
        return []

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        domain = load_domain(self.toolenv_domain)
        policy = PolicyMode.of(str(params.get("policy", PolicyMode.TOOLS.value)))
        user = UserMode.of(params.get("user", UserMode.STATIC.value))
        dual = user is UserMode.DUAL
        if dual and not self.dual_control:
            raise ValueError(f"{self.name} has no dual-control variant (user: dual)")
        if dual and policy is PolicyMode.AGENT:
            raise ValueError("user: dual and policy: agent do not combine yet")
        state = self.seed_state(rng, difficulty)
        shape = draw_shape(rng, difficulty, str(params.get("shape", "any")), self.shapes)
        scenario = self.sample(rng, state, difficulty, shape)
        profile = None
        if user is not UserMode.STATIC:
            profile = simulated_customer(scenario.request, self.customer_facts(state, scenario))
        if dual:
            assert profile is not None
            scenario = self.dual_setup(state, scenario)
            rules, actions = self.dual_rules()
            profile.script = [*rules, *profile.script]
            profile.actions = actions
            domain = dual_domain(domain)
        run = chain_runner(dual, profile)
        expected = run(domain, state, scenario.calls, f"{self.name} reference")
        refusal = scenario.shape is Shape.REFUSAL
        if refusal and not scenario.traps:
            raise AssertionError(f"{self.name}: a refusal must refuse a trap")
        if expected == state and not refusal:
            raise AssertionError(f"{self.name}: the reference chain changes nothing")
        violations = []
        for trap in scenario.traps:
            found = Environment(domain, expected).call(trap.name, trap.arguments).get("violation")
            if not found:
                raise AssertionError(f"{self.name}: trap {trap.name} trips no policy rule")
            violations.append(found)
        subjects = refusal_subjects(scenario, state) if refusal else []
        wrong = lasting_mistake(domain, scenario, self.name)
        final, log = run_chain_logged(
            domain, state, [*wrong, *scenario.calls], profile if dual else None
        )
        if final == expected and not any("violation" in entry for entry in log):
            raise AssertionError(f"{self.name}: the cheat probes' mistake leaves no trace")
        reply = customer_reply(scenario, violations, subjects)
        if profile is not None:
            profile.communicate = self.facts_to_tell(state, expected)
            profile.reply_path = REPLY_PATH
            untold = reply
            reply = told_reply(reply, profile.communicate)
        mutations = {
            name: solve_script(calls, f"near miss: {name}", reply)
            for name, calls in scenario.near_misses.items()
        }
        mutating = [
            c for c in scenario.calls if c.name in domain.tools and domain.tools[c.name].mutates
        ]
        if mutating:
            mutations["stops-early"] = solve_script(
                scenario.calls[: scenario.calls.index(mutating[-1])],
                "near miss: the last change is never made",
                reply,
            )
        for i, trap in enumerate(scenario.traps):
            mutations[f"breaks-policy-{i + 1}"] = solve_script(
                [*scenario.calls, trap], f"near miss: also tries the forbidden {trap.name}", reply
            )
        if refusal:
            mutations["silent-refusal"] = solve_script(
                scenario.calls, "near miss: changes nothing but never tells the customer why"
            )
            if subjects:
                mutations["vague-refusal"] = solve_script(
                    scenario.calls,
                    "near miss: a refusal that does not say what is refused",
                    "Sorry, I cannot do that: our policy does not allow it.",
                )
        if dual:
            asks = [i for i, c in enumerate(scenario.calls) if c.name == SAY_CALL]
            mutations["never-asks-the-customer"] = solve_script(
                [c for c in scenario.calls if c.name != SAY_CALL],
                "near miss: never asks the customer to do their part",
                reply,
            )
            mine = [Call(name, {}) for name in profile.actions if name not in domain.tools]
            mutations["acts-for-the-customer"] = solve_script(
                [*scenario.calls[: asks[0]], *mine, *scenario.calls[asks[0] + 1 :]],
                "near miss: tries the customer's own tools instead of asking them",
                reply,
            )
        if profile is not None and profile.communicate:
            mutations["untold-facts"] = solve_script(
                scenario.calls, "near miss: never tells the customer what they need", untold
            )
        files: dict[str, str | bytes] = {
            f"environment/toolenv/{rel}": (TOOLENV_DIR / rel).read_bytes() for rel in KIT_FILES
        }
        if profile is not None:
            files[f"tests/{USER_FILE}"] = profile.model_dump_json(indent=1) + "\n"
        module = f"domains/{self.toolenv_domain}.py"
        files[f"environment/toolenv/{module}"] = (TOOLENV_DIR / module).read_bytes()
        for rel in self.toolenv_modules:
            files[f"environment/toolenv/{rel}"] = (TOOLENV_DIR / rel).read_bytes()
        if policy is PolicyMode.AGENT:
            lenient = (TOOLENV_DIR / AGENT_POLICY_FILE).read_bytes()
            files[f"environment/toolenv/{AGENT_POLICY_FILE}"] = lenient
        if dual:
            assert profile is not None
            files[f"environment/toolenv/{DUAL_FILE}"] = (TOOLENV_DIR / DUAL_FILE).read_bytes()
            # the in-container customer (say), in the server's own folder: what they say and
            # do, not what the tests expect
            script = profile.model_dump(include={"script", "default_reply"})
            files[f"environment/{CUSTOMER_FILE}"] = json.dumps(script, indent=1) + "\n"
        files["environment/state.json"] = json.dumps(state, indent=1, sort_keys=True) + "\n"
        unchanged = expected == state  # a refusal that only looks things up
        if not unchanged:  # else the tests compare with the image's own initial.json (a copy
            # of the expectation in the image would be a leak)
            files["tests/expected_state.json"] = (
                json.dumps(expected, indent=1, sort_keys=True) + "\n"
            )
        handover = any(c.name == HANDOVER_TOOL for c in scenario.calls)
        return Draft(
            context={
                "domain_name": self.toolenv_domain,
                "domain_title": domain.title,
                "policy": domain.policy.strip(),
                "request": scenario.request.strip(),
                "calls": scenario.calls,
                "port": TOOL_PORT,
                "reply": reply,
                "reply_path": REPLY_PATH,
                "refusal": {"subjects": subjects} if refusal else None,
                # the cheat probes (cheats/): something wrong first, then wipe the record
                "wrong_calls": wrong,
                # after a refused call the saved state is still the right one to restart from;
                # after a wrong change (an executed forbidden call too) only the initial state
                # forgets it
                "wrong_source": "state.json"
                if scenario.traps and policy is PolicyMode.TOOLS
                else "initial.json",
                # policy in the agent: the server that executes forbidden calls, and the words
                # that say so
                "agent_policy": policy is PolicyMode.AGENT,
                "dual": {"customer_file": CUSTOMER_FILE} if dual else None,
                "record_dir": RECORD_DIR,
                "snapshot_dir": SNAPSHOT_DIR,
                "trajectory_path": TRAJECTORY_PATH,
                "snapshot_trajectory": SNAPSHOT_TRAJECTORY,
                "unchanged": unchanged,
                # a simulated customer: only the opening is shown; what must be told is checked
                "customer": {"opening": profile.opening} if profile is not None else None,
                "communicate": [f.model_dump() for f in profile.communicate] if profile else [],
            },
            files=files,
            secrets=scenario.secrets,
            mutations=mutations,
            agent_user=AGENT_USER,
            outputs=[REPLY_PATH],
            separate_verifier=True,
            artifacts=[SNAPSHOT_DIR],
            collect=[snapshot_hook(trajectory=TRAJECTORY_PATH if refusal else None)],
            collect_user="root",
            healthcheck=dict(HEALTHCHECK),
            mcp_servers=mcp_servers(self.toolenv_domain),
            memory_mb=512,
            verifier_timeout_sec=60.0,
            tags=["tool-use", self.toolenv_domain, *scenario.tags]
            + (["policy-trap"] if scenario.traps else [])
            + (["refusal"] if refusal else [])
            + (["handover"] if handover else [])
            + (["simulated-user"] if profile is not None else [])
            + ([POLICY_IN_AGENT_TAG] if policy is PolicyMode.AGENT else [])
            + ([DUAL_TAG] if dual else []),
        )
