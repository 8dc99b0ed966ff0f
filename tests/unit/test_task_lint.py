"""`factory lint`: Harbor's linter rules, fidelity gaps and harness refusals, per task and field."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from fixtures.family_tasks import render_every_difficulty
from fixtures.files import write_files
from fixtures.task_dirs import TB2_STYLE_TASK

from factory.errors import TaskFormatError
from factory.families import registry
from factory.tasks.lint import (
    HarnessHost,
    LintRule,
    LintSource,
    installed_packages,
    is_unpinned,
    lint_paths,
    lint_task,
    local_harbor_docker_host,
)
from factory.tasks.shell_commands import command_chain, downloads

GOOD_TOML = """\
schema_version = "1.4"

[task]
name = "org/good"
keywords = ["a", "b"]

[metadata]
tags = ["x"]

[verifier]
environment_mode = "separate"

[environment]
network_mode = "public"
"""
DOCKERFILE = "FROM python:3.12-slim-bookworm\nRUN pip install --no-cache-dir pytest==8.4.2\n"
TEST_SH = "#!/bin/bash\npython3 -m pytest /tests\n"


def make_task(root: Path, *, toml=GOOD_TOML, dockerfile=DOCKERFILE, test_sh=TEST_SH) -> Path:
    files = {
        "task.toml": toml,
        "instruction.md": "Do the thing.\n",
        "environment/Dockerfile": dockerfile,
        "tests/test.sh": test_sh,
        "solution/solve.sh": "#!/bin/bash\ntrue\n",
    }
    return write_files(root, files)


def rules(findings) -> list[str]:
    return sorted(f.rule.value for f in findings)


def test_a_clean_task_has_no_findings(tmp_path):
    assert lint_task(make_task(tmp_path / "t")) == []


@pytest.mark.parametrize(
    ("command", "specs", "constrained"),
    [
        ("pip install pytest", ["pytest"], False),
        (
            "python3 -m pip install --no-cache-dir -i https://x pytest==8.4.2",
            ["pytest==8.4.2"],
            False,
        ),
        ("pip3 install -c /c.txt pytest requests", ["pytest", "requests"], True),
        ("uv pip install --system flask>=3", ["flask>=3"], False),
        (
            "uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf pytest --ctrf x",
            ["pytest==8.4.1", "pytest-json-ctrf"],
            False,
        ),
        ("sudo FOO=1 pip install rich", ["rich"], False),
        ("apt-get install -y python3-pytest", [], False),
        ("pip download pytest", [], False),
    ],
)
def test_installed_packages(command, specs, constrained):
    assert installed_packages(command.split()) == (specs, constrained)


@pytest.mark.parametrize(
    ("spec", "loose"),
    [
        ("pytest", True),
        ("pytest>=8", True),
        ("pytest==8.*", True),
        ("pytest==8.4.2", False),
        ("pytest[testing]==8.4.2", False),
        ("pkg===1.0", False),
        ("./local-dir", False),
        ("dist/x-1.0-py3-none-any.whl", False),
        ("$PKG", False),
        ("git+https://github.com/o/r", True),
        ("git+https://github.com/o/r@" + "a" * 40, False),
    ],
)
def test_is_unpinned(spec, loose):
    assert is_unpinned(spec) is loose


def test_unpinned_installs_are_found_in_the_dockerfile_and_scripts_with_their_line(tmp_path):
    dockerfile = (
        "FROM python:3.12\n# RUN pip install commented\n"
        "RUN apt-get update && \\\n    pip install requests\n"
        "RUN pip install -U pip && pip install -c c.txt flask\n"
    )
    test_sh = "#!/bin/bash\ncat <<EOF\npip install inside-a-heredoc\nEOF\nuv add numpy\n"
    root = make_task(tmp_path / "t", dockerfile=dockerfile, test_sh=test_sh)
    found = [f for f in lint_task(root) if f.rule is LintRule.UNPINNED_PYTHON_DEPENDENCY]
    assert [(f.path, f.where) for f in found] == [
        ("environment/Dockerfile", "line 3"),
        ("tests/test.sh", "line 5"),
    ]
    assert all(f.source is LintSource.HARBOR and f.task == "t" for f in found)


def test_a_verifier_that_installs_while_offline_is_a_fidelity_finding(tmp_path):
    toml = GOOD_TOML.replace('"public"', '"no-network"')
    script = "pip install requests==2.32.3\npytest\n"
    root = make_task(tmp_path / "t", toml=toml, test_sh=script)
    found = [f for f in lint_task(root) if f.rule is LintRule.OFFLINE_VERIFIER_INSTALL]
    assert len(found) == 1 and found[0].where == "line 1"
    # the same script in a task with the network on is fine
    other = make_task(tmp_path / "u", test_sh=script)
    assert lint_task(other) == []


def test_a_verifier_that_fetches_without_a_declared_network_is_named(tmp_path):
    script = "apt-get install -y curl\ncurl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh\n"
    script += "uvx -w pytest==8.4.1 pytest /tests\n"
    undeclared = GOOD_TOML.replace('network_mode = "public"', "")
    root = make_task(tmp_path / "t", toml=undeclared, test_sh=script)
    found = [f for f in lint_task(root) if f.rule is LintRule.UNDECLARED_NETWORK_INSTALL]
    assert len(found) == 1 and found[0].source is LintSource.FIDELITY
    assert "curl, pytest==8.4.1" in found[0].message and "factory import" in found[0].message
    # declared either way, the finding goes (public: it works in both; offline: another rule)
    for declared in (
        GOOD_TOML,
        undeclared.replace("[environment]", "[environment]\nallow_internet = true"),
    ):
        other = make_task(tmp_path / str(len(declared)), toml=declared, test_sh=script)
        assert LintRule.UNDECLARED_NETWORK_INSTALL not in {f.rule for f in lint_task(other)}
    # a hermetic script in the same task is fine
    quiet = make_task(tmp_path / "q", toml=undeclared)
    assert LintRule.UNDECLARED_NETWORK_INSTALL not in {f.rule for f in lint_task(quiet)}


def test_config_findings_name_the_field(tmp_path):
    toml = """\
schema_version = "1.1"

[task]
name = "no-org"
keywords = ["tool-use", "tool-use", "airline", "airline"]

[metadata]
tags = ["a", "a"]

[environment]
pids_limit = 64
network_mode = "public"

[[environment.mcp_servers]]
name = "tools"
transport = "http"
url = "http://127.0.0.1:1/mcp"

[[environment.mcp_servers]]
name = "odd"
transport = "websocket"
url = "ws://x"
"""
    found = lint_task(make_task(tmp_path / "t", toml=toml))
    by_rule = {(f.rule, f.where) for f in found}
    assert (LintRule.UNKNOWN_CONFIG_FIELD, "environment.pids_limit") in by_rule
    assert (LintRule.INVALID_TASK_CONFIG, "task.name") in by_rule
    assert (LintRule.SHARED_VERIFIER, "verifier.environment_mode") in by_rule
    assert (LintRule.OLD_SCHEMA_VERSION, "schema_version") in by_rule
    assert (LintRule.DUPLICATE_KEYWORD, "task.keywords") in by_rule
    assert (LintRule.DUPLICATE_KEYWORD, "metadata.tags") in by_rule
    assert (LintRule.LEGACY_MCP_TRANSPORT, "environment.mcp_servers[0].transport") in by_rule
    assert (LintRule.INVALID_TASK_CONFIG, "environment.mcp_servers[1].transport") in by_rule
    duplicate = next(f for f in found if f.where == "task.keywords")
    assert "airline, tool-use" in duplicate.message


def test_broken_files_are_findings_not_crashes(tmp_path):
    root = make_task(tmp_path / "t", toml="[task\nname=")
    (root / "instruction.md").write_text("  \n")
    (root / "tests" / "test.sh").unlink()
    found = lint_task(root)
    assert rules(found) == ["invalid-task-config", "invalid-task-files", "invalid-task-files"]
    bad_type = make_task(tmp_path / "u", toml=GOOD_TOML + "[agent]\ntimeout_sec = -5\n")
    assert [f.where for f in lint_task(bad_type)] == ["agent.timeout_sec"]


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("/logs/agent/trajectory.json", True),
        ("/logs/verifier", True),
        ("//logs/agent/x", True),
        ("/logs", True),
        ("/", True),
        ("/logs/artifacts/out.txt", False),
        ("/logs/agents", False),
        ("logs/agent/x", False),  # Harbor reads the path as written: relative never matches
        ("/var/lib/verifier-snapshot", False),
    ],
)
def test_a_separate_verifiers_artifact_under_harbors_log_folders(tmp_path, source, flagged):
    listed = f'artifacts = ["/home/agent/reply.md", {{ source = "{source}" }}]\n\n[task]'
    toml = GOOD_TOML.replace("[task]", listed)
    found = lint_task(make_task(tmp_path / "t", toml=toml))
    want = [(LintRule.ARTIFACT_LOG_OVERLAP, LintSource.HARBOR, "artifacts[1]")] if flagged else []
    # ("/logs" and "/" also hold the other artifacts: overlapping-artifacts, as in Harbor)
    found = [f for f in found if f.rule is not LintRule.OVERLAPPING_ARTIFACTS]
    assert [(f.rule, f.source, f.where) for f in found] == want
    if flagged:
        assert source in found[0].message
        # a shared verifier reads the logs in place: Harbor does not object there
        shared = toml.replace('environment_mode = "separate"', 'environment_mode = "shared"')
        found = lint_task(make_task(tmp_path / "u", toml=shared))
        assert LintRule.ARTIFACT_LOG_OVERLAP not in {f.rule for f in found}
        assert LintRule.SHARED_VERIFIER in {f.rule for f in found}


def test_grading_files_copied_into_the_agent_image(tmp_path):
    dockerfile = DOCKERFILE + "COPY tests/test_outputs.py /tmp/\nCOPY data/ /data/\n"
    found = lint_task(make_task(tmp_path / "t", dockerfile=dockerfile))
    assert [(f.rule, f.where) for f in found] == [(LintRule.AGENT_IMAGE_TEST_LEAK, "line 3")]


@pytest.mark.parametrize("mode", ["no-network", "allowlist"])
def test_harbor_docker_refuses_restricted_networks_without_egress_control(tmp_path, mode):
    toml = GOOD_TOML.replace('network_mode = "public"', f'network_mode = "{mode}"')
    root = make_task(tmp_path / "t", toml=toml)
    without = HarnessHost(egress_control=False, reason="no nftables")
    found = lint_task(root, host=without)
    assert [(f.rule, f.source, f.where) for f in found] == [
        (LintRule.HARBOR_DOCKER_NETWORK, LintSource.HARNESS, "environment.network_mode")
    ]
    assert "no nftables" in found[0].message and mode in found[0].message
    assert lint_task(root, host=HarnessHost(egress_control=True)) == []
    assert lint_task(root) == []  # no harness asked about


def test_local_harbor_docker_host_reads_the_kernel_config(tmp_path):
    config = tmp_path / "config.gz"
    config.write_bytes(gzip.compress(b"CONFIG_NF_TABLES=y\n# CONFIG_NFT_FIB_INET is not set\n"))
    assert not local_harbor_docker_host(config, image_present=True).egress_control
    config.write_bytes(gzip.compress(b"CONFIG_NFT_FIB_INET=m\n"))
    assert local_harbor_docker_host(config, image_present=True).egress_control
    assert local_harbor_docker_host(tmp_path / "absent.gz", image_present=True).egress_control
    assert not local_harbor_docker_host(config, image_present=False).egress_control


def test_lint_paths_walks_a_suite_folder(tmp_path):
    make_task(tmp_path / "suite" / "a")
    make_task(tmp_path / "suite" / "b", toml=GOOD_TOML.replace('"1.4"', '"1.2"'))
    assert [(f.task, f.rule) for f in lint_paths([tmp_path / "suite"])] == [
        ("b", LintRule.OLD_SCHEMA_VERSION)
    ]


@pytest.mark.parametrize("name", registry.names())
def test_family_tasks_pass_harbors_rules(name, tmp_path):
    """Every family at every difficulty: nothing Harbor's linter would report, not even a
    verifier that shares the agent's sandbox (every family runs the separate verifier)."""
    for task in render_every_difficulty(name, tmp_path):
        assert [f.line() for f in lint_task(task.root)] == []


def test_a_missing_folder_is_an_error_naming_it(tmp_path):
    with pytest.raises(TaskFormatError, match="no such folder"):
        lint_paths([tmp_path / "nope"])


def test_every_rule_has_a_source():
    from factory.tasks.lint import RULE_SOURCE

    assert set(RULE_SOURCE) == set(LintRule)


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    "task",
    sorted([*(EXAMPLES / "tasks").iterdir(), *(EXAMPLES / "harbor").iterdir()]),
    ids=lambda p: p.name,
)
def test_example_tasks_pass_harbors_rules(task):
    """The hand-written examples too (examples/broken is broken on purpose): nothing a rule of
    Harbor's linter would report, each one in a separate verifier."""
    harbor = [f.line() for f in lint_task(task) if f.source is LintSource.HARBOR]
    assert harbor == []


@pytest.mark.parametrize(
    ("line", "fetches"),
    [
        ("curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh", True),
        ("curl -fsSL https://example.org/setup.sh | bash -s", True),
        ("wget https://example.org/data.tar.gz", True),
        ("curl -o /tmp/data.json https://example.org/data.json", True),
        ("curl -O https://example.org/data.json", True),
        ("curl --output=/tmp/x https://example.org/x", True),
        ("git clone https://github.com/org/repo /src", True),
        ("git clone git@github.com:org/repo.git", True),
        # probes and local services are not downloads
        ("curl -sf https://example.org/health", False),
        ("curl -s -o /dev/null -w '%{http_code}' https://example.org", False),
        ("wget -qO- https://example.org/health", False),
        ("wget --spider https://example.org", False),
        ("curl -sf http://kv:8080/items -o /tmp/items.json", False),
        ("curl http://127.0.0.1:8000/x -o out", False),
        ("wget http://api.localhost/x", False),
        ("git fetch https://github.com/org/repo", False),
        ("echo https://example.org | sh", False),
    ],
)
def test_downloads(line, fetches):
    chain = command_chain(line)
    words, operator = chain[0]
    assert downloads(words, chain[1][0] if operator == "|" else None) is fetches


def test_a_separate_verifier_that_installs_pytest_or_downloads_at_trial_time(tmp_path):
    """Harbor's `verifier-runtime-install` and `verifier-network-download`, at the script's line;
    a shared verifier (or the solution) may do both without these findings."""
    test_sh = (
        "#!/bin/bash\n"
        "curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh\n"
        "pip install pytest==8.4.2 \\\n    pytest-json-ctrf==0.3.5\n"
        "curl -sf http://localhost:8000/health\n"
        "python3 -m pytest /tests\n"
    )
    findings = lint_task(make_task(tmp_path / "sep", test_sh=test_sh))
    harbor = [(f.rule.value, f.where) for f in findings if f.source is LintSource.HARBOR]
    assert harbor == [
        ("verifier-network-download", "line 2"),
        ("verifier-runtime-install", "line 3"),
    ]
    shared = GOOD_TOML.replace('environment_mode = "separate"', 'environment_mode = "shared"')
    findings = lint_task(make_task(tmp_path / "shared", toml=shared, test_sh=test_sh))
    assert "verifier-network-download" not in rules(findings)
    assert "verifier-runtime-install" not in rules(findings)


def test_a_terminal_bench_2_style_task_gets_what_harbors_linter_reports():
    """The fixture that installs uv from the internet and pytest through uvx in a separate
    verifier: `harbor lint` 0.26 (default rules) reports exactly these two findings, at
    tests/test.sh:6 and :10."""
    harbor = [
        (f.rule.value, f.path, f.where)
        for f in lint_task(TB2_STYLE_TASK)
        if f.source is LintSource.HARBOR
    ]
    assert harbor == [
        ("verifier-network-download", "tests/test.sh", "line 6"),
        ("verifier-runtime-install", "tests/test.sh", "line 10"),
    ]


def test_what_the_importer_makes_of_it_passes_harbors_rules(tmp_path):
    """`factory import` bakes the installs into the image and runs uv `--offline`: nothing left
    for Harbor's rules (Terminal-Bench 1 imports keep their shared verifier: only that)."""
    from factory.importers.layouts import import_task

    result = import_task(TB2_STYLE_TASK, tmp_path / "out")
    assert result.error is None
    assert [f.line() for f in lint_task(result.dest) if f.source is LintSource.HARBOR] == []
