"""The LLM backend's free-form and web-app tasks run Harbor's separate verifier: what the
model's tests read of the agent's end state is declared (or repaired), bounded and rendered as
artifacts and collect hooks; a spec that cannot be verified that way goes back to the model
with the reason. Docker-free, with a scripted endpoint."""

from __future__ import annotations

import importlib.util
import json
import shlex

import pytest
from fixtures.llm_envs import FREE, FREE_FORM_REPLY, WEB, WEB_APP_REPLY
from fixtures.llm_stub import Stub, reply

from factory.families.web.webfamily import APP_DB, SNAPSHOT_DB, snapshot_hook
from factory.generate.llm_backend import LlmBackend
from factory.generate.llm_verifier import CONFTEST, PRESENT, named_paths, repair_reads
from factory.generate.pipeline import GenerationError
from factory.generate.results import QualityOutcome
from factory.generate.taxonomy import Difficulty
from factory.llm import LlmClient, LlmSettings
from factory.tasks.config import TaskConfig, VerifierEnvironmentMode
from factory.tasks.lint import lint_task


@pytest.fixture
def stub():
    server = Stub()
    yield server
    server.server.shutdown()


def make(stub: Stub, answers: list[dict | str], leaf=FREE, parse_repairs: int = 0):
    stub.queue = [reply(a if isinstance(a, str) else json.dumps(a)) for a in answers]
    llm = LlmBackend(
        LlmClient(LlmSettings(base_url=stub.url, model="m")), "s", parse_repairs=parse_repairs
    )
    return llm.make(leaf, Difficulty.MEDIUM, 3, "t-000")[0]


def test_a_declared_free_form_task_renders_a_separate_verifier(stub, tmp_path):
    spec = make(stub, [FREE_FORM_REPLY])
    config = spec.config
    assert config.verifier.mode is VerifierEnvironmentMode.SEPARATE
    # declared reads, the outputs, then the presence record and the snapshot
    assert config.artifacts == [
        "/app/run/deploy.lock",
        "/app/count.txt",
        "/app/deploy.sh",
        PRESENT,
        "/logs/state/modes",
    ]
    presence, modes = config.verifier.collect
    assert presence.user == modes.user == "0"
    assert presence.command.startswith(f"rm -rf {PRESENT} {PRESENT}.tmp; ")
    for path in ("/app/run/deploy.lock", "/app/count.txt", "/app/deploy.sh"):
        assert path in presence.command
    # the snapshot's path is removed before the model's command writes it afresh
    assert modes.command.startswith("rm -rf /logs/state/modes /logs/state/modes.tmp; ")
    command = shlex.quote(FREE_FORM_REPLY["snapshots"][0]["command"])
    assert f"sh -c {command} > /logs/state/modes.tmp" in modes.command
    conftest = spec.files["tests/conftest.py"].decode()
    assert "/app/run/deploy.lock" in conftest and PRESENT in conftest
    root = spec.write(tmp_path / "task")
    assert [f.line() for f in lint_task(root)] == []
    assert TaskConfig.from_toml((root / "task.toml").read_text()).artifacts == config.artifacts
    prompt = stub.requests[0]["messages"][1]["content"]
    assert "verifier_reads" in prompt and "/logs/state/<name>" in prompt


def test_an_undeclared_spec_is_repaired_from_its_outputs_and_the_paths_its_tests_name(stub):
    reply_ = {k: v for k, v in FREE_FORM_REPLY.items() if k not in ("verifier_reads",)}
    spec = make(stub, [reply_])
    # the lock was not declared, but test_py names it
    assert spec.config.artifacts[:3] == ["/app/count.txt", "/app/deploy.sh", "/app/run/deploy.lock"]
    assert repair_reads([], [], "import pwd\ndef test_x():\n    pwd.getpwnam('bob')\n") == [
        "/etc/passwd",
        "/etc/group",
    ]


def test_named_paths_skip_the_images_code_urls_and_the_harness():
    text = (
        "P = '/app/out/report.csv'\nQ = \"/usr/bin/python3\"\nR = '/usr/local/bin/tool'\n"
        "U = 'http://127.0.0.1:8000/api'\nV = '/proc/1/status'\nW = '/logs/state/x'\n"
        "X = f'/app/{name}.txt'\nY = '/'\nZ = '/etc'\n"
    )
    assert named_paths(text) == ["/app/out/report.csv"]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (
            {"test_py": "import os\ndef test_m():\n    assert os.stat('/app/x').st_mode"},
            "permission",
        ),
        (
            {"test_py": "import os\ndef test_o():\n    assert os.stat('/app/x').st_uid == 0"},
            "owners",
        ),
        (
            {"test_py": "import subprocess\ndef test_p():\n    subprocess.run(['pgrep', 'x'])"},
            "processes",
        ),
        ({"test_py": "def test_q():\n    open('/proc/net/tcp').read()"}, "processes"),
        (
            {"test_py": "def test_s():\n    open('/logs/state/ports').read()"},
            "no `snapshots` entry",
        ),
        ({"verifier_reads": ["/"]}, "whole system folder"),
        ({"verifier_reads": ["/proc/1"]}, "harness's or the kernel's"),
        ({"verifier_reads": ["app/x"]}, "not an absolute path"),
        ({"verifier_reads": ["/usr/local/bin/python3"]}, "the image's code"),
        ({"verifier_reads": ["/etc/ld.so.preload"]}, "the image's code"),
        ({"verifier_reads": [f"/app/f{i}" for i in range(17)]}, "verifier_reads"),
        ({"snapshots": [{"name": "factory-reads", "command": "true"}]}, "snapshot name"),
        (
            {"snapshots": [{"name": "a", "command": "x"}, {"name": "a", "command": "y"}]},
            "same name",
        ),
    ],
)
def test_a_spec_the_separate_verifier_cannot_run_is_rejected_with_the_reason(stub, change, needle):
    with pytest.raises(GenerationError) as info:
        make(stub, [{**FREE_FORM_REPLY, **change}])
    assert info.value.outcome is QualityOutcome.UNPARSEABLE
    assert needle in str(info.value)


def test_the_reason_goes_back_to_the_model_and_a_declared_snapshot_is_accepted(stub):
    bad = {
        **FREE_FORM_REPLY,
        "snapshots": [],
        "test_py": FREE_FORM_REPLY["test_py"].replace(
            "Path('/logs/state/modes').read_text().split()",
            "[oct(Path('/app/deploy.sh').stat().st_mode & 0o777)[2:], '/app/deploy.sh']",
        ),
    }
    spec = make(stub, [bad, FREE_FORM_REPLY], parse_repairs=1)
    retry = stub.requests[1]["messages"][-1]["content"]
    assert "permission bits" in retry and "snapshot" in retry
    assert "/logs/state/modes" in spec.config.artifacts


def test_the_conftest_removes_what_the_agent_deleted(tmp_path):
    gone, kept, folder = tmp_path / "gone.txt", tmp_path / "kept.txt", tmp_path / "out"
    for path in (gone, kept):
        path.write_text("image\n")
    folder.mkdir()
    (folder / "x").write_text("image\n")
    present = tmp_path / "present"
    present.write_text(f"{kept}\n")
    source = CONFTEST.format(reads=[str(gone), str(kept), str(folder)], present=str(present))
    path = tmp_path / "conftest_copy.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("factory_conftest_copy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.pytest_sessionstart(None)
    assert not gone.exists() and kept.exists() and not folder.exists()
    present.unlink()
    with pytest.raises(RuntimeError, match="collect hook did not run"):
        module.pytest_sessionstart(None)


def test_a_web_app_task_reads_only_the_database_snapshot(stub, tmp_path):
    assert APP_DB in WEB_APP_REPLY["test_py"]  # the reply opens the live database ...
    spec = make(stub, [WEB_APP_REPLY], leaf=WEB)
    tests = spec.files["tests/test_outputs.py"].decode()
    assert SNAPSHOT_DB in tests and APP_DB not in tests  # ... repaired to open the copy
    config = spec.config
    assert config.verifier.mode is VerifierEnvironmentMode.SEPARATE
    assert config.artifacts == ["/var/lib/verifier-snapshot"]
    (hook,) = config.verifier.collect
    assert (hook.command, hook.user) == (snapshot_hook(), "root")
    assert [f.line() for f in lint_task(spec.write(tmp_path / "task"))] == []
    assert "/var/lib/verifier-snapshot/app.db" in stub.requests[0]["messages"][1]["content"]


@pytest.mark.parametrize(
    ("test_py", "needle"),
    [
        (
            "def test_x():\n    assert open('/srv/app/app.py').read()\n",
            "must check the app's database",
        ),
        (
            "import sqlite3\ndef test_x():\n    sqlite3.connect('/srv/app/data/app.db')\n"
            "    open('/srv/app/data/uploads/a.txt')\n",
            "gets only the database",
        ),
    ],
)
def test_a_web_app_whose_tests_read_other_app_files_is_rejected(stub, test_py, needle):
    with pytest.raises(GenerationError, match=needle):
        make(stub, [{**WEB_APP_REPLY, "test_py": test_py}], leaf=WEB)
