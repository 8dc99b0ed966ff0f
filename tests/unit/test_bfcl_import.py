"""BFCL multi-turn base importer (host side).

The data tests need a ``bfcl_eval-*.whl``: $FACTORY_BFCL_WHEEL or ~/.cache/factory/wheels/
(`pip download bfcl-eval --no-deps -d ~/.cache/factory/wheels`); they are skipped without one.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest

from factory.errors import BfclDataError
from factory.importers import bfcl
from factory.toolenv import bfcl_runtime as rt

#: Calls that always change some instance's public state in the base category's ground truth.
MUTATING = {"mkdir", "touch", "mv", "cp", "post_tweet", "send_message", "create_ticket"}
MUTATING |= {"place_order", "fund_account", "register_credit_card"}


# --------------------------------------------------------------------------- no data needed


def test_missing_source_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(BfclDataError, match="pip download bfcl-eval --no-deps"):
        bfcl.locate_bfcl(tmp_path / "nope.whl")


def test_incomplete_directory_lists_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "bfcl_eval" / "data").mkdir(parents=True)
    (tmp_path / "bfcl_eval" / "eval_checker").mkdir()
    with pytest.raises(BfclDataError) as info:
        bfcl.locate_bfcl(tmp_path)
    assert "BFCL_v*_multi_turn_base.json" in str(info.value)
    assert "func_source_code/gorilla_file_system.py" in str(info.value)


def test_parse_call_accepts_literals_only() -> None:
    assert rt.parse_call("sort('a.txt')") == ("sort", ["a.txt"], {})
    assert rt.parse_call("f(x=[1, 2.5], y={'k': True})") == (
        "f",
        [],
        {"x": [1, 2.5], "y": {"k": True}},
    )
    for bad in ("f(x=g())", "os.system('x')", "f(**kw)", "f(", "1 + 2"):
        with pytest.raises(ValueError):
            rt.parse_call(bad)


def test_execute_reports_errors_like_bfcl() -> None:
    class Api:
        def ok(self, a: int) -> dict:
            return {"a": a}

        def boom(self) -> None:
            raise ValueError("bad")

    table = rt.method_table({"Api": Api()})
    assert rt.execute_text(table, "ok(a=1)") == '{"a": 1}'
    assert rt.execute_text(table, "boom()") == "Error during execution: bad"
    assert rt.execute_text(table, "nope()") == "Error during execution: name 'nope' is not defined"
    assert rt.execute_text(table, "run()").endswith("Function call run is not allowed.")


def test_state_skips_private_attrs_and_back_references() -> None:
    class Node:
        def __init__(self, name: str, parent: Node | None = None) -> None:
            self.name, self.parent, self.children, self._stamp = name, parent, {}, object()

    class Api:
        def __init__(self) -> None:
            self.root = Node("/")
            self.root.children["a"] = Node("a", self.root)
            self.ids = {3, 1}
            self.by_id = {1: "x"}
            self._random = object()

    state = rt.instance_state(Api())
    assert state == {
        "root": {
            "__class__": "Node",
            "name": "/",
            "parent": None,
            "children": {"a": {"__class__": "Node", "name": "a", "children": {}}},
        },
        "ids": [1, 3],
        "by_id": {"1": "x"},
    }
    json.dumps(state, allow_nan=False)


# --------------------------------------------------------------------------- with the wheel


@pytest.fixture(scope="module")
def wheel() -> Path:
    found = bfcl.find_wheel()
    if found is None or not found.is_file():
        pytest.skip(
            "no bfcl-eval wheel: set FACTORY_BFCL_WHEEL or run "
            "`pip download bfcl-eval --no-deps -d ~/.cache/factory/wheels`"
        )
    return found


@pytest.fixture(scope="module")
def src(wheel: Path) -> bfcl.BfclSource:
    return bfcl.locate_bfcl(wheel)


@pytest.fixture(scope="module")
def entries(src: bfcl.BfclSource) -> list[bfcl.BfclEntry]:
    return bfcl.load_multi_turn_base(src)


def test_locate_from_wheel_and_unpacked_dir(wheel: Path, src: bfcl.BfclSource) -> None:
    assert src.origin == "wheel" and src.version
    assert src.question_file.name.endswith("_multi_turn_base.json")
    again = bfcl.locate_bfcl(src.package_dir.parent)
    assert again.origin == "directory" and again.question_file == src.question_file


def test_load_entries(entries: list[bfcl.BfclEntry]) -> None:
    assert len(entries) > 100
    assert len({e.id for e in entries}) == len(entries)
    for entry in entries:
        assert len(entry.ground_truth) == entry.num_turns > 0
        names = {doc["name"] for doc in entry.functions}
        assert not names & set(entry.excluded_functions)
        assert set(entry.function_classes.values()) == set(entry.involved_classes)
        for doc in entry.functions:
            tool = bfcl.to_json_schema_tool(doc)
            assert tool["function"]["parameters"]["type"] == "object"


def test_simulate_changes_state_and_is_deterministic(
    src: bfcl.BfclSource, entries: list[bfcl.BfclEntry]
) -> None:
    changed = 0
    for entry in entries:
        turns = bfcl.simulate(entry, src)
        assert len(turns) == entry.num_turns
        assert bfcl.execution_errors(turns) == [], entry.id
        assert json.dumps(turns, sort_keys=True) == json.dumps(
            bfcl.simulate(entry, src), sort_keys=True
        ), entry.id
        called = {call.split("(")[0] for turn in entry.ground_truth for call in turn}
        if called & MUTATING:
            assert turns[-1]["state"] != bfcl.initial_state(entry, src), entry.id
            changed += 1
    assert changed > 50


def test_simulate_first_entry_moves_the_report(
    src: bfcl.BfclSource, entries: list[bfcl.BfclEntry]
) -> None:
    entry = next(e for e in entries if e.id == "multi_turn_base_0")
    turns = bfcl.simulate(entry, src)
    document = turns[0]["state"]["GorillaFileSystem"]["root"]["contents"]["document"]
    assert "final_report.pdf" in document["contents"]["temp"]["contents"]
    assert "final_report.pdf" not in document["contents"]
    assert turns[0]["results"][0] == '{"current_working_directory": "document"}'


def test_matches_bfcl_own_executor(
    wheel: Path, src: bfcl.BfclSource, entries: list[bfcl.BfclEntry], tmp_path: Path
) -> None:
    """BFCL's execute_multi_turn_func_call (stdlib-only module) gives the same results/state."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tmp_path, [n for n in archive.namelist() if n.startswith("bfcl_eval/")])
    before = set(sys.modules)
    sys.path.insert(0, str(tmp_path))
    try:
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import (
            execute_multi_turn_func_call,
        )

        for entry in entries[::10]:
            ours = bfcl.simulate(entry, src)
            for index, calls in enumerate(entry.ground_truth):
                results, instances = execute_multi_turn_func_call(
                    calls, entry.initial_config, entry.involved_classes, "factory_test", entry.id
                )
                assert results == ours[index]["results"], (entry.id, index)
                assert rt.dump_state(instances) == ours[index]["state"], (entry.id, index)
    finally:
        sys.path.remove(str(tmp_path))
        for name in set(sys.modules) - before:
            if name.startswith("bfcl_eval"):
                del sys.modules[name]
