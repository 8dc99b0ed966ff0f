"""What multi-app tool families share: one seeded state per app, drawn by the single-app families'
own seeders and then made one workplace (the same day, the same people, the same company), and a
plan whose request parts each span several apps (:class:`SuitePlan`).

The apps keep their own ids: a colleague is ``u-12`` in the CRM and ``u-103`` in the calendar,
as in real workplaces, so an agent has to match people across apps by name or email."""

from __future__ import annotations

import datetime
import random
import re
from collections.abc import Callable, Mapping
from typing import Any

from factory.families.tool.scenario import Call, Scenario, Shape
from factory.families.tool.toolfamily import (
    Piece,
    Plan,
    add_shape_parts,
    refuse_all,
)
from factory.toolenv.core import JSON
from factory.vocabulary import Difficulty

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

PARTS = {Difficulty.EASY: 1, Difficulty.MEDIUM: 2, Difficulty.HARD: 3}
"""Cross-app parts per request (each spans apps); the traps and handovers come on top
(:func:`add_shape_parts`)."""


def shift_dates(value: Any, days: int) -> Any:
    """``value`` with every ISO date string in it ``days`` later (a whole JSON tree)."""
    if isinstance(value, dict):
        return {k: shift_dates(v, days) for k, v in value.items()}
    if isinstance(value, list):
        return [shift_dates(v, days) for v in value]
    if isinstance(value, str) and _DATE.match(value):
        return (datetime.date.fromisoformat(value) + datetime.timedelta(days=days)).isoformat()
    return value


def move_to(app: JSON, today: str, *, whole_weeks: bool = False) -> JSON:
    """An app's seeded state moved to ``today``: every date shifted by the same number of days
    (``whole_weeks``: by whole weeks, so a weekday stays one, and no date ends up earlier than
    it would with the exact shift; the app's ``today`` is then set to ``today``)."""
    days = (datetime.date.fromisoformat(today) - datetime.date.fromisoformat(app["today"])).days
    if whole_weeks:
        days = -(-days // 7) * 7
    moved = shift_dates(app, days)
    moved["today"] = today
    return moved


def rename(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` with every string that is a key of ``names`` replaced by its value (whole
    values only: ids, emails and names, never parts of a text)."""
    if isinstance(value, dict):
        return {k: rename(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [rename(v, names) for v in value]
    if isinstance(value, str):
        return names.get(value, value)
    return value


def same_people(
    rng: random.Random,
    app: JSON,
    staff: list[JSON],
    domain: str,
    *,
    new_id: Callable[[int], str] | None = None,
) -> JSON:
    """An app's state whose first users are the ``staff`` (their names and emails; the app keeps
    its own ids unless ``new_id`` gives new ones) and whose other users get emails at ``domain``
    (renamed when one shares a staff member's name)."""
    names: dict[str, str] = {}
    taken = {s["name"] for s in staff}
    for i, user in enumerate(app["users"]):
        if i < len(staff):
            name, email = staff[i]["name"], staff[i]["email"]
        else:
            name = user["name"]
            while name in taken:
                first = rng.choice([s["name"].split()[0] for s in staff])
                name = f"{first} {user['name'].split()[-1]}{rng.choice('BCDFGHKLMNPRST').lower()}"
            email = name.lower().replace(" ", ".") + f"@{domain}"
        taken.add(name)
        names[user["name"]] = name
        names[user["email"]] = email
        if new_id is not None:
            names[user["user_id"]] = new_id(i)
    return rename(app, names)


def add_template(
    rng: random.Random, crm: JSON, name: str, subject: str, body: str, fields: list[str]
) -> None:
    """A CRM email template of the suite's own (its requests send it), put at a drawn place
    among the CRM's templates with the next id."""
    templates = crm["templates"]
    templates.insert(
        rng.randrange(len(templates) + 1),
        {
            "template_id": f"tpl-{len(templates) + 1}",
            "name": name,
            "subject": subject,
            "body": body,
            "fields": fields,
        },
    )


def call(name: str, **arguments: object) -> Call:
    return Call(name, dict(arguments))


def on_contact(contact: JSON, name: str, **arguments: object) -> list[Call]:
    """A CRM contact found by name, then the CRM call ``name`` on them."""
    return [
        call("crm_search_contacts", query=contact["name"]),
        call(name, contact_id=contact["contact_id"], **arguments),
    ]


class SuitePlan(Plan):
    """A plan whose request parts span apps: each :meth:`piece` adds its words, its calls and
    its near misses, a near miss being the whole right chain with that piece's calls replaced
    (so it is wrong in exactly one place: one app left undone, one wrong record)."""

    def __init__(self, rng: random.Random, state: JSON, me: JSON) -> None:
        super().__init__(rng, state, me)
        self.spans: list[tuple[str, int, int, list[Call]]] = []

    def piece(
        self,
        tag: str,
        text: str,
        calls: list[Call],
        near: Mapping[str, list[Call]],
        secrets: list[str] | tuple[str, ...] = (),
    ) -> None:
        start = len(self.calls)
        self.calls += calls
        self.parts.append(text)
        self.tags.append(tag)
        self.secrets += [s for s in secrets if s]
        for name, wrong in near.items():
            self.spans.append((name, start, len(self.calls), wrong))

    def trap(self, tag: str, text: str, call: Call) -> None:
        """A part the policy forbids (its one forbidden call)."""
        self.parts.append(text)
        self.traps.append(call)
        self.tags.append(tag)

    def borrowed(
        self, prefix: str, make: Callable[[Any], tuple[str, Call]], helper: object
    ) -> None:
        """A trap of a single-app family (``make`` on that family's ``helper``), served under
        the app's ``prefix``."""
        text, wrong = make(helper)
        self.trap(f"trap-{prefix}", text, prefixed(prefix, wrong))

    def scenario(self, domain: Any, request: str, tag: str) -> Scenario:
        scenario = super().scenario(domain, request, tag)
        for name, start, end, wrong in self.spans:
            scenario.near_misses[name] = [*self.calls[:start], *wrong, *self.calls[end:]]
        return scenario

    def trap_pieces(self) -> list[Piece]:
        raise NotImplementedError

    def handover_pieces(self) -> list[Piece]:
        raise NotImplementedError

    def draw(self, shape: Shape, difficulty: Difficulty, parts: list[Callable[[], None]]) -> None:
        """The request's pieces: a request to refuse as a whole (:func:`refuse_all`), or
        :data:`PARTS` of the cross-app ``parts``; then the shape's part for a human and the
        traps (:func:`add_shape_parts`)."""
        if shape is Shape.REFUSAL:
            refuse_all(self, self.trap_pieces(), difficulty)
        else:
            for make in self.rng.sample(parts, PARTS[difficulty]):
                make()
        add_shape_parts(self, shape, difficulty, self.trap_pieces(), self.handover_pieces())

    def request_scenario(self, domain: Any) -> Scenario:
        """The scenario of the drawn pieces, between one of the :attr:`wordings` ``hello`` (with
        ``{me}`` for the acting user's name) and one of its ``bye``."""
        hello = self.wording("hello", me=self.me["name"])
        bye = self.wording("bye")
        return self.scenario(domain, request(hello, self.parts, bye), "multi-app")


def request(hello: str, parts: list[str], bye: str) -> str:
    """The customer's words: a part written to follow another ("And cancel...", "Also add...")
    loses its connective when it comes first (a refusal's only part, say)."""
    words = list(parts)
    if words:
        head = _CONNECTIVE.sub("", words[0], count=1)
        words[0] = head[:1].upper() + head[1:]
    return " ".join([hello, *words, bye])


_CONNECTIVE = re.compile(r"^(And|Also)[, ]+(?=\S)")


def prefixed(prefix: str, call: Call) -> Call:
    """A single-app domain's call as the suite serves it."""
    return Call(f"{prefix}_{call.name}", call.arguments)
