"""repo-bug held-out tests and the task verifier's preparation, without Docker: the hidden test
functions come back byte for byte; edited tests, foreign conftest files and forged outcomes
do not count."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from factory.families.terminal.repo_bug.family import RepoBug
from factory.families.terminal.repo_bug.hiding import hide, hideable

TESTS = """import pytest

from shapes import area


def helper():
    return 2


def test_one():
    assert area(1) == 1


@pytest.mark.parametrize("x", [1, 2])
def test_two(x):
    assert area(x) == x * x


def test_uses_helper():
    assert helper() == 2


class TestGroup:
    def test_a(self):
        assert area(3) == 9

    def test_b(self):
        assert area(0) == 0


class TestAlone:
    def test_only(self):
        assert True


def test_called_elsewhere():
    pass


def test_caller():
    test_called_elsewhere()
"""
PATH = "tests/test_shapes.py"
VERIFY = RepoBug().templates / "tests" / "verify.py"
SHIPPED = RepoBug.folder() / "shipped"


def load_verify():
    spec = importlib.util.spec_from_file_location("repo_bug_verify", VERIFY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hideable_skips_lonely_and_referenced_tests():
    ids = [
        f"{PATH}::{name}"
        for name in (
            "test_one",
            "test_two",
            "TestGroup::test_a",
            "TestAlone::test_only",
            "test_called_elsewhere",
            "helper",
            "test_missing",
        )
    ]
    assert hideable(PATH, TESTS, ids) == sorted(
        [f"{PATH}::test_one", f"{PATH}::test_two", f"{PATH}::TestGroup::test_a"]
    )


def test_hidden_tests_come_back_byte_for_byte():
    ids = [f"{PATH}::test_two", f"{PATH}::TestGroup::test_b", f"{PATH}::test_one"]
    held = hide(PATH, TESTS, ids)
    assert "def test_two" not in held.visible and "def test_b" not in held.visible
    assert "@pytest.mark.parametrize" not in held.visible  # decorators go with the function
    assert "def test_a" in held.visible and "def test_uses_helper" in held.visible
    assert "\n\n\n\n" not in held.visible  # no gap betrays where a test was
    compile(held.visible, PATH, "exec")
    restored = load_verify().restore(held.visible, held.inserts)
    assert restored == TESTS
    assert hashlib.sha256(restored.encode()).hexdigest() == held.original_sha256


def test_hideable_keeps_one_method_per_class():
    ids = [f"{PATH}::TestGroup::test_a", f"{PATH}::TestGroup::test_b"]
    assert hideable(PATH, TESTS, ids) == [f"{PATH}::TestGroup::test_a"]


def test_hiding_every_method_of_a_class_is_refused():
    with pytest.raises(ValueError):
        hide(PATH, TESTS, [f"{PATH}::TestGroup::test_a", f"{PATH}::TestGroup::test_b"])


def make_app(tmp_path: Path) -> tuple[Path, dict]:
    held = hide(PATH, TESTS, [f"{PATH}::test_two"])
    app = tmp_path / "app"
    (app / "tests").mkdir(parents=True)
    (app / "shapes").mkdir()
    (app / "shapes" / "__init__.py").write_text("def area(x):\n    return x * x\n")
    (app / PATH).write_text(held.visible)
    (app / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    sha = hashlib.sha256
    spec = {
        "root": str(app),
        "pythonpath": ["."],
        "protected": {
            PATH: sha(held.visible.encode()).hexdigest(),
            "pyproject.toml": sha(b"[tool.pytest.ini_options]\n").hexdigest(),
        },
        "restore": {PATH: {"sha256": held.original_sha256, "inserts": held.inserts}},
        "run": [f"{PATH}::test_one", f"{PATH}::test_two"],
        "expect": [f"{PATH}::test_one", f"{PATH}::test_two"],
        "timeout": 60,
    }
    return app, spec


def test_prepare_puts_hidden_tests_back_and_drops_foreign_conftests(tmp_path):
    verify = load_verify()
    app, spec = make_app(tmp_path)
    (app / "conftest.py").write_text("raise SystemExit('agent conftest')\n")
    (app / "tests" / "conftest.py").write_text("x = 1\n")
    (app / "pytest.ini").write_text("[pytest]\n")
    copy = tmp_path / "copy"
    assert verify.prepare(spec, str(copy)) == []
    assert (copy / PATH).read_text() == TESTS
    assert not (copy / "conftest.py").exists() and not (copy / "tests" / "conftest.py").exists()
    assert not (copy / "pytest.ini").exists()
    assert (app / "conftest.py").exists()  # the agent's /app itself is left alone


@pytest.mark.parametrize(
    "tamper",
    [
        lambda app: (app / PATH).write_text((app / PATH).read_text() + "\n# edited\n"),
        lambda app: (app / PATH).unlink(),
        lambda app: (app / "pyproject.toml").write_text(
            "[tool.pytest.ini_options]\naddopts='-x'\n"
        ),
    ],
)
def test_prepare_reports_edited_tests_and_config(tmp_path, tamper):
    verify = load_verify()
    app, spec = make_app(tmp_path)
    tamper(app)
    assert verify.prepare(spec, str(tmp_path / "copy"))


def run_verifier(tmp_path: Path, spec: dict) -> subprocess.CompletedProcess:
    """The real verify.py with its pytest runner, against a project on disk (host Python)."""
    folder = tmp_path / "tests-dir"
    folder.mkdir(exist_ok=True)
    source = VERIFY
    (folder / "verify.py").write_text(source.read_text())
    for name in ("rb_run.py", "rb_outcomes.py"):
        (folder / name).write_text((SHIPPED / name).read_text())
    (folder / "spec.json").write_text(json.dumps(spec))
    return subprocess.run(
        [sys.executable, "-I", "-B", str(folder / "verify.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_verifier_passes_a_correct_project_and_fails_a_broken_one(tmp_path):
    app, spec = make_app(tmp_path)
    ok = run_verifier(tmp_path, spec)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "all 2 expected tests passed" in ok.stdout
    (app / "shapes" / "__init__.py").write_text("def area(x):\n    return x * 2\n")
    bad = run_verifier(tmp_path, spec)
    assert bad.returncode == 1
    assert "test_two[1]" in bad.stdout  # a held-out test caught it (test_one still passes)


def test_verifier_needs_every_expected_test_to_run(tmp_path):
    app, spec = make_app(tmp_path)
    spec["expect"].append(f"{PATH}::test_never_written")
    result = run_verifier(tmp_path, spec)
    assert result.returncode == 1 and "not run" in result.stdout


def test_regression_tests_may_skip_but_expected_ones_may_not(tmp_path):
    app, spec = make_app(tmp_path)
    text = TESTS.replace("def test_one():", "@pytest.mark.skip\ndef test_one():")
    (app / PATH).write_text(text)  # no held-out tests here: only the skip rule is checked
    spec["protected"][PATH] = hashlib.sha256(text.encode()).hexdigest()
    spec["restore"] = {}
    spec["expect"], spec["regress"] = [f"{PATH}::test_two"], [f"{PATH}::test_one"]
    assert run_verifier(tmp_path, spec).returncode == 0
    spec["expect"], spec["regress"] = [f"{PATH}::test_one"], [f"{PATH}::test_two"]
    result = run_verifier(tmp_path, spec)
    assert result.returncode == 1 and "test_one: skipped" in result.stdout


def test_a_conftest_that_forces_passes_does_not_count(tmp_path):
    app, spec = make_app(tmp_path)
    (app / "shapes" / "__init__.py").write_text("def area(x):\n    return 0\n")
    (app / "conftest.py").write_text(
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\n"
    )
    assert run_verifier(tmp_path, spec).returncode == 1


def test_runner_records_outcomes_and_the_functions_each_test_runs(tmp_path):
    (tmp_path / "m.py").write_text("def f(x):\n    return g(x) + 1\n\n\ndef g(x):\n    return x\n")
    (tmp_path / "test_m.py").write_text(
        "from m import f, g\n\n\ndef test_a():\n    assert f(1) == 2\n\n\n"
        "def test_b():\n    assert g(1) == 2\n"
    )
    out = tmp_path / "o.json"
    run = subprocess.run(
        [sys.executable, "-I", "-B", str(SHIPPED / "rb_run.py"), "--root", str(tmp_path),
         "--out", str(out), "--trace", "--", "test_m.py"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    data = json.loads(out.read_text())
    assert data["results"]["test_m.py::test_a"]["outcome"] == "passed"
    failed = data["results"]["test_m.py::test_b"]
    assert failed["outcome"] == "failed" and "assert 1 == 2" in failed["message"]
    assert {"m.py::f", "m.py::g"} <= set(data["covered"]["test_m.py::test_a"])
    assert "m.py::f" not in data["covered"]["test_m.py::test_b"]


def test_line_tracebacks_record_the_same_outcomes_and_messages(tmp_path):
    (tmp_path / "m.py").write_text("def f(x):\n    return x[0]\n")
    (tmp_path / "test_m.py").write_text(
        "import pytest\nfrom m import f\n\n\ndef test_a():\n    assert f([1]) == 2\n\n\n"
        "def test_b():\n    f([])\n\n\n@pytest.fixture\ndef broken():\n    raise OSError('x')\n\n\n"
        "def test_c(broken):\n    pass\n\n\ndef test_d():\n    assert f([3]) == 3\n"
    )
    records = {}
    for style in ([], ["--tb", "line"]):
        out = tmp_path / f"o{len(style)}.json"
        run = subprocess.run(
            [sys.executable, "-I", "-B", str(SHIPPED / "rb_run.py"), "--root", str(tmp_path),
             "--out", str(out), *style, "--", "test_m.py"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert run.returncode == 1, run.stdout + run.stderr
        results = json.loads(out.read_text())["results"]
        records[len(style)] = {k: (r["outcome"], r.get("message")) for k, r in results.items()}
        if style:
            assert "def test_b" not in run.stdout  # no source in the report
    assert records[0] == records[2]
    assert records[2]["test_m.py::test_a"] == ("failed", "assert 1 == 2\n +  where 1 = f([1])")
    assert records[2]["test_m.py::test_d"][0] == "passed"
    assert records[2]["test_m.py::test_b"][1].startswith("IndexError")


def cached_pyc(source: str, runs: str) -> bytes:
    """Checked-hash bytecode that runs ``runs`` and claims to be compiled from ``source``:
    shows whether Python took the cached bytecode or compiled the source."""
    import importlib.util as util
    import marshal

    code = compile(runs, "mod.py", "exec")
    flags = (0b11).to_bytes(4, "little")  # hash-based, checked against the source
    return util.MAGIC_NUMBER + flags + util.source_hash(source.encode()) + marshal.dumps(code)


def test_the_image_bytecode_is_used_while_each_source_is_unchanged(tmp_path):
    verify = load_verify()
    verify.BYTECODE, verify.WORK = str(tmp_path / "bytecode"), str(tmp_path / "work")
    tag = sys.implementation.cache_tag
    cache = tmp_path / "bytecode" / "pkg" / "__pycache__"
    cache.mkdir(parents=True)
    (cache / f"mod.{tag}.pyc").write_bytes(cached_pyc("X = 1\n", "X = 'cached'\n"))
    (tmp_path / "bytecode" / "gone" / "__pycache__").mkdir(parents=True)
    (tmp_path / "bytecode" / "link" / "__pycache__").mkdir(parents=True)
    (tmp_path / "bytecode" / "link" / "__pycache__" / "x.pyc").write_bytes(b"x")

    assert verify.workdir() == verify.WORK  # the image has bytecode, nothing is there yet
    assert verify.workdir() != verify.WORK  # the place is taken: a fresh temporary folder
    app = Path(verify.WORK) / "app"
    (app / "pkg").mkdir(parents=True)
    (app / "pkg" / "__init__.py").write_text("")
    (app / "pkg" / "mod.py").write_text("X = 1\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (app / "link").symlink_to(elsewhere)
    verify.add_bytecode(str(app))
    assert list(elsewhere.iterdir()) == []  # never written through a link
    assert not (app / "gone").exists()

    def value() -> str:
        read = "import sys; sys.path.insert(0, '.'); import pkg.mod; print(pkg.mod.X)"
        run = subprocess.run([sys.executable, "-I", "-B", "-c", read], cwd=app, text=True,
                             capture_output=True, check=True)  # fmt: skip
        return run.stdout.strip()

    assert value() == "cached"
    (app / "pkg" / "mod.py").write_text("X = 2\n")  # the agent's fix: compiled afresh
    assert value() == "2"


def test_the_dockerfile_compiles_the_visible_tests_only(tmp_path):
    from factory.generate.render import Origin, render_family
    from factory.generate.taxonomy import Difficulty

    family = RepoBug()
    draft = family.draft(random.Random(5), Difficulty.HARD, family.default_params)
    origin = Origin("t", "terminal/real-code/repo-bug", family.category, 5, family.name)
    spec = render_family(family, draft, task_id="rb", difficulty=Difficulty.HARD, origin=origin)
    dockerfile = spec.files["environment/Dockerfile"].decode()
    step = dockerfile.split("/opt/rb-bytecode", 1)[1].split("WORKDIR /app", 1)[0]
    named = set(step.split("--confcutdir /tmp/rb-verify/app", 1)[1].split(">/dev/null")[0].split())
    visible = {p for p in spec.files if p.startswith("environment/overlay/")}
    assert named and all(not n.endswith(("__init__.py", "conftest.py")) for n in named)
    # the held-out tests' files are named as the agent sees them (the overlay), never restored
    restore = json.loads(spec.files["tests/spec.json"])["restore"]
    assert restore and set(restore) <= named
    assert {f"environment/overlay/{p}" for p in restore} <= visible
    assert dockerfile.index("rm -rf /tmp/rb-verify") > dockerfile.index("cp -a --parents")
