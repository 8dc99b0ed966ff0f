from __future__ import annotations

import pytest
from pydantic import ValidationError

from factory.tasks.config import FactoryProvenance, NetworkMode, TaskConfig, parse_size_mb

HARBOR_TOML = """
schema_version = "1.3"
source = "some-dataset"

[task]
name = "org/hello"
description = "Say hello"
authors = [{ name = "Ada", email = "ada@example.com" }]
keywords = ["trivial"]

[metadata]
difficulty = "easy"
category = "programming"
tags = ["a", "b"]
custom_thing = { nested = 1 }

[verifier]
timeout_sec = 120.0
env = { API_KEY = "x", PORT = 8080 }
user = "root"

[agent]
timeout_sec = 300.0
install_timeout_sec = 50

[solution]
env = { FOO = "bar" }

[environment]
build_timeout_sec = 600.0
docker_image = "python:3.12-slim"
cpus = 2
memory_mb = 4096
storage_mb = 10240
gpus = 0
allow_internet = false
workdir = "/app"
env = { LANG = "C.UTF-8" }
skills_dir = "/skills"

[[environment.mcp_servers]]
name = "tools"
transport = "streamable-http"
url = "http://tools:8000/mcp"
"""


def test_harbor_fields_parse():
    config = TaskConfig.from_toml(HARBOR_TOML)
    assert config.schema_version == "1.3"
    assert config.task.name == "org/hello"
    assert config.task.authors[0].email == "ada@example.com"
    assert config.verifier.timeout_sec == 120.0
    assert config.verifier.env == {"API_KEY": "x", "PORT": "8080"}
    assert config.agent.timeout_sec == 300.0
    assert config.solution.env == {"FOO": "bar"}
    env = config.environment
    assert (env.cpus, env.memory_mb, env.storage_mb, env.gpus) == (2, 4096, 10240, 0)
    assert env.docker_image == "python:3.12-slim"
    assert env.workdir == "/app"
    assert env.network_enabled is False
    assert config.difficulty == "easy"


def test_unknown_fields_survive_round_trip():
    config = TaskConfig.from_toml(HARBOR_TOML)
    again = TaskConfig.from_toml(config.to_toml())
    assert again.model_dump() == config.model_dump()
    dumped = again.to_toml()
    for key in ("install_timeout_sec", "skills_dir", "mcp_servers", "custom_thing", "source"):
        assert key in dumped


def test_round_trip_does_not_inject_defaults():
    minimal = 'version = "1.0"\n\n[verifier]\ntimeout_sec = 30.0\n'
    dumped = TaskConfig.from_toml(minimal).to_toml()
    assert "agent" not in dumped and "environment" not in dumped
    assert "timeout_sec = 30.0" in dumped


def test_defaults_when_sections_absent():
    config = TaskConfig.from_toml('version = "1.0"\n')
    assert config.verifier.timeout_sec == 600.0
    assert config.agent.timeout_sec == 600.0
    assert config.environment.effective_cpus == 1.0
    assert config.environment.effective_memory_mb == 2048
    # factory's sandbox default: no network unless the task asks for it
    assert config.environment.network_enabled is False


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"network_mode": "public"}, True),
        ({"network_mode": "no-network"}, False),
        ({"network_mode": "allowlist"}, True),
        ({"allow_internet": True}, True),
        ({"allow_internet": True, "network_mode": "no-network"}, False),
        ({}, False),
    ],
)
def test_network_enabled(fields, expected):
    config = TaskConfig.model_validate({"environment": fields})
    assert config.environment.network_enabled is expected


def test_deprecated_size_strings():
    config = TaskConfig.model_validate({"environment": {"memory": "4G", "storage": "512M"}})
    assert config.environment.effective_memory_mb == 4096
    assert config.environment.effective_storage_mb == 512
    assert parse_size_mb("1.5g") == 1536
    with pytest.raises(ValueError):
        parse_size_mb("lots")


@pytest.mark.parametrize(
    ("data", "loc"),
    [
        ({"environment": {"cpus": "lots"}}, ("environment", "cpus")),
        ({"verifier": {"timeout_sec": -1}}, ("verifier", "timeout_sec")),
        ({"environment": {"network_mode": "sometimes"}}, ("environment", "network_mode")),
        ({"environment": {"memory": "much"}}, ("environment", "memory")),
        ({"metadata": {"factory": {"seed": "x"}}}, ("metadata",)),
    ],
)
def test_bad_fields_are_located(data, loc):
    with pytest.raises(ValidationError) as info:
        TaskConfig.model_validate(data)
    assert info.value.errors()[0]["loc"][: len(loc)] == loc


def test_provenance_round_trip():
    config = TaskConfig()
    config.set_provenance(FactoryProvenance(source="generator:grep", seed=7, notes=["n1"]))
    again = TaskConfig.from_toml(config.to_toml())
    assert again.provenance.seed == 7
    assert again.provenance.notes == ["n1"]
    assert "[metadata.factory]" in config.to_toml()


def test_network_mode_enum_values():
    assert {m.value for m in NetworkMode} == {"public", "no-network", "allowlist"}


HARBOR_SERVICES = """
[environment]
cpus = 1

[environment.healthcheck]
command = "curl -sf http://127.0.0.1:3847/health"
interval_sec = 2.0
retries = 15
start_period_sec = 15.0

[[environment.mcp_servers]]
name = "figma"
transport = "streamable-http"
url = "http://127.0.0.1:3847/mcp"
"""


def test_healthcheck_and_mcp_servers():
    config = TaskConfig.from_toml(HARBOR_SERVICES)
    check = config.environment.healthcheck
    assert (check.command, check.interval_sec, check.retries, check.timeout_sec) == (
        "curl -sf http://127.0.0.1:3847/health",
        2.0,
        15,
        10.0,
    )
    assert config.environment.mcp_servers[0].url == "http://127.0.0.1:3847/mcp"
    again = TaskConfig.from_toml(config.to_toml())
    assert again.environment == config.environment
    with pytest.raises(ValidationError) as info:
        TaskConfig.model_validate({"environment": {"healthcheck": {"retries": 0}}})
    assert {e["loc"][-1] for e in info.value.errors()} == {"command", "retries"}


@pytest.mark.parametrize("transport", ["streamable-http", "sse", "http"])
def test_mcp_transport_names_are_harbors(transport):
    text = f'[[environment.mcp_servers]]\nname = "t"\ntransport = "{transport}"\nurl = "http://x/mcp"\n'
    config = TaskConfig.from_toml(text)
    written = config.to_toml()
    expected = "sse" if transport == "sse" else "streamable-http"
    assert f'transport = "{expected}"' in written
    assert TaskConfig.from_toml(written).environment.mcp_servers[0].transport.value == expected


@pytest.mark.parametrize(
    ("server", "needle"),
    [
        ({"name": "t", "transport": "websocket", "url": "ws://x"}, "transport"),
        ({"name": "t", "transport": "streamable-http"}, "needs a url"),
        ({"name": "t", "transport": "stdio"}, "needs a command"),
    ],
)
def test_bad_mcp_servers_are_refused(server, needle):
    with pytest.raises(ValidationError, match=needle):
        TaskConfig.model_validate({"environment": {"mcp_servers": [server]}})


COMMENTED = """# A hand-written task: keep these notes.
schema_version = "1.1"

[metadata]
difficulty = "easy"  # checked by hand
tags = ["a", "b"]

[verifier]
timeout_sec = 120.0

[environment]
# one core is plenty
cpus = 1
memory_mb = 512
"""


def test_rewriting_keeps_comments_and_number_types():
    config = TaskConfig.from_toml(COMMENTED)
    config.set_provenance(FactoryProvenance(pass_rate=0.5, calibration_k=4))
    text = config.to_toml(keep=COMMENTED)
    assert text.startswith(COMMENTED.split("\n[environment]")[0].split("[verifier]")[0])
    for line in ("# one core is plenty", "cpus = 1\n", 'difficulty = "easy"  # checked by hand'):
        assert line in text
    assert "cpus = 1.0" not in text and "timeout_sec = 120.0" in text
    again = TaskConfig.from_toml(text)
    assert again.provenance.pass_rate == 0.5 and again.provenance.calibration_k == 4
    assert again.environment.cpus == 1
    # a second stamp changes only the stamped value
    again.set_provenance(again.provenance.model_copy(update={"pass_rate": 0.25}))
    second = again.to_toml(keep=text)
    assert second == text.replace("pass_rate = 0.5", "pass_rate = 0.25")


def test_rewriting_applies_changes_and_removals():
    config = TaskConfig.from_toml(COMMENTED)
    config.environment.cpus = 2.5
    config.metadata = {k: v for k, v in config.metadata.items() if k != "tags"}
    text = config.to_toml(keep=COMMENTED)
    assert "cpus = 2.5" in text and "tags" not in text and "# one core is plenty" in text
    assert TaskConfig.from_toml(text).model_dump() == config.model_dump()


def test_a_fresh_file_writes_integers_as_integers():
    config = TaskConfig.model_validate({"environment": {"cpus": 2, "memory_mb": 1024}})
    assert "cpus = 2\n" in config.to_toml()
    assert TaskConfig.model_validate({"environment": {"cpus": 1.5}}).environment.cpus == 1.5


def test_save_task_config_updates_the_file_in_place(tmp_path):
    from factory.tasks.model import load_task_config, save_task_config

    path = tmp_path / "task.toml"
    path.write_text(COMMENTED)
    config = load_task_config(path)
    config.set_provenance(FactoryProvenance(flake_rate=0.0, flake_runs=6))
    save_task_config(path, config)
    text = path.read_text()
    assert "# A hand-written task: keep these notes." in text and "flake_runs = 6" in text
    assert load_task_config(path).provenance.flake_runs == 6
