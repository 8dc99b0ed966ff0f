#!/usr/bin/env python3
"""Build a git repository by replaying plan.json (written by the git-repair family).

Every commit's author, committer and dates come from the plan, so the commit ids are fixed:
each one is checked against the id the plan expects and the build fails on a mismatch.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

plan = json.loads(Path(sys.argv[1]).read_text())
repo = Path("/")


def git(*args, when=None, who=None, check=True):
    env = dict(os.environ)
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    if who:
        env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = who[0]
        env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = who[1]
    run = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    if check and run.returncode:
        sys.exit(f"git {' '.join(args)} failed:\n{run.stdout}\n{run.stderr}")
    return run


def write(files):
    for rel, content in files.items():
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode())


for op in plan["ops"]:
    kind = op["op"]
    when = op.get("time")
    if kind == "init":
        repo = Path(op["path"])
        repo.mkdir(parents=True, exist_ok=True)
        git("init", "-q", "-b", op["branch"])
    elif kind == "commit":
        write(op["write"])
        for rel in op["delete"]:
            git("rm", "-q", rel)
        git("add", "-A")
        git("commit", "-q", "-m", op["subject"], when=when, who=op["author"])
        got = git("rev-parse", "HEAD").stdout.strip()
        if got != op["expect"]:
            sys.exit(f"commit {op['subject']!r}: id {got}, plan expects {op['expect']}")
    elif kind == "branch":
        git("branch", op["name"], op["at"])
    elif kind == "tag":
        git("tag", op["name"], op["at"])
    elif kind == "checkout":
        git("checkout", "-q", op["ref"], when=when)
    elif kind == "detach":
        git("checkout", "-q", "--detach", op["at"], when=when)
    elif kind == "reset":
        git("reset", "-q", "--hard", op["to"], when=when)
    elif kind == "delete-branch":
        git("branch", "-q", "-D", op["name"])
    elif kind == "merge":
        run = git(
            "merge", "--no-ff", "-m", op["message"], op["branch"],
            when=when, who=op["author"], check=False,
        )
        if run.returncode == 0 or not (repo / ".git" / "MERGE_HEAD").exists():
            sys.exit(f"merging {op['branch']} did not stop at conflicts:\n{run.stdout}{run.stderr}")
    elif kind == "worktree":
        write(op["write"])
    elif kind == "expire":
        git("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
        (repo / ".git" / "ORIG_HEAD").unlink(missing_ok=True)
    else:
        sys.exit(f"unknown op {kind}")
