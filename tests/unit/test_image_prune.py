"""`factory images prune`: size parsing, the usage log, and the least-recently-used plan."""

from __future__ import annotations

import pytest

from factory.errors import FactoryError
from factory.images import usage
from factory.images.prune import (
    ImageEntry,
    chain_keys,
    footprint,
    parse_size,
    plan_evictions,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("20G", 20 << 30),
        ("512M", 512 << 20),
        ("1.5GiB", int(1.5 * (1 << 30))),
        ("300k", 300 << 10),
        ("1048576", 1 << 20),
        ("0", 0),
        (" 2 gb ", 2 << 30),
    ],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "big", "-1G", "20X", "1,5G"])
def test_parse_size_rejects(text):
    with pytest.raises(FactoryError, match="--max-size"):
        parse_size(text)


def image(name: str, layers: list[str], when: float, in_use: bool = False) -> ImageEntry:
    return ImageEntry(
        image_id=f"sha256:{name}",
        tags=[f"factory-env:{name}"],
        layers=tuple(layers),
        last_used=when,
        in_use=in_use,
    )


BASE = ["base1", "base2"]
SIZES = {"base1": 400, "base2": 100, "a": 10, "b": 20, "c": 30, "shared": 50}


def test_lru_evicts_oldest_until_under_the_limit():
    entries = [
        image("new", [*BASE, "c"], when=300),
        image("old", [*BASE, "a"], when=100),
        image("mid", [*BASE, "b"], when=200),
    ]
    protected = set(BASE)  # the base image is not a task image
    assert footprint(entries, SIZES, protected) == 60
    plan = plan_evictions(entries, SIZES, 30, protected)
    assert [e.name for e in plan.evict] == ["factory-env:old", "factory-env:mid"]
    assert [e.freed for e in plan.evict] == [10, 20]
    assert (plan.total_before, plan.total_after) == (60, 30)


def test_nothing_to_do_under_the_limit():
    entries = [image("x", [*BASE, "a"], when=1)]
    plan = plan_evictions(entries, SIZES, 10, set(BASE))
    assert plan.evict == [] and plan.total_after == 10


def test_images_in_use_are_skipped():
    entries = [
        image("old", [*BASE, "a"], when=100, in_use=True),
        image("mid", [*BASE, "b"], when=200),
        image("new", [*BASE, "c"], when=300),
    ]
    plan = plan_evictions(entries, SIZES, 39, set(BASE))
    assert [e.name for e in plan.evict] == ["factory-env:mid", "factory-env:new"]
    assert plan.total_after == 10  # only the image in use is left
    plan = plan_evictions(entries, SIZES, 0, set(BASE))
    assert plan.total_after == 10  # cannot get lower: the rest is in use


def test_shared_layers_are_counted_once_and_freed_with_the_last_user():
    # two tasks of one family share a layer; an orphaned old base lives only in task images
    entries = [
        image("t1", ["oldbase", "shared", "a"], when=100),
        image("t2", ["oldbase", "shared", "b"], when=200),
        image("t3", [*BASE, "c"], when=300),
    ]
    sizes = {**SIZES, "oldbase": 1000}
    assert footprint(entries, sizes, set(BASE)) == 1000 + 50 + 10 + 20 + 30
    plan = plan_evictions(entries, sizes, 100, set(BASE))
    assert [e.freed for e in plan.evict] == [10, 1070]  # t2 takes the shared layers with it
    assert plan.total_after == 30


def test_untracked_images_fall_back_to_build_time_order():
    entries = [image("built-late", [*BASE, "a"], when=500), image("used", [*BASE, "b"], when=400)]
    plan = plan_evictions(entries, SIZES, 10, set(BASE))
    assert [e.name for e in plan.evict] == ["factory-env:used"]


def test_chain_keys_name_the_whole_stack():
    assert chain_keys(["x", "y"])[0] == chain_keys(["x", "z"])[0]
    assert chain_keys(["x", "y"])[1] != chain_keys(["w", "y"])[1]


def test_usage_log_round_trip(tmp_path):
    db = tmp_path / "usage.sqlite"
    usage.record_use("factory-env:a", "sha256:1", when=10.0, path=db)
    usage.record_use("factory-env:a", "sha256:1", when=5.0, path=db)  # never goes back
    usage.record_use("factory-env:b", None, when=20.0, path=db)
    seen = usage.last_used(db)
    assert seen["factory-env:a"] == 10.0 and seen["sha256:1"] == 10.0
    assert seen["factory-env:b"] == 20.0
    usage.forget(["factory-env:a"], db)
    assert "factory-env:a" not in usage.last_used(db)


def test_usage_log_location_follows_the_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTORY_CACHE_DIR", str(tmp_path))
    usage.record_use("factory-env:c", when=1.0)
    assert (tmp_path / "images" / "usage.sqlite").is_file()
    assert usage.last_used()["factory-env:c"] == 1.0


def test_unwritable_log_is_not_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    usage.record_use("factory-env:d", path=blocker / "sub" / "usage.sqlite")  # logs, no raise
    assert usage.last_used(blocker / "sub" / "usage.sqlite") == {}
