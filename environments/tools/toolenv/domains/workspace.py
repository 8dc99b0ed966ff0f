"""A sales rep's workspace: the CRM, the company calendar and the company drive, three apps
with their own ids and policies behind one tool server (:mod:`..suite`), tied together by the
workspace's own rules (a deal is signed only when the drive holds its signed contract)."""

from __future__ import annotations

from ..core import JSON, lookup
from ..suite import App, compose
from . import calendar, crm, files

DOC_TEMPLATE = "Shared document"
"""The CRM email template that carries a drive share link to a customer."""
SIGNED_TAG = "signed"

POLICY = """\
# Workspace policy

You work for the acting user, a sales rep, in three apps: the CRM (`crm_*` tools), the calendar
(`calendar_*`) and the drive (`drive_*`). The apps do not share ids: the same colleague has a
different user id in each, so match people across apps by name or email, never by id.

1. A deal's documents in the drive carry the deal's id as a tag (e.g. `d-123`); a contract that
   came back signed is also tagged `signed`. Mark a deal signed in the CRM only when the drive
   holds its contract tagged `signed`.
2. Documents reach customers only one way: a **view-only** share link from the drive, sent with
   the CRM's "Shared document" email template. Check in the CRM that the contact may be emailed
   before you create the link, and never create a link you do not send.
3. A request that spans several apps is done only when every app shows its part. When the policy
   forbids a part, change nothing for that part in any app.
"""

DOMAIN = compose(
    "workspace",
    "Sales Workspace (CRM, Calendar, Drive)",
    POLICY,
    [
        App("crm", crm.DOMAIN, crm.POLICY),
        App("calendar", calendar.DOMAIN, calendar.POLICY),
        App("drive", files.DOMAIN, files.POLICY),
    ],
)


def signed_contract(state: JSON, deal_id: str) -> JSON | None:
    """The drive file (one the acting user can see, not in the trash) tagged with ``deal_id``
    and ``signed``, if any."""
    drive = state["drive"]
    for file in drive["files"]:
        if (
            not file["trashed"]
            and deal_id.lower() in file["tags"]
            and SIGNED_TAG in file["tags"]
            and files._role(drive, file)  # noqa: SLF001 - the drive's own access check
        ):
            return file
    return None


@DOMAIN.rule_on("crm_update_deal")
def signed_needs_contract(state: JSON, tool: str, args: JSON) -> str | None:
    if args.get("signed") is not True:
        return None
    deal_id = str(args.get("deal_id", ""))
    deal = lookup(state["crm"]["deals"], "deal_id", deal_id)
    if deal is None or deal["signed"] or signed_contract(state, deal_id) is not None:
        return None
    return (
        f"marking {deal_id} ({deal['name']}) signed while the drive holds no contract of it "
        f"tagged {SIGNED_TAG}"
    )
