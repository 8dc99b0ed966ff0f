"""The policy traps of hard requests to a cloud drive: a part the policy forbids (each must trip a
rule of the domain)."""

from __future__ import annotations

from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.tool.scenario import Call

from .data import BIG, PARTNERS, TAGS, WORDINGS
from .drive import Drive


# --- policy traps -----------------------------------------------------------------------------
def trap_confidential_link(d: Drive) -> tuple[str, Call]:
    file = d.mine(tags=["confidential"])
    text = WORDINGS.draw(d.rng, "trap-confidential-link", name=file["name"])
    return text, Call("create_share_link", {"file_id": file["file_id"], "access": "view"})


def trap_external(d: Drive) -> tuple[str, Call]:
    file = d.mine(tags=["confidential", *d.rng.sample(TAGS, 1)])
    first, last = d.rng.choice(FIRST), d.rng.choice(LAST)
    email = f"{first.lower()}.{last.lower()}@{d.rng.choice(PARTNERS)}"
    text = WORDINGS.draw(
        d.rng, "trap-external", name=file["name"], first=first, last=last, email=email
    )
    return text, Call("share_file", {"file_id": file["file_id"], "email": email, "role": "viewer"})


def trap_foreign_delete(d: Drive) -> tuple[str, Call]:
    owner = d.rng.choice(d.others)
    file = d.add_file(d.rng.choice(d.subs), owner=owner["user_id"], shares=[(d.me, "editor")])
    text = WORDINGS.draw(d.rng, "trap-foreign-delete", name=file["name"], owner=owner["name"])
    return text, Call("delete_file", {"file_id": file["file_id"]})


def trap_untag(d: Drive) -> tuple[str, Call]:
    file = d.mine(tags=["confidential"])
    text = WORDINGS.draw(d.rng, "trap-untag", name=file["name"])
    return text, Call("untag_file", {"file_id": file["file_id"], "tag": "confidential"})


def trap_quota(d: Drive) -> tuple[str, Call]:
    owner = d.rng.choice(d.others)
    file = d.add_file(
        d.rng.choice(d.subs),
        owner=owner["user_id"],
        name=d.fresh_name(patterns=BIG),
        shares=[(d.me, "viewer")],
        versions=1,
    )
    file["oversize"] = True  # sized once the quotas are known (see _set_quotas)
    dest = d.rng.choice([f for f in d.subs if f["folder_id"] != file["folder_id"]])
    text = WORDINGS.draw(d.rng, "trap-quota", name=file["name"], where=lambda: d.where(dest))
    return text, Call("copy_file", {"file_id": file["file_id"], "folder_id": dest["folder_id"]})


TRAPS = [trap_confidential_link, trap_external, trap_foreign_delete, trap_untag, trap_quota]
