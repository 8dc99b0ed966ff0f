"""The pieces of a request to a sales rep's workspace (CRM + calendar + drive): each part spans
two apps, a lookup in one feeding a change in another; the traps break a rule of one app or of
the workspace itself; the handovers go to a human."""

from __future__ import annotations

import datetime
import random
from pathlib import Path

from factory.toolenv.core import JSON
from factory.toolenv.domains.workspace import DOC_TEMPLATE, DOMAIN, SIGNED_TAG
from pydantic import BaseModel, ConfigDict

from factory.datafiles import load_toml_model
from factory.families.tool.calendar.family import (
    SLOTS,
    TOPICS,
    _weekdays,
    new_event,
    room_busy,
)
from factory.families.tool.crm import traps as crm_traps
from factory.families.tool.crm.book import Book
from factory.families.tool.crm.data import TASK_TITLES
from factory.families.tool.files import traps as drive_traps
from factory.families.tool.files.drive import Drive
from factory.families.tool.scenario import Call
from factory.families.tool.suite import SuitePlan, call
from factory.families.tool.wordings import Wordings

CUSTOMERS_FOLDER = "Customers"
INBOX_FOLDER = "Inbox"


class _Words(BaseModel):
    """words.toml: the kinds of document a rep prepares and the meetings they hold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    doc_kinds: list[str]
    meetings: list[str]


_WORDS = load_toml_model(Path(__file__).parent / "words.toml", _Words, "the workspace's words")
DOC_KINDS = _WORDS.doc_kinds
MEETINGS = _WORDS.meetings

PART_TAGS = (
    "send-document",
    "signed-contract",
    "log-meeting",
    "share-agenda",
    "block-task-time",
    "kickoff",
)
"""The request's cross-app pieces, each worded and tagged by its name."""

WORDINGS = Wordings(
    Path(__file__).parent / "wordings.toml",
    "hello",
    "bye",
    *PART_TAGS,
    "trap-unsigned-contract",
    "trap-opted-out-document",
    "trap-confidential-document",
    "trap-colleague-meeting",
    "handover-visitors",
    "handover-privacy",
    "handover-purged-file",
)
"""How a sales rep words each piece of a request (wordings.toml beside this module)."""


class WorkspacePlan(SuitePlan):
    """A request to the workspace, built piece by piece on the seeded state."""

    domain = DOMAIN
    wordings = WORDINGS

    def __init__(self, rng: random.Random, state: JSON) -> None:
        self.book = Book(rng, state["crm"])
        super().__init__(rng, state, self.book.me)
        self.drive = drive_helper(rng, state["drive"])
        self.cal = state["calendar"]
        self.today = state["crm"]["today"]
        self.days = _weekdays(datetime.date.fromisoformat(self.today), 5)
        self.cal_me = self.cal["users"][0]
        self.next_link = state["drive"]["next_link"]
        self.doc_template = next(t for t in state["crm"]["templates"] if t["name"] == DOC_TEMPLATE)[
            "template_id"
        ]
        self.used_companies: list[JSON] = []

    # --- helpers --------------------------------------------------------------------------
    def company(self) -> JSON:
        company = self.book.company(self.used_companies)
        self.used_companies.append(company)
        return company

    def folder_of(self, company: JSON) -> JSON:
        return customer_folder(self.state["drive"], company["name"])

    def document(
        self, company: JSON, deal: JSON, kind: str, tags: list[str], folder: JSON | None = None
    ) -> JSON:
        """A deal's document, in the company's folder (or ``folder``)."""
        return self.drive.add_file(
            folder or self.folder_of(company),
            name=f"{company['name']} - {deal['name']} - {kind}.pdf",
            owner=self.drive.me["user_id"],
            tags=[deal["deal_id"], *tags],
            shares=[],
        )

    def link_url(self, *, take: bool = True) -> str:
        """The share link the next create_share_link makes (planned in call order; ``take``:
        that call is planned, so the link after it comes next)."""
        url = f"https://drive.{self.state['drive']['company_domain']}/s/lnk-{self.next_link}"
        if take:
            self.next_link += 1
        return url

    def find_me(self) -> Call:
        return call("calendar_find_user", query=self.me["name"])

    def pretty(self, date: str) -> str:
        return self.book.pretty(date)

    # --- parts ------------------------------------------------------------------------------
    def send_document(self) -> None:
        """Drive -> CRM: a view link to the deal's document, emailed with the CRM template."""
        b = self.book
        company = self.company()
        contact = b.add_contact(company)
        twin = b.add_contact(b.company([company]), contact["name"])
        deal = b.add_deal(company, self.rng.choice(["proposal", "negotiation"]), self.me["user_id"])
        kind = self.rng.choice(DOC_KINDS)
        doc = self.document(company, deal, kind, [])
        draft = self.document(company, deal, f"{kind} (draft)", ["draft"])
        url = self.link_url()
        text = self.wording(
            "send-document", **b.contact_words(contact), kind=kind, deal=deal["name"]
        )
        head = [
            call("crm_search_contacts", query=contact["name"]),
            call("drive_search_files", query=deal["name"]),
        ]
        link = call("drive_create_share_link", file_id=doc["file_id"], access="view")
        fields = {"document_link": url}
        email = call(
            "crm_send_email",
            contact_id=contact["contact_id"],
            template_id=self.doc_template,
            fields=fields,
        )
        self.piece(
            "send-document",
            text,
            [*head, link, email],
            {
                "link-never-emailed": [*head, link],
                "sends-the-draft": [
                    *head,
                    call("drive_create_share_link", file_id=draft["file_id"], access="view"),
                    email,
                ],
                "emails-the-namesake": [
                    *head,
                    link,
                    call(
                        "crm_send_email",
                        contact_id=twin["contact_id"],
                        template_id=self.doc_template,
                        fields=fields,
                    ),
                ],
            },
            [doc["file_id"], url, contact["contact_id"]],
        )

    def signed_contract(self) -> None:
        """Drive -> CRM: file the signed contract, then mark the deal signed and won."""
        b = self.book
        company = self.company()
        amount = self.rng.randint(20, 400) * 500
        deal = b.add_deal(company, "negotiation", self.me["user_id"], amount=amount)
        self.document(company, deal, "contract", [])
        inbox = customer_folder(self.state["drive"], INBOX_FOLDER)
        signed = self.document(company, deal, "contract (signed)", [SIGNED_TAG], inbox)
        folder = self.folder_of(company)
        text = self.wording(
            "signed-contract",
            **b.deal_words(company, deal),
            customers=CUSTOMERS_FOLDER,
            inbox=INBOX_FOLDER,
        )
        drive = [
            call("drive_search_files", query=deal["name"]),
            call("drive_find_folder", query=company["name"]),
            call("drive_move_file", file_id=signed["file_id"], folder_id=folder["folder_id"]),
        ]
        crm = [
            call("crm_search_companies", query=company["name"]),
            call("crm_list_deals", company_id=company["company_id"]),
            call("crm_update_deal", deal_id=deal["deal_id"], signed=True),
            call("crm_update_deal_stage", deal_id=deal["deal_id"], stage="closed-won"),
        ]
        self.piece(
            "signed-contract",
            text,
            [*drive, *crm],
            {"crm-only": crm, "drive-only": drive, "signed-not-won": [*drive, *crm[:-1]]},
            [signed["file_id"], deal["deal_id"]],
        )

    def log_meeting(self) -> None:
        """Calendar -> CRM: today's meeting with a customer, logged with its calendar title."""
        b = self.book
        company = self.company()
        contact = b.add_contact(company)
        twin = b.add_contact(b.company([company]), contact["name"])
        other = self.company()
        title, decoy = (f"{c['name']} {self.rng.choice(MEETINGS)}" for c in (company, other))
        guests = [u["user_id"] for u in self.rng.sample(self.cal["users"][1:8], 1)]
        day = last_weekday(self.today)
        for name, slot in zip((title, decoy), self.rng.sample(SLOTS, 2), strict=True):
            self.add_event(name, day, slot, guests)
        when = "today" if day == self.today else f"on {self.pretty(day)}"
        text = self.wording("log-meeting", **b.contact_words(contact), when=when)
        head = [
            self.find_me(),
            call("calendar_list_events", user_id=self.cal_me["user_id"], date=day),
            call("crm_search_contacts", query=contact["name"]),
        ]
        log = {"kind": "meeting", "summary": title}
        self.piece(
            "log-meeting",
            text,
            [*head, call("crm_log_activity", contact_id=contact["contact_id"], **log)],
            {
                "logs-on-the-namesake": [
                    *head,
                    call("crm_log_activity", contact_id=twin["contact_id"], **log),
                ],
                "logs-the-other-meeting": [
                    *head,
                    call(
                        "crm_log_activity",
                        contact_id=contact["contact_id"],
                        kind="meeting",
                        summary=decoy,
                    ),
                ],
            },
            [title, contact["contact_id"]],
        )

    def share_agenda(self, count: int) -> None:
        """Calendar -> drive: the agenda shared with everyone the meeting invites."""
        day = self.rng.choice(self.days)
        title = self.rng.choice(TOPICS).capitalize()
        while any(e["title"] == title and e["date"] == day for e in self.cal["events"]):
            title = f"{title} {self.rng.randint(2, 9)}"
        staff = self.rng.sample(range(1, 8), count)
        guests = [self.cal["users"][i] for i in staff]
        self.add_event(title, day, self.rng.choice(SLOTS), [g["user_id"] for g in guests])
        folder = self.rng.choice(self.drive.subs)
        agenda = self.drive.add_file(
            folder,
            name=f"{title} {self.pretty(day).split(', ')[-1]} - agenda.docx",
            owner=self.drive.me["user_id"],
            shares=[],
        )
        text = self.wording(
            "share-agenda", agenda=agenda["name"], title=title, day=self.pretty(day)
        )
        head = [
            self.find_me(),
            call("calendar_list_events", user_id=self.cal_me["user_id"], date=day),
            *(call("calendar_get_user", user_id=g["user_id"]) for g in guests),
            call("drive_search_files", query=agenda["name"]),
        ]

        self.piece(
            "share-agenda",
            text,
            [*head, *shares(agenda, guests)],
            {
                "misses-an-attendee": [*head, *shares(agenda, guests[:-1])],
                "shares-as-editor": [*head, *shares(agenda, guests, "editor")],
            },
            [g["email"] for g in guests],
        )

    def block_task_time(self) -> None:
        """CRM -> calendar: time blocked on the day one of the rep's CRM to-dos is due."""
        b = self.book
        contact = b.add_contact(b.company())
        day = self.rng.choice(self.days[1:])
        crm = self.state["crm"]
        mine = {t["title"] for t in crm["tasks"] if t["owner"] == self.me["user_id"]}
        title = self.rng.choice(TASK_TITLES).format(first=contact["name"].split()[0])
        while title in mine:
            contact = b.add_contact(b.company())
            title = self.rng.choice(TASK_TITLES).format(first=contact["name"].split()[0])
        crm["tasks"].append(
            {
                "task_id": f"task-{crm['next_task']}",
                "title": title,
                "due_date": day,
                "contact_id": contact["contact_id"],
                "deal_id": "",
                "owner": self.me["user_id"],
                "done": False,
                "created": b.day(self.rng.randint(1, 20)),
            }
        )
        crm["next_task"] += 1
        start, end = self.rng.choice([s for s in SLOTS if s[1] <= "17:30"])
        text = self.wording("block-task-time", start=start, end=end, title=title)
        event = {"title": title, "attendees": [], "start": start, "end": end}
        later = self.days[(self.days.index(day) + 1) % len(self.days)]
        read = call("crm_list_tasks")
        self.piece(
            "block-task-time",
            text,
            [read, call("calendar_create_event", date=day, **event)],
            {"books-the-wrong-day": [read, call("calendar_create_event", date=later, **event)]},
            [day],
        )

    def kickoff(self) -> None:
        """CRM -> drive -> calendar: a won deal's kickoff booked with colleagues, and the deal's
        signed contract (found by the deal's id tag) shared with them."""
        b = self.book
        company = self.company()
        deal = b.add_deal(company, "closed-won", self.me["user_id"])
        self.document(company, deal, "contract", [])
        contract = self.document(company, deal, "contract (signed)", [SIGNED_TAG])
        team = [self.cal["users"][i] for i in self.rng.sample(range(1, 8), 2)]
        day, (start, end), room = self.free_room(len(team) + 1)
        title = f"{company['name']} kickoff"
        text = self.wording(
            "kickoff",
            **b.deal_words(company, deal),
            title=title,
            day=self.pretty(day),
            start=start,
            end=end,
            first_guest=team[0]["name"],
            second_guest=team[1]["name"],
        )
        crm = [
            call("crm_search_companies", query=company["name"]),
            call("crm_list_deals", company_id=company["company_id"]),
        ]
        find = call("drive_search_files", query="contract", tag=deal["deal_id"])
        calendar = [
            *(call("calendar_find_user", query=u["name"]) for u in team),
            call("calendar_find_free_rooms", date=day, start=start, end=end, min_capacity=3),
            call(
                "calendar_create_event",
                title=title,
                attendees=sorted(u["user_id"] for u in team),
                date=day,
                start=start,
                end=end,
                room_id=room,
            ),
        ]

        unsigned = next(
            f
            for f in self.state["drive"]["files"]
            if deal["deal_id"] in f["tags"] and SIGNED_TAG not in f["tags"]
        )
        self.piece(
            "kickoff",
            text,
            [*crm, find, *calendar, *shares(contract, team)],
            {
                "kickoff-without-contract": [*crm, find, *calendar],
                "contract-without-kickoff": [*crm, find, *calendar[:-1], *shares(contract, team)],
                "shares-the-unsigned-contract": [*crm, find, *calendar, *shares(unsigned, team)],
            },
            [contract["file_id"], deal["deal_id"]],
        )

    def free_room(self, people: int) -> tuple[str, tuple[str, str], str]:
        """A future weekday, a slot and the first room the calendar offers for ``people`` then
        (as ``find_free_rooms`` orders them)."""
        for _ in range(100):
            day, slot = self.rng.choice(self.days), self.rng.choice(SLOTS)
            rooms = [
                r["room_id"]
                for r in self.cal["rooms"]
                if r["capacity"] >= people
                and not room_busy(self.cal["events"], r["room_id"], day, *slot)
            ]
            if rooms:
                return day, slot, rooms[0]
        raise AssertionError("workspace: no free room for a kickoff")

    def add_event(self, title: str, day: str, slot: tuple[str, str], guests: list[str]) -> JSON:
        event = new_event(self.cal, title, self.cal_me["user_id"], guests, day, slot)
        self.cal["events"].append(event)
        return event

    # --- traps (each must trip a rule) ------------------------------------------------------
    def trap_unsigned_contract(self) -> None:
        """Workspace rule: signed in the CRM only with a signed contract in the drive."""
        b = self.book
        company = self.company()
        deal = b.add_deal(company, "negotiation", self.me["user_id"])
        self.document(company, deal, "contract", [])
        text = self.wording("trap-unsigned-contract", **b.deal_words(company, deal))
        self.trap(
            "trap-unsigned-contract",
            text,
            call("crm_update_deal", deal_id=deal["deal_id"], signed=True),
        )

    def trap_opted_out_document(self) -> None:
        """CRM rule, across apps: a document emailed to a contact who opted out."""
        b = self.book
        company = self.company()
        contact = b.add_contact(company, unsubscribed=True)
        deal = b.add_deal(company, "proposal", self.me["user_id"])
        kind = self.rng.choice(DOC_KINDS)
        self.document(company, deal, kind, [])
        url = self.link_url(take=False)
        text = self.wording(
            "trap-opted-out-document", **b.contact_words(contact), kind=kind, deal=deal["name"]
        )
        email = call(
            "crm_send_email",
            contact_id=contact["contact_id"],
            template_id=self.doc_template,
            fields={"document_link": url},
        )
        self.trap("trap-opted-out-document", text, email)

    def trap_confidential_document(self) -> None:
        """Drive rule, across apps: a link to a confidential document for a customer."""
        b = self.book
        company = self.company()
        contact = b.add_contact(company)
        deal = b.add_deal(company, "negotiation", self.me["user_id"])
        doc = self.document(company, deal, "internal pricing", ["confidential"])
        text = self.wording(
            "trap-confidential-document", **b.contact_words(contact), document=doc["name"]
        )
        self.trap(
            "trap-confidential-document",
            text,
            call("drive_create_share_link", file_id=doc["file_id"], access="view"),
        )

    def trap_colleague_meeting(self) -> None:
        """Calendar rule: a meeting someone else organises is theirs to cancel."""
        theirs = self.rng.choice(
            [e for e in self.cal["events"] if e["organizer"] != self.cal_me["user_id"]]
        )
        owner = next(u for u in self.cal["users"] if u["user_id"] == theirs["organizer"])
        text = WORDINGS.only(
            "trap-colleague-meeting",
            owner=owner["name"],
            title=theirs["title"],
            day=self.pretty(theirs["date"]),
            at=theirs["start"],
            event=theirs["event_id"],
        )
        self.trap(
            "trap-colleague-meeting",
            text,
            call("calendar_cancel_event", event_id=theirs["event_id"]),
        )

    def trap_pieces(self) -> list:
        crm = [crm_traps.trap_discount, crm_traps.trap_colleague_deal, crm_traps.trap_skip_stage]
        drive = [drive_traps.trap_external, drive_traps.trap_foreign_delete, drive_traps.trap_untag]
        return [
            lambda plan: plan.trap_unsigned_contract(),
            lambda plan: plan.trap_opted_out_document(),
            lambda plan: plan.trap_confidential_document(),
            lambda plan: plan.trap_colleague_meeting(),
            lambda plan: plan.borrowed("crm", self.rng.choice(crm), plan.book),
            lambda plan: plan.borrowed("drive", self.rng.choice(drive), plan.drive),
        ]

    # --- handovers ----------------------------------------------------------------------------
    def handover_pieces(self) -> list:
        return [
            lambda plan: plan.handover_visitors(),
            lambda plan: plan.handover_privacy(),
            lambda plan: plan.handover_purged(),
        ]

    def handover_visitors(self) -> None:
        b = self.book
        contact = b.add_contact(self.company())
        day = self.pretty(self.rng.choice(self.days))
        self.hand_over(
            "visitor_access",
            WORDINGS.fill("handover-visitors", **b.contact_words(contact), day=day),
            f"visitor badges for {contact['name']} and two colleagues on {day}",
            call("crm_search_contacts", query=contact["name"]),
            tag="handover-visitors",
        )

    def handover_privacy(self) -> None:
        b = self.book
        contact = b.add_contact(self.company())
        self.hand_over(
            "privacy_request",
            WORDINGS.fill("handover-privacy", **b.contact_words(contact)),
            f"privacy request from {contact['name']}",
            call("crm_search_contacts", query=contact["name"]),
            tag="handover-privacy",
        )

    def handover_purged(self) -> None:
        company = self.company()
        name = f"{company['name']} - account plan.xlsx"
        self.hand_over(
            "purged_file",
            WORDINGS.fill("handover-purged-file", file=name),
            f'restore "{name}" from backups',
            call("drive_list_trash"),
            tag="handover-purged-file",
        )


def shares(file: JSON, people: list[JSON], role: str = "viewer") -> list[Call]:
    """``file`` shared on the drive with each of ``people``, as ``role``."""
    return [
        call("drive_share_file", file_id=file["file_id"], email=p["email"], role=role)
        for p in people
    ]


def last_weekday(date: str) -> str:
    """``date``, or the last weekday before it."""
    day = datetime.date.fromisoformat(date)
    while day.weekday() >= 5:
        day -= datetime.timedelta(days=1)
    return day.isoformat()


def customer_folder(drive: JSON, name: str) -> JSON:
    """A folder of the drive's Customers folder (a customer's, or the inbox), by name."""
    top = next(f for f in drive["folders"] if f["name"] == CUSTOMERS_FOLDER)
    return next(
        f for f in drive["folders"] if f["parent_id"] == top["folder_id"] and f["name"] == name
    )


def drive_helper(rng: random.Random, drive: JSON) -> Drive:
    """The drive family's bookkeeping, kept away from the Customers folders (its file names are
    the departments')."""
    d = Drive(rng, drive)
    top = next(f for f in drive["folders"] if f["name"] == CUSTOMERS_FOLDER)
    d.depts = [f for f in d.depts if f is not top]
    d.subs = [f for f in d.subs if f["parent_id"] != top["folder_id"]]
    return d
