"""Verifier of a repo-bug task: run the project's own tests against the agent's /app.

Trusts nothing the agent wrote beyond running it: works on a copy of /app; the project's test
files and test configuration must be unchanged (digests in spec.json); conftest files the agent
added are dropped; the held-out tests are put back from this folder; pytest (pinned in the
image) runs in isolated mode without plugin autoload or cache, with a fixed rootdir and
confcutdir; and every expected test must have run with no case failing (a parametrized
test's case ids may differ between Python versions; its function id does not): the tests the
bug breaks must pass, the regression sample may skip where an optional dependency is missing.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.realpath(__file__))
CONFIG_FILES = {"pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", "conftest.py"}
BYTECODE = "/opt/rb-bytecode"
"""The image's bytecode of /app's files (its __pycache__ folders), compiled at build time for a
copy at WORK/app: the project's modules checked-hash, the test modules as pytest rewrites them."""
WORK = "/tmp/rb-verify"


def digest(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def restore(visible, inserts):
    lines = visible.splitlines(keepends=True)
    for index, block in inserts:
        lines[index:index] = block.splitlines(keepends=True)
    return "".join(lines)


def prepare(spec, app):
    """Copy /app, check the protected files, drop foreign config, put the hidden tests back."""
    shutil.copytree(
        spec["root"],
        app,
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"),
    )
    problems = []
    for rel, sha in sorted(spec["protected"].items()):
        path = os.path.join(app, rel)
        if os.path.islink(path) or not os.path.isfile(path) or digest(path)[: len(sha)] != sha:
            problems.append(f"{rel} was changed, moved or removed")
    for folder, _dirs, files in os.walk(app):
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), app)
            foreign = name == "conftest.py" or (folder == app and name in CONFIG_FILES)
            if foreign and rel not in spec["protected"]:
                os.unlink(os.path.join(app, rel))
    for rel, entry in sorted(spec["restore"].items()):
        path = os.path.join(app, rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as handle:
            text = restore(handle.read(), entry["inserts"])
        if hashlib.sha256(text.encode()).hexdigest()[: len(entry["sha256"])] != entry["sha256"]:
            problems.append(f"{rel}: the held-out tests cannot be put back (was it edited?)")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    return problems


def workdir():
    """WORK where the image has bytecode for it and nothing is there yet (a fresh verifier
    container), else a new temporary folder (where every module is compiled afresh)."""
    if os.path.isdir(BYTECODE) and not os.path.lexists(WORK):
        os.mkdir(WORK, 0o700)
        return WORK
    return tempfile.mkdtemp(prefix="verify-")


def add_bytecode(app):
    """Put the image's __pycache__ folders into the copy next to the files they were compiled
    from, never through a link. Python takes a module's bytecode only while its source has the
    same hash, pytest a test module's only while its mtime and size are the same: an edited or
    restored file is compiled afresh."""
    root = os.path.realpath(app)
    for folder, dirs, _files in os.walk(BYTECODE):
        if os.path.basename(folder) != "__pycache__":
            continue
        dirs[:] = []
        rel = os.path.relpath(os.path.dirname(folder), BYTECODE)
        target = os.path.normpath(os.path.join(root, rel))
        dest = os.path.join(target, "__pycache__")
        if os.path.realpath(target) != target or not os.path.isdir(target):
            continue  # a link, or a folder the agent removed
        if not os.path.lexists(dest):
            shutil.copytree(folder, dest, symlinks=True)


def main():
    with open(os.path.join(HERE, "spec.json"), encoding="utf-8") as handle:
        spec = json.load(handle)
    work = workdir()
    app = os.path.join(work, "app")
    problems = prepare(spec, app)
    if problems:
        print("FAIL: the project's tests must stay as they are:\n  " + "\n  ".join(problems))
        return 1
    if work == WORK:
        add_bytecode(app)
    out = os.path.join(work, "outcomes.json")
    command = [
        sys.executable,
        "-I",
        "-B",
        os.path.join(HERE, "rb_run.py"),
        "--root",
        app,
        "--out",
        out,
    ]
    for entry in spec["pythonpath"]:
        command += ["--pythonpath", entry]
    command += ["--tb", "line", "--", *spec["run"]]  # the verdict needs each crash line only
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": work,
        "LANG": "C.UTF-8",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    try:
        run = subprocess.run(
            command, cwd=app, env=env, capture_output=True, text=True, timeout=spec["timeout"]
        )
    except subprocess.TimeoutExpired:
        print(f"FAIL: the tests did not finish within {spec['timeout']} s")
        return 1
    print(run.stdout[-6000:], run.stderr[-2000:])
    try:
        with open(out, encoding="utf-8") as handle:
            results = json.load(handle)["results"]
    except (OSError, ValueError, KeyError):
        print("FAIL: pytest recorded no outcomes")
        return 1
    by_function = {}
    for nodeid, record in results.items():
        by_function.setdefault(nodeid.split("[", 1)[0], []).append((nodeid, record))
    bad = []
    regress = spec.get("regress", [])
    for test in spec["expect"] + regress:
        cases = by_function.get(test, [])
        failed = [(n, r) for n, r in cases if r["outcome"] == "failed"]
        if failed:
            bad += [f"{n}: failed {r.get('message', '')[:300]}" for n, r in failed]
        elif not cases:
            bad.append(f"{test}: not run")
        elif test not in regress and not any(r["outcome"] == "passed" for _n, r in cases):
            bad.append(f"{test}: skipped")  # a regression test may skip (optional dependency)
    if bad:
        print(f"FAIL: expected tests did not pass ({len(bad)}):")
        print("\n".join("  " + line for line in bad[:30]))
        return 1
    print(f"OK: all {len(spec['expect']) + len(regress)} expected tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
