"""Multi-container environments without Docker: the compose file's parsing (Harbor's layout
and Terminal-Bench 1's), the one-line refusals of what factory's sandbox cannot run, the
TB1 conversion into Harbor's form, and the container specs the runtime gets."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from fixtures.task_dirs import TB2_STYLE_TASK

from factory.errors import TaskFormatError
from factory.importers.tb1 import convert_tb1
from factory.runtime import Readiness, compose_readiness, image_readiness
from factory.tasks.compose import (
    DEFAULT_SIDECAR_MEMORY_MB,
    ServiceHealthcheck,
    harbor_variables,
    parse_compose,
    sidecar_limits,
)
from factory.tasks.model import load_task
from factory.validate import phases

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HARBOR_EXAMPLE = EXAMPLES / "harbor" / "kv-inventory"
TB1_EXAMPLE = EXAMPLES / "tb1" / "order-api"


def _compose(tmp_path: Path, text: str, folders: tuple[str, ...] = ()) -> Path:
    env = tmp_path / "environment"
    env.mkdir(parents=True, exist_ok=True)
    for folder in folders:
        (env / folder).mkdir(parents=True, exist_ok=True)
        (env / folder / "Dockerfile").write_text("FROM debian:bookworm\n")
    path = env / "docker-compose.yaml"
    path.write_text(text)
    return path


def test_the_harbor_example_parses_as_harbor_lays_it_out():
    task = load_task(HARBOR_EXAMPLE)
    compose = task.compose
    assert compose.main == "main"
    (kv,) = compose.sidecars
    assert (kv.name, kv.build_context, kv.dockerfile) == ("kv", "kv", "Dockerfile")
    assert kv.env == {"KV_MULTIPLIER": "3"}
    assert (kv.cpus, kv.memory_mb) == (0.5, 128)
    assert kv.healthcheck.interval_sec == 2.0 and kv.healthcheck.retries == 15
    assert kv.healthcheck.command.startswith("python3 -c ")
    assert compose.main_depends_on == {"kv": "service_healthy"}


def test_start_order_follows_depends_on(tmp_path):
    path = _compose(
        tmp_path,
        "services:\n  main:\n    depends_on: [web]\n"
        "  web:\n    image: nginx:1\n    depends_on:\n      db: {condition: service_healthy}\n"
        "      migrate: {condition: service_completed_successfully}\n"
        "  migrate:\n    image: alpine:3\n    depends_on: [db]\n"
        "  db:\n    image: postgres:16\n    healthcheck: {test: pg_isready}\n",
    )
    compose = parse_compose(path)
    assert [s.name for s in compose.sidecars] == ["db", "migrate", "web"]
    assert compose.sidecar("web").depends_on == {
        "db": "service_healthy",
        "migrate": "service_completed_successfully",
    }


@pytest.mark.parametrize(
    ("service", "field", "says"),
    [
        ("ports: ['8080:80']", "services.svc.ports", "publishes ports on the host"),
        ("privileged: true", "services.svc.privileged", "privileged"),
        ("network_mode: host", "services.svc.network_mode", "host networks"),
        ("volumes: ['/etc:/host-etc']", "services.svc.volumes", "host paths"),
        ("volumes: ['data:/var/lib/x']", "services.svc.volumes", "named volumes"),
        ("cap_add: [NET_ADMIN]", "services.svc.cap_add", "capabilities"),
        ("pid: host", "services.svc.pid", "process namespaces"),
        ("devices: ['/dev/kvm']", "services.svc.devices", "devices"),
        ("extra_hosts: ['host.docker.internal:host-gateway']", "services.svc.extra_hosts", "host"),
        ("env_file: .env", "services.svc.env_file", "env files"),
        ("frobnicate: 1", "services.svc.frobnicate", "not supported"),
        ("build: {context: ../../x}", "services.svc.build.context", "outside environment/"),
        ("build: {context: svc, args: {A: 1}}", "services.svc.build.args", "not supported"),
        ("build: https://example.com/repo.git", "services.svc.build.context", "remote"),
        ("{}", "services.svc", "needs `build`"),
        ("depends_on: [nope]\n    image: x", "services.svc.depends_on.nope", "no such service"),
        ("depends_on: [main]\n    image: x", "services.svc.depends_on.main", "starts last"),
        (
            "image: x\n    deploy: {resources: {limits: {memory: lots}}}",
            "services.svc.deploy.resources.limits.memory",
            "not a size",
        ),
        (
            "image: x\n    healthcheck: {test: [CMD, x], interval: soon}",
            "services.svc.healthcheck.interval",
            "not a duration",
        ),
    ],
)
def test_unsupported_service_settings_are_refused_in_one_line(tmp_path, service, field, says):
    path = _compose(tmp_path, f"services:\n  main: {{}}\n  svc:\n    {service}\n", ("svc",))
    with pytest.raises(TaskFormatError) as info:
        parse_compose(path)
    assert info.value.field == field
    assert info.value.path == path
    message = str(info.value)
    assert says in message and "\n" not in message
    assert message.startswith(f"{path}: {field}: ")


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (
            "services:\n  main:\n    volumes: ['/var/run/docker.sock:/var/run/docker.sock']\n",
            "services.main.volumes",
        ),
        ("services:\n  main:\n    ports: ['22:22']\n", "services.main.ports"),
        ("services:\n  main:\n    privileged: true\n", "services.main.privileged"),
        ("services:\n  main:\n    network_mode: host\n", "services.main.network_mode"),
        ("services:\n  main: {}\nvolumes:\n  data: {}\n", "volumes"),
        ("services:\n  main: {}\nnetworks:\n  up:\n    external: true\n", "networks.up.external"),
        ("services:\n  main: {}\nnetworks:\n  h:\n    driver: host\n", "networks.h.driver"),
        (
            "services:\n  main: {}\nnetworks:\n  default:\n    name: bridge\n",
            "networks.default.name",
        ),
        ("services:\n  main:\n    build: {context: ., dockerfile: Other}\n", "services.main.build"),
    ],
)
def test_main_and_top_level_refusals_name_the_field(tmp_path, text, field):
    (tmp_path / "environment").mkdir()
    (tmp_path / "environment" / "Other").write_text("FROM x\n")
    path = _compose(tmp_path, text)
    with pytest.raises(TaskFormatError) as info:
        parse_compose(path)
    assert info.value.field == field


def test_a_cycle_is_refused(tmp_path):
    path = _compose(
        tmp_path,
        "services:\n  a:\n    image: x\n    depends_on: [b]\n  b:\n    image: x\n"
        "    depends_on: [a]\n",
    )
    with pytest.raises(TaskFormatError, match="a dependency cycle: a -> b -> a"):
        parse_compose(path)


def test_waiting_for_a_disabled_healthcheck_is_refused(tmp_path):
    path = _compose(
        tmp_path,
        "services:\n  main:\n    depends_on: {db: {condition: service_healthy}}\n"
        "  db:\n    image: x\n    healthcheck: {disable: true}\n",
    )
    with pytest.raises(TaskFormatError) as info:
        parse_compose(path)
    assert info.value.field == "services.main.depends_on.db.condition"


def test_harmless_compose_keys_are_noted_not_refused(tmp_path):
    path = _compose(
        tmp_path,
        "version: '3.8'\nservices:\n  main:\n    networks: [app]\n"
        "  db:\n    image: x\n    container_name: db1\n    restart: always\n"
        "    expose: ['5432']\n    networks: [app]\nnetworks:\n  app:\n    driver: bridge\n",
    )
    compose = parse_compose(path)
    assert any("services.db.container_name has no effect" in n for n in compose.notes)
    assert any("services.main.networks has no effect" in n for n in compose.notes)


def test_variables_are_interpolated_as_compose_does(tmp_path):
    path = _compose(
        tmp_path,
        "services:\n  db:\n    image: ${DB_IMAGE:-postgres:16}\n    environment:\n"
        "      A: ${CPUS}\n      B: $$literal\n      C: ${UNSET}\n      D: ${MEMORY-x}\n"
        "      E: ${TOKEN:+set}\n    command: echo $MAIN_IMAGE_NAME\n",
    )
    variables = harbor_variables({"TOKEN": "t"}, cpus=2, memory_mb=1024)
    db = parse_compose(path, variables=variables, closed=False).sidecar("db")
    assert db.image == "postgres:16"
    assert db.env == {"A": "2", "B": "$literal", "C": "", "D": "1024M", "E": "set"}
    assert db.command == ("echo", "main")
    path.write_text("services:\n  db:\n    image: ${NEEDED:?set NEEDED}\n")
    with pytest.raises(TaskFormatError, match="variable NEEDED is required: set NEEDED"):
        parse_compose(path, closed=False)


@pytest.mark.parametrize(
    ("environment", "field"),
    [
        ("      KEY: ${OPENAI_API_KEY}\n", "services.db.environment.KEY"),
        ("      KEY: ${HOME:-/root}\n", "services.db.environment.KEY"),
        ("      KEY: x$AWS_SECRET_ACCESS_KEY\n", "services.db.environment.KEY"),
        ("      - OPENAI_API_KEY\n", "services.db.environment.OPENAI_API_KEY"),
        ("      OPENAI_API_KEY:\n", "services.db.environment.OPENAI_API_KEY"),
    ],
)
def test_values_from_the_hosts_environment_are_refused(tmp_path, environment, field):
    """Harbor's `docker compose` interpolates the file again with its own process's
    environment: an unknown variable or a name without a value would carry the host's value
    (an API key) into the task, though factory's own run saw an empty one."""
    path = _compose(tmp_path, "services:\n  db:\n    image: x\n    environment:\n" + environment)
    variables = harbor_variables({"TOKEN": "t"}, cpus=2, memory_mb=1024)
    with pytest.raises(TaskFormatError, match="machine that runs") as caught:
        parse_compose(path, variables=variables)
    assert caught.value.field == field
    main = path.read_text().replace("  db:\n    image: x\n", "  main:\n")
    path.write_text(main)
    with pytest.raises(TaskFormatError, match="machine that runs"):
        parse_compose(path, variables=variables)


def test_the_variables_harbor_sets_and_escaped_dollars_still_pass(tmp_path):
    path = _compose(
        tmp_path,
        "services:\n  db:\n    image: x\n    environment:\n      A: ${CPUS}\n"
        "      B: $$HOME\n      C: ${TOKEN:-none}\n      D: $MEMORY\n",
    )
    variables = harbor_variables({"TOKEN": "t"}, cpus=2, memory_mb=1024)
    env = parse_compose(path, variables=variables).sidecar("db").env
    assert env == {"A": "2", "B": "$HOME", "C": "t", "D": "1024M"}


def test_healthcheck_forms_and_defaults(tmp_path):
    path = _compose(
        tmp_path,
        "services:\n"
        "  a:\n    image: x\n    healthcheck: {test: [CMD-SHELL, 'curl -f localhost || exit 1']}\n"
        "  b:\n    image: x\n    healthcheck: {test: [CMD, pg_isready, -U, 'my user'],"
        " interval: 1m30s, timeout: 500ms, start_period: 1h, retries: 2}\n"
        "  c:\n    image: x\n    healthcheck: {test: [NONE]}\n",
    )
    compose = parse_compose(path)
    assert compose.sidecar("a").healthcheck == ServiceHealthcheck("curl -f localhost || exit 1")
    b = compose.sidecar("b").healthcheck
    assert b.command == "pg_isready -U 'my user'"
    assert (b.interval_sec, b.timeout_sec, b.start_period_sec, b.retries) == (90, 0.5, 3600, 2)
    assert compose.sidecar("c").healthcheck is None and compose.sidecar("c").healthcheck_disabled


def test_compose_readiness_polls_fast_within_dockers_budget():
    check = compose_readiness(
        "true", interval_sec=30, timeout_sec=30, retries=3, start_period_sec=10
    )
    assert check.interval_sec == 0.5
    assert check.deadline_sec() == 10 + 3 * 60
    found = image_readiness(
        {"Test": ["CMD-SHELL", "redis-cli ping"], "Interval": 2e9, "Timeout": 1e9, "Retries": 4}
    )
    assert isinstance(found, Readiness) and found.command == "redis-cli ping"
    assert found.deadline_sec() == 4 * 3
    assert image_readiness({"Test": ["NONE"]}) is None and image_readiness(None) is None
    assert image_readiness({"Test": ["CMD", "a b", "c"]}).command == "'a b' c"


def test_sidecar_specs_are_limited_below_the_task(monkeypatch, tmp_path):
    task = load_task(HARBOR_EXAMPLE)
    monkeypatch.setattr(phases, "service_images", lambda t, image: {"kv": "factory-env:kv"})
    spec = phases.container_spec(task, "factory-env:main")
    (kv,) = spec.services
    assert (kv.name, kv.image) == ("kv", "factory-env:kv")
    assert (kv.cpus, kv.memory_mb, kv.pids_limit) == (0.5, 128, 256)
    assert kv.readiness is not None and kv.readiness.deadline_sec() == 15 * 5
    assert spec.alias == "main" and spec.join is None
    # a sidecar without limits gets factory's defaults, never more than the task's own
    copy = tmp_path / "task"
    shutil.copytree(HARBOR_EXAMPLE, copy)
    path = copy / "environment" / "docker-compose.yaml"
    data = yaml.safe_load(path.read_text())
    del data["services"]["kv"]["deploy"]
    path.write_text(yaml.safe_dump(data))
    task = load_task(copy)
    (kv,) = phases.container_spec(task, "factory-env:main").services
    assert (kv.memory_mb, kv.cpus) == (DEFAULT_SIDECAR_MEMORY_MB, 1.0)
    assert sidecar_limits(task.compose.sidecar("kv"), cpus=0.5, memory_mb=256, pids=64) == (
        0.5,
        256,
        64,
    )


def test_a_task_without_sidecars_starts_one_container(tmp_path):
    task = load_task(TB2_STYLE_TASK)
    assert task.compose is None
    assert phases.container_spec(task, "img").services == ()


def test_the_tb1_example_converts_to_harbor_sidecars(tmp_path):
    task = convert_tb1(TB1_EXAMPLE, tmp_path / "out")
    compose = task.compose
    assert compose.path == tmp_path / "out" / "environment" / "docker-compose.yaml"
    (api,) = compose.sidecars
    assert (api.build_context, api.memory_mb) == ("api", 256)
    assert (tmp_path / "out" / "environment" / "api" / "api.py").is_file()
    assert compose.main_depends_on == {"api": "service_healthy"}
    notes = task.config.provenance.notes
    assert any("sidecars api run beside" in n for n in notes)
    assert not any("services.client." in n for n in notes), notes  # the importer's own keys
    written = yaml.safe_load(compose.path.read_text())
    assert set(written["services"]) == {"main", "api"}
    assert "image" not in written["services"]["api"]  # TB1's tag name is dropped with build


def test_tb1_sidecar_contexts_outside_the_clients_are_copied(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(TB1_EXAMPLE, src)
    (src / "client").mkdir()
    (src / "Dockerfile").rename(src / "client" / "Dockerfile")
    text = (src / "docker-compose.yaml").read_text()
    text = text.replace(
        "      dockerfile: Dockerfile\n    image: ${T_BENCH_TASK_DOCKER_CLIENT",
        "      context: client\n    image: ${T_BENCH_TASK_DOCKER_CLIENT",
        1,
    )
    (src / "docker-compose.yaml").write_text(text)
    task = convert_tb1(src, tmp_path / "out")
    assert task.compose.sidecar("api").build_context == "_sidecars/api"
    assert (task.root / "environment" / "_sidecars" / "api" / "api.py").is_file()
    # a sidecar built from the task's root would carry the tests into a build context
    (src / "docker-compose.yaml").write_text(text.replace("context: api", "context: ."))
    (src / "Dockerfile").write_text("FROM x\n")
    with pytest.raises(TaskFormatError) as info:
        convert_tb1(src, tmp_path / "out2")
    assert info.value.field == "services.api.build.context"


def test_tb1_dollars_survive_the_second_interpolation(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(TB1_EXAMPLE, src)
    text = (
        (src / "docker-compose.yaml")
        .read_text()
        .replace("CATALOGUE_SEED=20250620", "CATALOGUE_SEED=$$HOME-${T_BENCH_TEST_DIR}")
    )
    (src / "docker-compose.yaml").write_text(text)
    task = convert_tb1(src, tmp_path / "out")
    assert task.compose.sidecar("api").env == {"CATALOGUE_SEED": "$HOME-/tests"}


@pytest.mark.parametrize(
    ("context", "dockerfile", "field"),
    [
        ("./kv", "Dockerfile", "services.kv.build.context"),
        ("./kv/inner", "Dockerfile", "services.kv.build.context"),
        ("./own", "../own/linked", "services.kv.build.dockerfile"),
    ],
)
def test_a_build_that_a_symbolic_link_leads_outside_is_refused(
    tmp_path, context, dockerfile, field
):
    """environment/kv -> a folder outside the task: its files (the host's) would be the
    sidecar's build context, baked into an image the agent can reach."""
    outside = tmp_path / "outside"
    (outside / "inner").mkdir(parents=True)
    for folder in (outside, outside / "inner"):
        (folder / "Dockerfile").write_text("FROM x\nCOPY . /srv\n")
    (outside / "id_rsa").write_text("host secret\n")
    path = _compose(
        tmp_path,
        f"services:\n  kv:\n    build: {{context: {context}, dockerfile: {dockerfile}}}\n",
    )
    environment = path.parent
    (environment / "kv").symlink_to(outside, target_is_directory=True)
    (environment / "own").mkdir()
    (environment / "own" / "linked").symlink_to(outside / "Dockerfile")
    with pytest.raises(TaskFormatError, match="leads outside environment/") as caught:
        parse_compose(path)
    assert caught.value.field == field


def test_a_symbolic_link_inside_environment_is_fine(tmp_path):
    path = _compose(tmp_path, "services:\n  kv:\n    build: {context: ./kv}\n")
    real = path.parent / "real"
    real.mkdir()
    (real / "Dockerfile").write_text("FROM x\n")
    (path.parent / "kv").symlink_to("real", target_is_directory=True)
    assert parse_compose(path).sidecar("kv").build_context == "kv"
