from __future__ import annotations

from factory.tasks.offline import dockerfile_appendix, last_user, scan_test_script

TB1_RUN_TESTS = """#!/bin/bash
apt-get update
apt-get install -y curl jq
curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh
source $HOME/.local/bin/env
uv init
uv add pytest==8.4.1 requests==2.32.3
uv run pytest $TEST_DIR/test_outputs.py -rA
"""

TB2_TEST_SH = """#!/bin/bash
apt-get update && apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
source $HOME/.local/bin/env
uvx \\
  -p 3.13 \\
  -w pytest==8.4.1 \\
  -w pytest-json-ctrf==0.3.5 \\
  pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def test_tb1_script_is_scanned_and_neutralised():
    scan = scan_test_script(TB1_RUN_TESTS, name="run-tests.sh")
    assert scan.apt_packages == ["curl", "jq"]
    assert scan.venv_packages == ["pytest==8.4.1", "requests==2.32.3"]
    assert scan.system_packages == []
    lines = scan.text.splitlines()
    assert lines[1].startswith(": # factory: moved to the image build: apt-get update")
    assert lines[3].startswith(": # factory: removed")
    assert "uv --offline add pytest==8.4.1 requests==2.32.3" in lines
    assert "uv --offline run pytest $TEST_DIR/test_outputs.py -rA" in lines
    assert "uv init" in lines  # makes a project, fetches nothing
    assert len(scan.notes) == 5


def test_uv_that_may_fetch_runs_offline_where_it_is_a_command():
    """`--offline` after uv/uvx in command position (so Harbor's linter sees no trial-time
    install), never inside an argument, and once per command."""
    text = (
        "if true; then uv run pytest; fi\n"
        "A=1 $HOME/.local/bin/uvx -w pytest==8.4.1 pytest\n"
        "echo uvx is not run here; uv --version\n"
        "uv --offline pip install pytest==8.4.1\n"
    )
    scan = scan_test_script(text, name="t.sh")
    assert scan.text.splitlines() == [
        "if true; then uv --offline run pytest; fi",
        "A=1 $HOME/.local/bin/uvx --offline -w pytest==8.4.1 pytest",
        "echo uvx is not run here; uv --version",
        "uv --offline pip install pytest==8.4.1",
    ]
    assert scan.notes.count("t.sh: uv runs `--offline` (from its build-time cache)") == 1


def test_uvx_continuation_lines():
    scan = scan_test_script(TB2_TEST_SH, name="test.sh")
    assert scan.venv_packages == ["pytest==8.4.1", "pytest-json-ctrf==0.3.5"]
    assert scan.apt_packages == ["curl"]
    assert "-w pytest-json-ctrf==0.3.5 \\" in scan.text  # untouched command keeps its lines


def test_pip_lines_go_to_system_python(tmp_path):
    (tmp_path / "requirements.txt").write_text("numpy==2.1.0  # pinned\n\nscipy\n")
    script = (
        "pip install -q pandas 'polars>=1' && python3 -m pip install -r /tests/requirements.txt\n"
    )
    scan = scan_test_script(script, name="t.sh", requirement_root=tmp_path)
    assert scan.system_packages == ["pandas", "polars>=1", "numpy==2.1.0", "scipy"]
    assert scan.text == script


def test_pinned_spec_replaces_unpinned():
    scan = scan_test_script("uvx -w pytest==8.4.1 pytest -q\n", name="t.sh")
    assert scan.venv_packages == ["pytest==8.4.1"]


def test_nothing_to_do():
    scan = scan_test_script("python3 -m pytest /tests -q\n", name="t.sh")
    assert not scan.needs_install and not scan.notes
    assert dockerfile_appendix(scan, "FROM x\n") == ""


def test_appendix_restores_user():
    scan = scan_test_script("uv add pytest\napt-get install -y jq\n", name="t.sh")
    text = dockerfile_appendix(scan, "FROM a\nUSER app\n")
    assert "USER root" in text and text.rstrip().endswith("USER app")
    assert "apt-get install -y --no-install-recommends jq" in text
    assert "uv add --quiet pytest" in text  # into uv's cache, at build time
    assert "python3 -m pip install --no-cache-dir uv==" in text  # the real uv, pinned


def test_uv_installer_version_is_kept():
    scan = scan_test_script(
        "curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh\nuvx -w pytest==8.4.1 pytest\n",
        name="t.sh",
    )
    assert scan.uses_uv and scan.uv_version == "0.7.13"
    assert "uv==0.7.13" in dockerfile_appendix(scan, "FROM x\n")
    assert "astral.sh" not in dockerfile_appendix(scan, "FROM x\n")


def test_a_script_that_only_runs_uv_still_gets_uv():
    scan = scan_test_script("uv run --no-project python -c 'print(1)'\n", name="t.sh")
    assert scan.uses_uv and not scan.venv_packages
    assert "uv==" in dockerfile_appendix(scan, "FROM x\n")


def test_last_user():
    assert last_user("FROM a\nUSER bob\nFROM b\n") is None
    assert last_user("FROM a\nUSER bob\n") == "bob"
    assert last_user("FROM a\nUSER root\n") is None


def test_redirections_and_pipes_are_not_packages():
    script = (
        "python3 -m pip install --break-system-packages -q pytest==9.0.3 2>/dev/null || true\n"
        "apt-get install -y jq > /dev/null 2>&1\n"
        "pip install requests &>/tmp/pip.log | tee -a log\n"
    )
    scan = scan_test_script(script, name="test.sh")
    assert scan.system_packages == ["pytest==9.0.3", "requests"]
    assert scan.apt_packages == ["jq"]
