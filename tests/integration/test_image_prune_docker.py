"""`factory images prune` against the real engine: three tiny task images, least recently used
first, the image of a running container kept. Only this test's run is touched (--run)."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factory.cli import app
from factory.images import usage
from factory.images.prune import list_task_images, prune_task_images
from factory.images.task_image import TaskImageBuilder
from factory.tasks.model import load_task
from factory.validate.phases import container_spec

pytestmark = pytest.mark.docker
MIB = 1 << 20


def tiny_task(root: Path, name: str) -> Path:
    nonce = uuid.uuid4().hex[:8]  # no cached image, no cached layer from an earlier run
    task = root / name
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    (task / "instruction.md").write_text("Do nothing.\n")
    (task / "task.toml").write_text(f'[task]\nname = "prune-test/{name}"\n')
    # 1 MiB of random bytes: a layer of its own, unlike any other image's
    (task / "environment" / "Dockerfile").write_text(
        f"FROM factory/base:bookworm\nRUN head -c {MIB} /dev/urandom > /blob-{name}-{nonce}\n"
    )
    (task / "tests" / "test.sh").write_text("#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n")
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\ntrue\n")
    return task


@pytest.fixture
def three_images(tmp_path, runtime, monkeypatch):
    monkeypatch.setenv("FACTORY_CACHE_DIR", str(tmp_path / "cache"))
    builder = TaskImageBuilder(runtime)
    refs = {}
    for name in ("oldest", "middle", "newest"):
        task = load_task(tiny_task(tmp_path / "tasks", name))
        refs[name] = (task, builder.ensure(task).ref)
    now = time.time()
    for offset, name in enumerate(("oldest", "middle", "newest")):
        usage.record_use(refs[name][1], when=now + offset)  # used in this order
    return refs


def test_prune_keeps_the_most_recent(runtime, three_images):
    entries, sizes, protected = list_task_images(runtime, run_id=runtime.run_id)
    assert len(entries) == 3
    own = {e.tags[0]: e for e in entries}
    for _task, ref in three_images.values():
        layers = own[ref].layers
        assert MIB <= sum(sizes[layer] for layer in layers if layer not in protected) < 2 * MIB

    runner = CliRunner()
    args = ["images", "prune", "--max-size", "1.5M", "--run", runtime.run_id]
    dry = runner.invoke(app, [*args, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would remove 2" in dry.output
    plan = json.loads(runner.invoke(app, [*args, "--dry-run", "--json"]).stdout)
    assert plan["dry_run"] and len(plan["removed"]) == 2
    assert plan["total_after"] <= plan["limit"] < plan["total_before"]
    assert all(runtime.image_exists(ref) for _t, ref in three_images.values())

    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "removed 2" in done.output
    runtime.forget_image(three_images["oldest"][1])
    runtime.forget_image(three_images["middle"][1])
    assert not runtime.image_exists(three_images["oldest"][1])
    assert not runtime.image_exists(three_images["middle"][1])
    assert runtime.image_exists(three_images["newest"][1])
    assert three_images["oldest"][1] not in usage.last_used()  # forgotten with the image


def test_an_image_in_use_is_never_removed(runtime, three_images):
    task, oldest = three_images["oldest"]
    box = runtime.start(container_spec(task, oldest))
    try:
        report = prune_task_images(runtime, 0, run_id=runtime.run_id)
    finally:
        box.close()
    removed = {t for e in report.removed for t in e.tags}
    assert removed == {three_images["middle"][1], three_images["newest"][1]}
    runtime.forget_image(oldest)
    assert runtime.image_exists(oldest)
    assert report.total_after > 0  # what is left is the image in use
    # the base image is untouched
    assert runtime.image_exists("factory/base:bookworm")
