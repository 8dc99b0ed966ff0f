"""file-search's collect hook: what the separate verifier's tests check of the tree, recorded
in the agent's container."""

from __future__ import annotations

import json
import posixpath
import shlex

SNAPSHOT = "/var/lib/factory-verifier/file-search.json"
"""Where the separate verifier's collect hook writes what the tests check of the tree."""
_SNAPSHOT_CODE = """
import hashlib, json, os, sys
root, dest, rels, out = json.loads(sys.argv[1])


def fact(path):
    if not os.path.lexists(path):
        return None
    found = {"link": os.path.islink(path), "file": os.path.isfile(path)}
    if found["link"]:
        found["target"] = os.readlink(path)
    if found["file"]:
        with open(path, "rb") as handle:
            found["sha"] = hashlib.sha256(handle.read()).hexdigest()
        found["mtime"] = int(os.stat(path).st_mtime)
    return found


tree = {"root": {rel: fact(os.path.join(root, rel)) for rel in rels}, "dest": None}
if os.path.isdir(dest):
    tree["dest"] = {}
    for top, dirs, files in os.walk(dest):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            path = os.path.join(top, name)
            tree["dest"][os.path.relpath(path, dest)] = fact(path)
with open(out, "w") as handle:
    json.dump(tree, handle)
"""
_EVERYTHING = """
everything = {}
for top, dirs, files in os.walk(root):
    for path in ([top] if top == root else []) + [os.path.join(top, n) for n in dirs + files]:
        st = os.lstat(path)
        kind = "l" if os.path.islink(path) else "d" if os.path.isdir(path) else "f"
        rel = os.path.relpath(path, root)
        everything[rel] = [kind, st.st_mode & 0o7777, st.st_uid, st.st_size]
tree["all"] = everything
"""


def snapshot_hook(
    root: str, dest: str, rels: list[str], out: str = SNAPSHOT, everything: bool = False
) -> str:
    """The collect hook: in the agent's container (its processes frozen, python restored from
    the image), record for each path of the tree the tests check (``rels`` under ``root``)
    and for everything under ``dest`` what the tests read of it: whether it exists, is a
    link (and to what), is a file (its sha256 and whole-second mtime). It writes
    ``out`` (:data:`SNAPSHOT`) afresh: whatever the agent left in its folder is removed first.
    With ``everything`` (hard), also every entry under ``root`` (not following links): its kind,
    mode bits, owner's uid and size."""
    folder = shlex.quote(posixpath.dirname(out))
    data = json.dumps([root, dest, rels, out])
    code = _SNAPSHOT_CODE
    if everything:
        at = code.index("with open(out")
        code = code[:at] + _EVERYTHING.lstrip("\n") + code[at:]
    return (
        f"rm -rf {folder} && mkdir -p {folder} && "
        f"python3 -I -c {shlex.quote(code)} {shlex.quote(data)}"
    )
