"""python-bugfix's generation logic, without Docker: every bug of the kind catalogue changes
the result of the case meant to reveal it, every edge bug fails its hidden edge tests, and a
generated package fails its visible tests as shipped and passes them with the fix."""

from __future__ import annotations

import copy
import functools
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from factory.errors import FactoryError
from factory.families import registry
from factory.families.terminal.python_bugfix.kinds import KINDS, load_kinds
from factory.vocabulary import Difficulty

FAMILY = registry.get("python-bugfix")


def source(key: str, bug: str | None = None) -> str:
    """A kind's code under its own name, with one bug (or edge bug) applied."""
    kind = KINDS[key]
    code = kind.code
    if bug is not None:
        for old, new in {**kind.bugs, **kind.edges}[bug]:
            assert code.count(old) == 1, f"{key}/{bug}: snippet not found once: {old!r}"
            code = code.replace(old, new)
    return re.sub(r"@(\w+)@", r"\1", code)


def namespace(*sources: str) -> dict:
    ns: dict = {"re": re, "functools": functools, "pytest": pytest}
    for text in sources:
        exec(text, ns)  # noqa: S102 - the catalogue under test
    return ns


def call(ns: dict, key: str, case) -> object:
    """The result of a case (or the exception it raised), and whether its ``post`` checks hold."""
    local = dict(ns)
    if case.setup:
        exec(re.sub(r"@(\w+)@", r"\1", case.setup), local)  # noqa: S102
    args = eval(re.sub(r"@(\w+)@", r"\1", case.args), local)  # noqa: S307
    try:
        result = ("ok", copy.deepcopy(local[key](*args)))
    except Exception as exc:  # noqa: BLE001 - an exception is a result too
        return ("raises", type(exc).__name__)
    try:
        exec(case.post, local)  # noqa: S102
    except AssertionError:
        return (*result, "post fails")
    return result


def helpers(key: str) -> list[str]:
    return [source(KINDS[key].helper)] if KINDS[key].helper else []


def test_every_bug_changes_the_result_of_its_revealing_case():
    """Every reveal case changes its result under its bug (a user kind's case: under every bug
    of its helper), so the task's failing visible test fails as shipped; the only exceptions
    are the helper bugs a user kind declares it hides, which no task shows through it."""
    silent, hidden = set(), set()
    for key, kind in KINDS.items():
        hidden |= {(key, kind.helper, bug) for bug in kind.hides}
        for target, case in kind.reveal.items():
            owner = key if target in kind.bugs else target
            bugs = [target] if owner == key else sorted(KINDS[owner].bugs)
            for bug in bugs:
                right_ns = namespace(*helpers(key), source(key))
                if owner == key:
                    wrong_ns = namespace(*helpers(key), source(key, bug))
                else:
                    wrong_ns = namespace(source(owner, bug), source(key))
                right, wrong = call(right_ns, key, case), call(wrong_ns, key, case)
                assert right[0] == "ok", (key, target, right)
                if wrong == right:
                    silent.add((key, owner, bug))
    assert silent == hidden
    assert hidden  # free_minutes hides merge_intervals' touching bug


def test_no_task_shows_a_bug_through_a_kind_that_hides_it():
    for difficulty in Difficulty:
        for seed in range(60):
            d = FAMILY.draft(random.Random(seed), difficulty, {})
            shown = d.context["shown"]
            helper = KINDS[shown].helper
            shown_bugs = [f.split(":")[1] for f in d.faults if f.split(":")[0] == helper]
            assert not set(shown_bugs) & set(KINDS[shown].hides), (difficulty, seed, d.faults)


def differs_on_generated_inputs(key: str, edge: str, rounds: int = 300) -> bool:
    """What the hidden property checks do: the function against the reference on gen(rng)."""
    gen = namespace(re.sub(r"@(\w+)@", r"\1", KINDS[key].gen))["gen"]
    right_ns = namespace(*helpers(key), source(key))
    wrong_ns = namespace(*helpers(key), source(key, edge))
    for seed in range(rounds):
        args = gen(random.Random(seed))

        def run(ns: dict, args=args) -> object:
            try:
                return ("ok", ns[key](*copy.deepcopy(args)))
            except Exception as exc:  # noqa: BLE001 - an exception is a result too
                return ("raises", type(exc).__name__)

        if run(right_ns) != run(wrong_ns):
            return True
    return False


@pytest.mark.parametrize("key", sorted(k for k in KINDS if KINDS[k].edges))
def test_every_edge_bug_is_caught_by_the_hidden_tests_and_by_no_visible_case(key):
    kind = KINDS[key]
    tests = re.sub(r"@(\w+)@", r"\1", kind.edge_tests)

    def edge_tests_pass(code: str) -> bool:
        ns = namespace(*helpers(key), code, tests)
        try:
            for name in [n for n in ns if n.startswith("test_")]:
                ns[name]()
        except (Exception, pytest.fail.Exception):  # noqa: BLE001 - a failed check, as in pytest
            return False
        return True

    assert edge_tests_pass(source(key))
    for edge in kind.edges:
        caught = not edge_tests_pass(source(key, edge)) or differs_on_generated_inputs(key, edge)
        assert caught, (key, edge)
        for case in kind.basic:  # the visible cases cannot see an edge bug
            right = call(namespace(*helpers(key), source(key)), key, case)
            assert call(namespace(*helpers(key), source(key, edge)), key, case) == right


def write_app(files: dict[str, str], root: Path) -> None:
    """The task's /app under ``root``: ``environment/app/`` files and package-relative ones."""
    for rel, text in files.items():
        path = root / rel.removeprefix("environment/app/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def pytest_in(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )


def run_visible_tests(files: dict[str, str], root: Path) -> subprocess.CompletedProcess:
    write_app(files, root)
    return pytest_in(root, "-p", "no:randomly")


@pytest.mark.parametrize("difficulty", list(Difficulty))
def test_shipped_package_fails_its_visible_tests_and_the_fix_passes_them(difficulty, tmp_path):
    d = FAMILY.draft(random.Random(11), difficulty, {})
    shipped = {rel: text for rel, text in d.files.items() if isinstance(text, str)}
    broken = run_visible_tests(shipped, tmp_path / "broken")
    assert broken.returncode == 1, broken.stdout[-2000:]
    assert "1 failed" in broken.stdout  # exactly the test that shows the bug
    fixed = dict(shipped)
    for rel, text in d.context["fixed"].items():
        fixed[f"environment/app/{rel}"] = text
    repaired = run_visible_tests(fixed, tmp_path / "fixed")
    assert repaired.returncode == 0, repaired.stdout[-2000:]
    # medium and hard hide one more bug that no visible test covers
    changed = [
        rel
        for rel in d.context["fixed"]
        if d.files[f"environment/app/{rel}"] != d.context["fixed"][rel]
    ]
    assert changed and d.outputs == [f"/app/{rel}" for rel in sorted(changed)]


def test_same_seed_same_package():
    one = FAMILY.draft(random.Random(5), Difficulty.HARD, {})
    two = FAMILY.draft(random.Random(5), Difficulty.HARD, {})
    assert one.files == two.files and one.context == two.context


def test_a_broken_kind_file_is_reported_with_its_file_and_field(tmp_path):
    (tmp_path / "double.toml").write_text(
        'names = ["double"]\ncode = "def @double@(x): return 2 * x"\n'
    )
    with pytest.raises(FactoryError, match=r"double\.toml: gen: Field required"):
        load_kinds(tmp_path)
    (tmp_path / "double.toml").write_text(
        'names = ["d"]\ncode = "x"\ngen = "y"\nhelper = "nothing"\n'
    )
    with pytest.raises(FactoryError, match=r"double\.toml: helper: unknown kind 'nothing'"):
        load_kinds(tmp_path)
    (tmp_path / "double.toml").write_text(
        'names = ["d"]\ncode = "x"\ngen = "y"\nhides = ["touching"]\n'
    )
    with pytest.raises(FactoryError, match=r"double\.toml: hides: 'touching' is not a bug"):
        load_kinds(tmp_path)
    (tmp_path / "double.toml").write_text("names = [")
    with pytest.raises(FactoryError, match=r"double\.toml: invalid TOML"):
        load_kinds(tmp_path)


def run_hidden_tests(d, package: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    """The rendered hidden tests run here against ``package`` (the task's /app under tmp_path)."""
    app = tmp_path / "app"
    write_app({r: t for r, t in d.files.items() if r.startswith("environment/app/")}, app)
    write_app(package, app)
    context = {**d.context, "difficulty": "hard", "task_id": "t"}
    tests = FAMILY.template("tests/test_outputs.py.j2").render(**context)
    (tmp_path / "test_hidden.py").write_text(tests.replace('"/app', f'"{app}'))
    return pytest_in(tmp_path, "-x", "test_hidden.py")


@pytest.mark.parametrize("seed", [3, 8])
def test_hidden_tests_run_the_package_out_of_process(seed, tmp_path):
    d = FAMILY.draft(random.Random(seed), Difficulty.HARD, {})
    tests = FAMILY.template("tests/test_outputs.py.j2").render(**d.context)
    assert f"from {d.context['pkg']} import" not in tests
    fixed = run_hidden_tests(d, d.context["fixed"], tmp_path / "fixed")
    assert fixed.returncode == 0, fixed.stdout[-3000:]
    broken = run_hidden_tests(d, {}, tmp_path / "broken")
    assert broken.returncode == 1, broken.stdout[-3000:]
    # a package that ends the interpreter on import (the exit-on-import probe) passes nothing
    init = f"{d.context['pkg']}/__init__.py"
    exiting = {**d.context["fixed"], init: "import os\nos._exit(0)\n"}
    cheat = run_hidden_tests(d, exiting, tmp_path / "cheat")
    assert cheat.returncode == 1 and "the package exited" in cheat.stdout, cheat.stdout[-3000:]
