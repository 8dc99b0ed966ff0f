"""Cloud file storage: a company drive with a folder tree, files with owners, tags and version
history, per-person sharing, share links, a trash and per-user storage quotas."""

from __future__ import annotations

from ..core import JSON, Domain, ToolError, acting_user, find, finder, lookup, require

POLICY = """\
# Drive policy

1. You act for the acting user (see `get_account`). You can only see and work on files they own
   or that were shared with them.
2. Only a file's **owner** may move it to the trash, restore it from the trash, share it, revoke
   someone's access or create a share link. Renaming, moving, tagging and restoring an older
   version need ownership or **editor** access; viewers cannot change a file.
3. `share_file` only ever gives access to addresses of the company domain (see
   `get_account`). The one way to share with someone outside the company is a **view-only**
   share link; edit links are never created.
4. Files tagged `confidential` are never shared outside the company and never get a share link
   of any kind. Never remove the `confidential` tag from a file.
5. A user's storage quota cannot be exceeded. Usage is the total size of the current versions of
   the files a user owns, files in the trash included. Never copy a file, or restore an older
   (larger) version, when that would take the owner past their quota; check `get_quota` first.
6. Look people, files and folders up with the tools; never guess an id.
"""

HANDOVERS = {
    "purged_file": "a file must come back that is no longer in the trash (deleted for good: "
    "only IT can restore it from backups)",
    "leaver_files": "someone wants the files of a colleague who has left the company",
}

DOMAIN = Domain("files", "Cloud Drive", POLICY, handovers=HANDOVERS)

_ID = {"type": "string"}


# --- helpers (also used by the rules) -----------------------------------------------------------
def _role(state: JSON, file: JSON) -> str:
    """The acting user's access to a file: owner, editor, viewer or '' (none)."""
    me = acting_user(state)
    if file["owner"] == me["user_id"]:
        return "owner"
    for share in file["shares"]:
        if share["email"] == me["email"]:
            return share["role"]
    return ""


def _lookup(state: JSON, file_id: str) -> JSON | None:
    for file in state["files"]:
        if file["file_id"] == file_id and _role(state, file):
            return file
    return None


def _file(state: JSON, file_id: str) -> JSON:
    file = _lookup(state, file_id)
    if file is None:
        raise ToolError(f'no file with file_id "{file_id}" that you can access')
    return file


def _live(state: JSON, file_id: str) -> JSON:
    file = _file(state, file_id)
    require(not file["trashed"], f"{file_id} is in the trash; restore it first")
    return file


_folder = finder("folders", "folder_id", "folder")


def _path(state: JSON, folder_id: str) -> str:
    parts: list[str] = []
    folder = _folder(state, folder_id)
    while folder["parent_id"]:
        parts.append(folder["name"])
        folder = _folder(state, folder["parent_id"])
    return "/" + "/".join(reversed(parts))


def _user_name(state: JSON, user_id: str) -> str:
    return next((u["name"] for u in state["users"] if u["user_id"] == user_id), user_id)


def usage(state: JSON, user_id: str) -> int:
    """Bytes a user's files take (current versions, trash included)."""
    return sum(f["size"] for f in state["files"] if f["owner"] == user_id)


def _quota(state: JSON, user_id: str) -> JSON:
    user = find(state["users"], "user_id", user_id, "user")
    used = usage(state, user_id)
    return {
        "user_id": user_id,
        "quota_bytes": user["quota_bytes"],
        "used_bytes": used,
        "free_bytes": user["quota_bytes"] - used,
    }


def _summary(state: JSON, file: JSON) -> JSON:
    last = file["versions"][-1]
    out = {
        "file_id": file["file_id"],
        "name": file["name"],
        "folder_id": file["folder_id"],
        "path": _path(state, file["folder_id"]),
        "owner": file["owner"],
        "owner_name": _user_name(state, file["owner"]),
        "size": file["size"],
        "tags": file["tags"],
        "version": last["version"],
        "modified": last["modified"],
        "your_access": _role(state, file),
    }
    if file["trashed"]:
        out["trashed_on"] = file["trashed_on"]
    return out


def _name_free(state: JSON, folder_id: str, name: str, skip: str = "") -> None:
    for file in state["files"]:
        if (
            file["folder_id"] == folder_id
            and file["name"] == name
            and not file["trashed"]
            and file["file_id"] != skip
        ):
            raise ToolError(
                f'a file named "{name}" already exists in {_path(state, folder_id)} '
                f"({file['file_id']})"
            )


def _check_name(name: str) -> str:
    name = name.strip()
    require(bool(name), "the name must not be empty")
    require("/" not in name, "a name cannot contain '/'")
    return name


def _domain_of(email: str) -> str:
    return email.rsplit("@", 1)[-1].lower() if "@" in email else ""


# --- read-only tools ------------------------------------------------------------------------------
@DOMAIN.tool("The acting user, the company's email domain, the drive's root folder and today.")
def get_account(state: JSON) -> JSON:
    root = next(f for f in state["folders"] if not f["parent_id"])
    return {
        "user": {k: v for k, v in acting_user(state).items() if k != "quota_bytes"},
        "company_domain": state["company_domain"],
        "root_folder": root["folder_id"],
        "today": state["today"],
    }


@DOMAIN.tool(
    "Find colleagues whose name or email contains the query (case-insensitive).",
    {"query": {"type": "string"}},
)
def find_user(state: JSON, query: str) -> list[JSON]:
    q = query.lower().strip()
    return [
        {k: u[k] for k in ("user_id", "name", "email")}
        for u in state["users"]
        if q in u["name"].lower() or q in u["email"].lower()
    ]


@DOMAIN.tool(
    "Files you can access (not in the trash) whose name contains the query "
    "(case-insensitive), optionally only those with a tag.",
    {"query": {"type": "string"}, "tag": {"type": "string"}},
    required=["query"],
)
def search_files(state: JSON, query: str, tag: str = "") -> list[JSON]:
    q, tag = query.lower().strip(), tag.lower().strip()
    hits = [
        f
        for f in state["files"]
        if not f["trashed"]
        and _role(state, f)
        and q in f["name"].lower()
        and (not tag or tag in f["tags"])
    ]
    rows = [_summary(state, f) for f in hits]
    return sorted(rows, key=lambda r: (r["path"], r["name"], r["file_id"]))


@DOMAIN.tool(
    "Folders whose name contains the query (case-insensitive), with their full path.",
    {"query": {"type": "string"}},
)
def find_folder(state: JSON, query: str) -> list[JSON]:
    q = query.lower().strip()
    rows = [
        {"folder_id": f["folder_id"], "name": f["name"], "path": _path(state, f["folder_id"])}
        for f in state["folders"]
        if f["parent_id"] and q in f["name"].lower()
    ]
    return sorted(rows, key=lambda r: r["path"])


@DOMAIN.tool(
    "A folder's subfolders and the files in it that you can access (not in the trash). "
    "get_account gives the id of the drive's root folder.",
    {"folder_id": _ID},
)
def list_folder(state: JSON, folder_id: str) -> JSON:
    folder = _folder(state, folder_id)
    subfolders = [
        {"folder_id": f["folder_id"], "name": f["name"], "path": _path(state, f["folder_id"])}
        for f in state["folders"]
        if f["parent_id"] == folder_id
    ]
    files = [
        _summary(state, f)
        for f in state["files"]
        if f["folder_id"] == folder_id and not f["trashed"] and _role(state, f)
    ]
    return {
        "folder_id": folder_id,
        "name": folder["name"],
        "path": _path(state, folder_id),
        "subfolders": sorted(subfolders, key=lambda r: r["name"]),
        "files": sorted(files, key=lambda r: r["name"]),
    }


@DOMAIN.tool(
    "Everything about one file: version history, who it is shared with, share links.",
    {"file_id": _ID},
)
def get_file(state: JSON, file_id: str) -> JSON:
    file = _file(state, file_id)
    return {
        **_summary(state, file),
        "versions": file["versions"],
        "shares": file["shares"],
        "links": file["links"],
    }


@DOMAIN.tool("Files the acting user owns that are in the trash.")
def list_trash(state: JSON) -> list[JSON]:
    rows = [
        _summary(state, f)
        for f in state["files"]
        if f["trashed"] and f["owner"] == state["acting_user"]
    ]
    return sorted(rows, key=lambda r: (r["name"], r["file_id"]))


@DOMAIN.tool(
    "Storage quota and usage of a user (default: the acting user), in bytes.",
    {"user_id": _ID},
    required=[],
)
def get_quota(state: JSON, user_id: str = "") -> JSON:
    return _quota(state, user_id or state["acting_user"])


# --- changes -------------------------------------------------------------------------------------
@DOMAIN.tool(
    "Create a folder inside another folder; returns the new folder.",
    {"name": {"type": "string"}, "parent_id": _ID},
    mutates=True,
)
def create_folder(state: JSON, name: str, parent_id: str) -> JSON:
    name = _check_name(name)
    _folder(state, parent_id)
    for folder in state["folders"]:
        require(
            not (folder["parent_id"] == parent_id and folder["name"].lower() == name.lower()),
            f'{_path(state, parent_id)} already has a folder "{folder["name"]}" '
            f"({folder['folder_id']})",
        )
    folder = {
        "folder_id": f"fo-{state['next_folder']}",
        "name": name,
        "parent_id": parent_id,
        "owner": state["acting_user"],
        "created": state["today"],
    }
    state["next_folder"] += 1
    state["folders"].append(folder)
    return {**folder, "path": _path(state, folder["folder_id"])}


@DOMAIN.tool("Move a file into another folder.", {"file_id": _ID, "folder_id": _ID}, mutates=True)
def move_file(state: JSON, file_id: str, folder_id: str) -> JSON:
    file = _live(state, file_id)
    _folder(state, folder_id)
    require(file["folder_id"] != folder_id, f"{file_id} is already in {_path(state, folder_id)}")
    _name_free(state, folder_id, file["name"])
    file["folder_id"] = folder_id
    return _summary(state, file)


@DOMAIN.tool(
    "Rename a file (it stays in its folder).",
    {"file_id": _ID, "new_name": {"type": "string"}},
    mutates=True,
)
def rename_file(state: JSON, file_id: str, new_name: str) -> JSON:
    file = _live(state, file_id)
    new_name = _check_name(new_name)
    require(new_name != file["name"], f'{file_id} is already called "{new_name}"')
    _name_free(state, file["folder_id"], new_name, skip=file_id)
    file["name"] = new_name
    return _summary(state, file)


@DOMAIN.tool(
    "Copy a file into a folder (optionally under a new name). The copy belongs to the acting "
    "user, starts at version 1, keeps the tags and is shared with nobody.",
    {"file_id": _ID, "folder_id": _ID, "new_name": {"type": "string"}},
    required=["file_id", "folder_id"],
    mutates=True,
)
def copy_file(state: JSON, file_id: str, folder_id: str, new_name: str = "") -> JSON:
    source = _live(state, file_id)
    _folder(state, folder_id)
    name = _check_name(new_name) if new_name else source["name"]
    _name_free(state, folder_id, name)
    copy = {
        "file_id": f"fl-{state['next_file']}",
        "name": name,
        "folder_id": folder_id,
        "owner": state["acting_user"],
        "size": source["size"],
        "tags": list(source["tags"]),
        "versions": [
            {
                "version": 1,
                "modified": state["today"],
                "modified_by": state["acting_user"],
                "size": source["size"],
            }
        ],
        "shares": [],
        "links": [],
        "trashed": False,
        "trashed_on": "",
    }
    state["next_file"] += 1
    state["files"].append(copy)
    return _summary(state, copy)


@DOMAIN.tool(
    "Give someone access to a file by email, as viewer or editor (changes the role of an "
    "existing share).",
    {
        "file_id": _ID,
        "email": {"type": "string"},
        "role": {"type": "string", "enum": ["viewer", "editor"]},
    },
    mutates=True,
)
def share_file(state: JSON, file_id: str, email: str, role: str) -> JSON:
    file = _live(state, file_id)
    email = email.strip().lower()
    require("@" in email and "." in _domain_of(email), f'"{email}" is not an email address')
    owner = find(state["users"], "user_id", file["owner"], "user")
    require(email != owner["email"], f"{email} owns {file_id}")
    for share in file["shares"]:
        if share["email"] == email:
            require(share["role"] != role, f"{email} is already {role} of {file_id}")
            share["role"] = role
            break
    else:
        file["shares"].append({"email": email, "role": role, "since": state["today"]})
    file["shares"].sort(key=lambda s: s["email"])
    return {"file_id": file_id, "shares": file["shares"]}


@DOMAIN.tool(
    "Remove someone's access to a file.",
    {"file_id": _ID, "email": {"type": "string"}},
    mutates=True,
)
def revoke_share(state: JSON, file_id: str, email: str) -> JSON:
    file = _file(state, file_id)
    email = email.strip().lower()
    require(
        any(s["email"] == email for s in file["shares"]), f"{file_id} is not shared with {email}"
    )
    file["shares"] = [s for s in file["shares"] if s["email"] != email]
    return {"file_id": file_id, "shares": file["shares"]}


@DOMAIN.tool(
    "Create a share link to a file: anyone with the link can view (or edit) it.",
    {"file_id": _ID, "access": {"type": "string", "enum": ["view", "edit"]}},
    mutates=True,
)
def create_share_link(state: JSON, file_id: str, access: str) -> JSON:
    file = _live(state, file_id)
    require(
        not any(link["access"] == access for link in file["links"]),
        f"{file_id} already has a {access} link",
    )
    link = {
        "link_id": f"lnk-{state['next_link']}",
        "access": access,
        "created": state["today"],
        "url": f"https://drive.{state['company_domain']}/s/lnk-{state['next_link']}",
    }
    state["next_link"] += 1
    file["links"].append(link)
    return {"file_id": file_id, **link}


@DOMAIN.tool("Move a file to the trash.", {"file_id": _ID}, mutates=True)
def delete_file(state: JSON, file_id: str) -> JSON:
    file = _file(state, file_id)
    require(not file["trashed"], f"{file_id} is already in the trash")
    file["trashed"] = True
    file["trashed_on"] = state["today"]
    return _summary(state, file)


@DOMAIN.tool(
    "Restore a file from the trash into the folder it was deleted from.",
    {"file_id": _ID},
    mutates=True,
)
def restore_file(state: JSON, file_id: str) -> JSON:
    file = _file(state, file_id)
    require(file["trashed"], f"{file_id} is not in the trash")
    _name_free(state, file["folder_id"], file["name"])
    file["trashed"] = False
    file["trashed_on"] = ""
    return _summary(state, file)


@DOMAIN.tool(
    "Make an older version current again: it is added as a new version on top of the history.",
    {"file_id": _ID, "version": {"type": "integer"}},
    mutates=True,
)
def restore_version(state: JSON, file_id: str, version: int) -> JSON:
    file = _live(state, file_id)
    old = lookup(file["versions"], "version", version)
    require(
        old is not None,
        f"{file_id} has no version {version}; versions: "
        + ", ".join(str(v["version"]) for v in file["versions"]),
    )
    current = file["versions"][-1]
    require(version != current["version"], f"version {version} is already the current one")
    file["versions"].append(
        {
            "version": current["version"] + 1,
            "modified": state["today"],
            "modified_by": state["acting_user"],
            "size": old["size"],
            "restored_from": version,
        }
    )
    file["size"] = old["size"]
    return _summary(state, file)


@DOMAIN.tool(
    "Add a tag to a file (tags are lower-case).",
    {"file_id": _ID, "tag": {"type": "string"}},
    mutates=True,
)
def tag_file(state: JSON, file_id: str, tag: str) -> JSON:
    file = _live(state, file_id)
    tag = tag.strip().lower()
    require(bool(tag), "the tag must not be empty")
    require(tag not in file["tags"], f'{file_id} is already tagged "{tag}"')
    file["tags"] = sorted([*file["tags"], tag])
    return _summary(state, file)


@DOMAIN.tool("Remove a tag from a file.", {"file_id": _ID, "tag": {"type": "string"}}, mutates=True)
def untag_file(state: JSON, file_id: str, tag: str) -> JSON:
    file = _live(state, file_id)
    tag = tag.strip().lower()
    require(tag in file["tags"], f'{file_id} is not tagged "{tag}"')
    file["tags"] = [t for t in file["tags"] if t != tag]
    return _summary(state, file)


# --- policy ---------------------------------------------------------------------------------------
_OWNER_ONLY = ("delete_file", "restore_file", "share_file", "revoke_share", "create_share_link")
_EDITOR = ("rename_file", "move_file", "restore_version", "tag_file", "untag_file")


@DOMAIN.rule_on(*_OWNER_ONLY)
def owner_only(state: JSON, tool: str, args: JSON) -> str | None:
    file = _lookup(state, args.get("file_id", ""))
    if file and file["owner"] != state["acting_user"]:
        owner = _user_name(state, file["owner"])
        return f"{tool} on {file['file_id']} ({file['name']}), which {owner} owns"
    return None


@DOMAIN.rule_on(*_EDITOR)
def editor_access(state: JSON, tool: str, args: JSON) -> str | None:
    file = _lookup(state, args.get("file_id", ""))
    if file and _role(state, file) == "viewer":
        return f"{tool} on {file['file_id']} ({file['name']}), which you may only view"
    return None


@DOMAIN.rule_on("share_file")
def company_only(state: JSON, tool: str, args: JSON) -> str | None:
    email = str(args.get("email", "")).strip().lower()
    if "@" in email and _domain_of(email) != state["company_domain"].lower():
        return f"share_file with {email}, outside {state['company_domain']}"
    return None


@DOMAIN.rule
def no_edit_links(state: JSON, tool: str, args: JSON) -> str | None:
    if tool == "create_share_link" and args.get("access") == "edit":
        return f"an edit link for {args.get('file_id')}"
    return None


@DOMAIN.rule
def confidential(state: JSON, tool: str, args: JSON) -> str | None:
    file = _lookup(state, args.get("file_id", ""))
    if file is None or "confidential" not in file["tags"]:
        return None
    if tool == "create_share_link":
        return f"a share link for the confidential file {file['file_id']} ({file['name']})"
    if tool == "untag_file" and str(args.get("tag", "")).strip().lower() == "confidential":
        return f"removing the confidential tag from {file['file_id']} ({file['name']})"
    return None


@DOMAIN.rule
def quota(state: JSON, tool: str, args: JSON) -> str | None:
    file = _lookup(state, args.get("file_id", ""))
    if file is None or file["trashed"]:
        return None
    if tool == "copy_file":
        owner, extra = state["acting_user"], file["size"]
    elif tool == "restore_version":
        old = lookup(file["versions"], "version", args.get("version"))
        if old is None:
            return None
        owner, extra = file["owner"], old["size"] - file["size"]
    else:
        return None
    user = lookup(state["users"], "user_id", owner)
    if user and extra > 0 and usage(state, owner) + extra > user["quota_bytes"]:
        free = user["quota_bytes"] - usage(state, owner)
        return (
            f"{tool} of {file['file_id']} needs {extra} bytes but {user['name']} has only "
            f"{free} bytes of quota left"
        )
    return None
