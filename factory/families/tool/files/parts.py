"""The parts a request to a cloud drive is made of: each adds the records it needs and returns its
words, its calls and a plausible wrong version of them."""

from __future__ import annotations

from collections.abc import Callable

from factory.toolenv.core import JSON

from factory.families.tool.scenario import Call, Part, near_swap, near_twin

from .data import DEPTS, KINDS, NEW_FOLDERS, TEMPLATES, WORDINGS
from .drive import Drive, extension, name_stem, pretty_date, variant


# --- request parts ----------------------------------------------------------------------------
def rename_part(d: Drive) -> Part:
    home, other = d.two_folders()
    target = d.mine(home)
    twin = d.mine(other, name=target["name"])
    new = variant(d.rng, target["name"])
    d.names.add(new)
    name, where = target["name"], d.where(home)
    text = WORDINGS.draw(d.rng, "rename", name=name, where=where, new=new)
    find = Call("search_files", {"query": name})
    return near_swap(
        text,
        [find],
        Call("rename_file", {"file_id": target["file_id"], "new_name": new}),
        "file_id",
        twin["file_id"],
        "renames-the-other-copy",
        [target["file_id"]],
    )


def share_part(d: Drive) -> Part:
    target = d.mine(shares=[])
    person = d.rng.choice(d.others)
    role = d.rng.choice(["viewer", "editor"])
    name, who = target["name"], person["name"]
    text = WORDINGS.draw(d.rng, f"share-{role}", who=who, name=name)
    head = [Call("search_files", {"query": name}), Call("find_user", {"query": who})]
    share = {"file_id": target["file_id"], "email": person["email"]}
    wrong = "editor" if role == "viewer" else "viewer"
    return near_swap(
        text,
        head,
        Call("share_file", {**share, "role": role}),
        "role",
        wrong,
        "shares-with-the-wrong-role",
        [target["file_id"]],
    )


def revoke_part(d: Drive) -> Part:
    leaving, staying = d.rng.sample(d.others, 2)
    target = d.mine(
        shares=[
            (leaving, d.rng.choice(["viewer", "editor"])),
            (staying, d.rng.choice(["viewer", "editor"])),
        ]
    )
    name, who = target["name"], leaving["name"]
    text = WORDINGS.draw(d.rng, "revoke", who=who, name=name)
    head = [Call("search_files", {"query": name}), Call("find_user", {"query": who})]
    return Part(
        text,
        [*head, Call("revoke_share", {"file_id": target["file_id"], "email": leaving["email"]})],
        (
            "revokes-the-wrong-person",
            [
                *head,
                Call("revoke_share", {"file_id": target["file_id"], "email": staying["email"]}),
            ],
        ),
        [target["file_id"]],
    )


def move_part(d: Drive) -> Part:
    by_name: dict[str, list[JSON]] = {}
    for folder in d.subs:
        by_name.setdefault(folder["name"], []).append(folder)
    leaf = d.rng.choice(sorted(n for n, fs in by_name.items() if len(fs) > 1))
    dest, decoy = d.rng.sample(by_name[leaf], 2)
    start = d.rng.choice([f for f in d.subs if f["name"] != leaf])
    if d.rng.random() < 0.4:  # a colleague's file that I may edit
        owner = d.rng.choice(d.others)
        target = d.add_file(start, owner=owner["user_id"], shares=[(d.me, "editor")])
    else:
        target = d.mine(start)
    name, where = target["name"], d.where(dest)
    text = WORDINGS.draw(d.rng, "move", name=name, where=where)
    head = [Call("search_files", {"query": name}), Call("find_folder", {"query": leaf})]
    move = {"file_id": target["file_id"]}
    return near_swap(
        text,
        head,
        Call("move_file", {**move, "folder_id": dest["folder_id"]}),
        "folder_id",
        decoy["folder_id"],
        "moves-into-the-wrong-folder",
        [target["file_id"], dest["folder_id"]],
    )


def untrash_part(d: Drive) -> Part:
    folder = d.rng.choice(d.subs)
    patterns = [p for p in DEPTS[d.dept_of(folder)["name"]] if extension(p) in KINDS]
    everywhere = [p for ps in DEPTS.values() for p in ps if extension(p) in KINDS]
    for attempt in range(300):
        pattern = d.rng.choice(patterns if attempt < 100 else everywhere)
        stem = name_stem(d.fill(pattern))
        if not any(stem in n for n in d.names):
            break
    else:
        raise AssertionError("files: no fresh name for the trash")
    ext, other_ext = extension(pattern), d.rng.choice([e for e in KINDS if e != extension(pattern)])
    target = d.mine(folder, name=stem + ext, trashed=True)
    twin = d.mine(folder, name=stem + other_ext, trashed=True)
    text = WORDINGS.draw(d.rng, "untrash", kind=KINDS[ext], stem=stem, ext=ext)
    head = [Call("list_trash", {})]
    return near_twin(text, head, "restore_file", "file_id", target, twin, "restores-the-wrong-file")


def rollback_part(d: Drive) -> Part:
    count = d.rng.randint(3, 5)
    if d.rng.random() < 0.3:
        owner = d.rng.choice(d.others)
        target = d.add_file(
            d.rng.choice(d.subs), owner=owner["user_id"], versions=count, shares=[(d.me, "editor")]
        )
    else:
        target = d.mine(versions=count)
    version = d.rng.randint(1, count - 2)
    when = pretty_date(target["versions"][version - 1]["modified"], d.state["today"])
    name = target["name"]
    text = WORDINGS.draw(d.rng, "rollback", name=name, when=when)
    head = [Call("search_files", {"query": name}), Call("get_file", {"file_id": target["file_id"]})]
    restore = {"file_id": target["file_id"]}
    return near_swap(
        text,
        head,
        Call("restore_version", {**restore, "version": version}),
        "version",
        count - 1,
        "restores-the-latest-previous-version",
        [target["file_id"]],
    )


def copy_part(d: Drive) -> Part:
    templates = [f for f in d.subs if f["name"] == "Templates"] or d.subs
    owner = d.rng.choice(d.others)
    source = d.add_file(
        d.rng.choice(templates),
        owner=owner["user_id"],
        name=d.fresh_name(patterns=TEMPLATES),
        shares=[(d.me, "viewer")],
    )
    dest = d.rng.choice([f for f in d.subs if f["folder_id"] != source["folder_id"]])
    new = d.fresh_name(
        patterns=[
            p for p in DEPTS[d.dept_of(dest)["name"]] if extension(p) == extension(source["name"])
        ]
        or [
            f"{{client}} {name_stem(source['name']).replace(' template', '').lower()}"
            f"{extension(source['name'])}"
        ]
    )
    name, where = source["name"], d.where(dest)
    text = WORDINGS.draw(d.rng, "copy", name=name, where=where, new=new)
    head = [Call("search_files", {"query": name}), Call("find_folder", {"query": dest["name"]})]
    copy = {"file_id": source["file_id"], "folder_id": dest["folder_id"]}
    return Part(
        text,
        [*head, Call("copy_file", {**copy, "new_name": new})],
        ("copy-keeps-the-template-name", [*head, Call("copy_file", copy)]),
        [source["file_id"], dest["folder_id"]],
    )


def link_part(d: Drive) -> Part:
    home, other = d.two_folders()
    target = d.mine(home)
    twin = d.mine(other, name=target["name"])
    name, where = target["name"], d.where(home)
    text = WORDINGS.draw(d.rng, "link", name=name, where=where)
    head = [Call("search_files", {"query": name})]
    return near_twin(
        text,
        head,
        "create_share_link",
        "file_id",
        target,
        twin,
        "links-the-other-copy",
        access="view",
    )


def tag_part(d: Drive) -> Part:
    home, other = d.two_folders()
    target = d.mine(home, tags=[])
    twin = d.mine(other, name=target["name"], tags=[])
    tag = d.rng.choice(["confidential", "final", "legal-hold", "needs-review"])
    name, where = target["name"], d.where(home)
    text = WORDINGS.draw(d.rng, "tag", name=name, where=where, tag=tag)
    head = [Call("search_files", {"query": name})]
    return near_twin(
        text, head, "tag_file", "file_id", target, twin, "tags-the-other-copy", tag=tag
    )


def trash_part(d: Drive) -> Part:
    keep_in, drop_in = d.two_folders()
    keep = d.mine(keep_in)
    drop = d.mine(drop_in, name=keep["name"])
    name = keep["name"]
    text = WORDINGS.draw(
        d.rng, "trash", name=name, drop=lambda: d.where(drop_in), keep=lambda: d.where(keep_in)
    )
    head = [Call("search_files", {"query": name})]
    return near_twin(text, head, "delete_file", "file_id", drop, keep, "deletes-the-wrong-copy")


def reorganise_part(d: Drive, count: int) -> Part:
    """Create a folder, then move files into it: the new folder's id feeds the moves."""
    parent = d.rng.choice(d.depts + d.subs)
    taken = {f["name"] for f in d.state["folders"] if f["parent_id"] == parent["folder_id"]}
    new = next(n for n in (d.fill(d.rng.choice(NEW_FOLDERS)) for _ in range(100)) if n not in taken)
    files = [d.mine(d.rng.choice([f for f in d.subs if f is not parent])) for _ in range(count)]
    names = [f'"{f["name"]}"' for f in files]
    listed = " and ".join(names)
    where = d.where(parent)
    text = WORDINGS.draw(d.rng, "reorganise", new=new, where=where, listed=listed)
    created = f"fo-{d.state['next_folder']}"  # the id create_folder will give it
    calls = [
        Call("find_folder", {"query": parent["name"]}),
        Call("create_folder", {"name": new, "parent_id": parent["folder_id"]}),
    ]
    wrong = list(calls)
    for i, file in enumerate(files):
        find = Call("search_files", {"query": file["name"]})
        calls += [find, Call("move_file", {"file_id": file["file_id"], "folder_id": created})]
        into = parent["folder_id"] if i == 0 else created
        wrong += [find, Call("move_file", {"file_id": file["file_id"], "folder_id": into})]
    return Part(
        text,
        calls,
        ("moves-into-the-parent-folder", wrong),
        [parent["folder_id"], *(f["file_id"] for f in files)],
    )


SIMPLE: list[Callable[[Drive], Part]] = [
    rename_part,
    share_part,
    revoke_part,
    move_part,
    untrash_part,
    rollback_part,
    copy_part,
    link_part,
    tag_part,
    trash_part,
]
