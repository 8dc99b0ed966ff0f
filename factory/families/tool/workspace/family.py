"""Tool family: a sales rep's requests across three apps at once (CRM, calendar, drive)."""

from __future__ import annotations

import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.workspace import DOC_TEMPLATE, DOMAIN

from factory.families.base import register
from factory.families.tool.calendar.family import CalendarRequests
from factory.families.tool.crm.family import CrmRequests
from factory.families.tool.files.family import FileRequests, _set_quotas
from factory.families.tool.scenario import Scenario, Shape
from factory.families.tool.suite import add_template, move_to, same_people
from factory.families.tool.toolfamily import ToolFamily
from factory.tasks.user_profile import RequiredFact
from factory.vocabulary import Difficulty

from .plan import CUSTOMERS_FOLDER, INBOX_FOLDER, WorkspacePlan

AGENDA_GUESTS = {Difficulty.EASY: 2, Difficulty.MEDIUM: 2, Difficulty.HARD: 3}


@register
class WorkspaceRequests(ToolFamily):
    """A sales rep's requests across the CRM, the company calendar and the company drive, served
    as one tool server (:mod:`factory.toolenv.domains.workspace`) whose apps keep their own ids
    and policies. Every part spans two apps: send a customer the deal's document (a drive share
    link emailed with a CRM template), file a signed contract and close the deal, log a
    calendar meeting in the CRM under its calendar title, share an agenda with everyone a
    meeting invites, block calendar time on a CRM to-do's due date. Easy: one such part;
    medium: two; hard: three, and more traps. Traps break a rule of one app or of the
    workspace (a deal marked signed with no signed contract in the drive, a document for a
    contact who opted out, a confidential document, a colleague's meeting or deal); requests
    may be refused as a whole or include a part for a human (visitor badges, a privacy
    request, a file purged from the trash). The verifier diffs every app's full state."""

    name = "tool-workspace"
    title = "Handle a sales rep's request across CRM, calendar and drive apps under their policies"
    toolenv_domain = "workspace"
    toolenv_modules = (
        "suite.py",
        "domains/crm.py",
        "domains/calendar.py",
        "domains/files.py",
    )
    shapes = tuple(Shape)

    def seed_state(self, rng: random.Random, difficulty: Difficulty) -> JSON:
        crm = CrmRequests().seed_state(rng, difficulty)
        staff, domain, today = crm["users"], crm["seller_domain"], crm["today"]
        calendar = move_to(CalendarRequests().seed_state(rng, difficulty), today, whole_weeks=True)
        calendar = same_people(rng, calendar, staff, domain)
        drive = move_to(FileRequests().seed_state(rng, difficulty), today)
        drive = same_people(rng, drive, staff, domain, new_id=lambda i: f"u-{300 + 7 * i}")
        drive["company_domain"] = domain
        add_template(
            rng,
            crm,
            DOC_TEMPLATE,
            "Your document from {company}'s account team",
            "Hi {first_name},\n\nAs promised, here is the document: {document_link}"
            "\n\nBest,\n{sender_name}",
            ["document_link"],
        )
        add_customer_folders(drive, [c["name"] for c in crm["companies"]])
        return {"crm": crm, "calendar": calendar, "drive": drive}

    def facts_to_tell(self, state: JSON, expected: JSON) -> list[RequiredFact]:
        """A simulated rep is told every share link the request creates (what the customer
        got)."""

        def links(drive: JSON) -> list[str]:
            return [link["url"] for f in drive["files"] for link in f["links"]]

        before = set(links(state["drive"]))
        return [
            RequiredFact(fact="new share link", any_of=[url])
            for url in links(expected["drive"])
            if url not in before
        ]

    def sample(
        self, rng: random.Random, state: JSON, difficulty: Difficulty, shape: Shape = Shape.TASK
    ) -> Scenario:
        plan = WorkspacePlan(rng, state)
        parts = [
            plan.send_document,
            plan.signed_contract,
            plan.log_meeting,
            lambda: plan.share_agenda(AGENDA_GUESTS[difficulty]),
            plan.block_task_time,
        ]
        if difficulty is not Difficulty.EASY:  # three apps in one part
            parts.append(plan.kickoff)
        plan.draw(shape, difficulty, parts)
        _set_quotas(plan.drive)
        return plan.request_scenario(DOMAIN)


def add_customer_folders(drive: JSON, companies: list[str]) -> None:
    """A Customers folder at the drive's root, with an inbox and one folder per customer."""
    root = next(f for f in drive["folders"] if not f["parent_id"])
    owner = drive["acting_user"]

    def folder(name: str, parent: str) -> JSON:
        row = {
            "folder_id": f"fo-{drive['next_folder']}",
            "name": name,
            "parent_id": parent,
            "owner": owner,
            "created": drive["today"],
        }
        drive["next_folder"] += 1
        drive["folders"].append(row)
        return row

    top = folder(CUSTOMERS_FOLDER, root["folder_id"])
    for name in [INBOX_FOLDER, *companies]:
        folder(name, top["folder_id"])
