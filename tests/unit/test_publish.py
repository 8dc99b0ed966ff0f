"""factory export / import: round trips for jsonl, harbor and hf (no Docker)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from fixtures.files import write_files
from fixtures.fresh_import import loaded_after_import
from publish_suite import EXAMPLE_TASKS, make_suite

from factory.compat import tomllib
from factory.publish.api import detect_format, export_suite, import_export
from factory.publish.errors import (
    ExportFileError,
    IntegrityError,
    MissingDependencyError,
    OutputExistsError,
    UnknownFormatError,
    UnsafePathError,
)
from factory.publish.harbor_digest import NotReproducible, harbor_digest, package_files
from factory.publish.models import MANIFEST_NAME, FileEntry, dataset_hash
from factory.publish.tree import read_tree, write_tree
from factory.tasks.hashing import hash_tree

FORMATS = ("jsonl", "harbor", "hf")


def needs(fmt: str) -> None:
    if fmt == "hf":
        pytest.importorskip("pyarrow")


def snapshot(task_dir: Path) -> list[tuple]:
    """Everything the round trip must keep: paths, kinds, modes, bytes, link targets."""
    return [
        (e.path, e.kind, e.mode if e.kind != "symlink" else None, e.content, e.link_target)
        for e in read_tree(task_dir)
    ]


def task_dirs(folder: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted(folder.iterdir()) if p.is_dir()}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return make_suite(tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_suite_round_trip_is_byte_identical(fmt, suite, tmp_path):
    needs(fmt)
    out = tmp_path / f"export-{fmt}"
    result = export_suite(suite, fmt, out)
    originals = task_dirs(suite / "tasks")
    assert result.manifest.task_count == len(originals) == 6
    assert result.manifest.content_hash == dataset_hash(hash_tree(p) for p in originals.values())
    if fmt == "harbor":  # the edge-case task has a symbolic link: no Harbor digest for it
        assert any("no Harbor digest" in w and "symbolic link" in w for w in result.warnings)
        assert any("no dataset.toml written" in w for w in result.warnings)
    else:
        assert result.warnings == []

    imported = import_export(out, tmp_path / f"back-{fmt}")
    assert imported.format == fmt
    assert {t.status for t in imported.tasks} == {"imported"}
    back = task_dirs(tmp_path / f"back-{fmt}")
    assert sorted(back) == sorted(originals)
    for name, original in originals.items():
        assert snapshot(back[name]) == snapshot(original), name
        assert hash_tree(back[name]) == hash_tree(original)
    edge = back[sorted(originals)[0]] / "environment"
    assert (edge / "empty-dir").is_dir() and not any((edge / "empty-dir").iterdir())
    assert os.readlink(edge / "blob-link") == "blob.bin"
    assert (edge / "private.txt").stat().st_mode & 0o777 == 0o600
    assert (edge / "locked").stat().st_mode & 0o777 == 0o700
    assert not (back[sorted(originals)[0]] / "tests" / "__pycache__").exists()

    again = import_export(out, tmp_path / f"back-{fmt}")
    assert {t.status for t in again.tasks} == {"unchanged"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_examples_folder_round_trip(fmt, tmp_path):
    """A plain folder of task directories (no suite.json) exports and imports too."""
    needs(fmt)
    out = tmp_path / "export"
    result = export_suite(EXAMPLE_TASKS, fmt, out)
    assert result.manifest.suite is None and result.manifest.name == "tasks"
    import_export(out, tmp_path / "back")
    for name, original in task_dirs(EXAMPLE_TASKS).items():
        copy = tmp_path / "back" / name
        assert snapshot(copy) == snapshot(original)
        assert hash_tree(copy) == hash_tree(original)


def test_jsonl_index_holds_the_metadata(suite, tmp_path):
    export_suite(suite, "jsonl", tmp_path / "out")
    lines = (tmp_path / "out" / "tasks.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 6
    first = rows[0]
    for key in (
        "id",
        "path",
        "content_hash",
        "difficulty",
        "category",
        "taxonomy_path",
        "generator",
        "seed",
        "verifier_strength",
        "validation_outcome",
    ):
        assert key in first, key
    assert first["path"] == f"tasks/{first['id']}"
    assert first["content_hash"] == hash_tree(suite / "tasks" / first["id"])
    assert first["validation_outcome"] == "valid"
    assert first["taxonomy_path"] == "terminal/text/reports"
    assert first["seed"] == 1000 and first["pass_rate"] == 0.25
    assert (tmp_path / "out" / first["path"] / "task.toml").is_file()
    manifest = json.loads((tmp_path / "out" / MANIFEST_NAME).read_text())
    assert manifest["format"] == "jsonl" and manifest["suite"] == "fixture"


def test_harbor_registry_entry_and_dataset_toml(tmp_path):
    suite = make_suite(tmp_path, edge_cases=False)
    out = tmp_path / "out"
    result = export_suite(
        suite,
        "harbor",
        out,
        name="fixture-set",
        version="2.0",
        git_url="https://example.invalid/org/repo.git",
        git_commit="abc123",
    )
    assert result.warnings == []
    assert result.manifest.index == ["registry.json", "dataset.toml"]
    registry = json.loads((out / "registry.json").read_text())
    assert isinstance(registry, list) and len(registry) == 1
    dataset = registry[0]
    assert (dataset["name"], dataset["version"]) == ("fixture-set", "2.0")
    assert isinstance(dataset["description"], str) and dataset["metrics"] == []
    for task in dataset["tasks"]:
        assert set(task) >= {"name", "git_url", "git_commit_id", "path", "digest", "content_hash"}
        assert task["git_commit_id"] == "abc123"
        assert task["content_hash"] == hash_tree(out / task["path"])
        assert task["digest"] == harbor_digest(out / task["path"])
    digests = sorted(t["digest"].removeprefix("sha256:") for t in dataset["tasks"])
    expected = hashlib.sha256(",".join(digests).encode()).hexdigest()
    assert dataset["digest"] == f"sha256:{expected}"

    manifest = tomllib.loads((out / "dataset.toml").read_text())
    assert manifest["schema_version"] == "1.0"
    assert manifest["dataset"] == {
        "name": "factory-examples/fixture-set",  # the tasks' org + --name
        "version": "2.0",
        "description": dataset["description"],
    }
    by_name = {t["name"]: t["digest"] for t in manifest["tasks"]}
    assert by_name["factory-examples/access-log-report"] == harbor_digest(
        out / "tasks" / "access-log-report"
    )
    assert len(by_name) == 6
    # A registry entry made with git coordinates still imports from a local checkout.
    import_export(out / "registry.json", tmp_path / "back")
    assert len(task_dirs(tmp_path / "back")) == 6


def test_harbor_digest_follows_harbors_packager(tmp_path):
    """The file selection and record format of harbor 0.26.0's Packager (checked by hand
    against it on 54 tasks and this layout)."""
    task = tmp_path / "t"
    files = {
        "task.toml": "x",
        "instruction.md": "i",
        "README.md": "r",
        "notes.txt": "not published",
        "environment/Dockerfile": "d",
        "environment/.DS_Store": "ignored",
        "environment/sub/file~": "ignored",
        "environment/sub/keep.swpx": "kept",
        "environment/.harborignore": "ignored file",
        "tests/__pycache__/x.pyc": "ignored",
        "tests/mod.pyc": "ignored",
        "tests/test.sh": "q",
        "solution/solve.sh": "s",
        "steps/one/tests/test.sh": "st",
    }
    write_files(task, {rel: text + "\n" for rel, text in files.items()})
    published = [
        "README.md",
        "environment/Dockerfile",
        "environment/sub/keep.swpx",
        "instruction.md",
        "solution/solve.sh",
        "steps/one/tests/test.sh",
        "task.toml",
        "tests/test.sh",
    ]
    assert package_files(task) == published
    outer = hashlib.sha256()
    for rel in published:
        inner = hashlib.sha256((files[rel] + "\n").encode()).hexdigest()
        outer.update(f"{rel}\0{inner}\n".encode())
    assert harbor_digest(task) == f"sha256:{outer.hexdigest()}"

    (task / "tests" / ".harborignore").write_text("*.log\n")
    with pytest.raises(NotReproducible, match="ignore rules"):
        harbor_digest(task)
    (task / "tests" / ".harborignore").unlink()
    os.symlink("Dockerfile", task / "environment" / "link")
    with pytest.raises(NotReproducible, match="symbolic link"):
        harbor_digest(task)
    (task / "environment" / "link").unlink()
    (task / ".gitignore").write_text("*.tmp\n")
    with pytest.raises(NotReproducible, match=".gitignore"):
        harbor_digest(task)


def test_harbor_registry_with_two_datasets_needs_a_choice(suite, tmp_path):
    out = tmp_path / "out"
    export_suite(suite, "harbor", out)
    registry = json.loads((out / "registry.json").read_text())
    second = dict(registry[0], name="other", tasks=registry[0]["tasks"][:2])
    (out / "registry.json").write_text(json.dumps([registry[0], second]))
    (out / MANIFEST_NAME).unlink()
    with pytest.raises(Exception, match="pick one with --dataset"):
        import_export(out, tmp_path / "back")
    result = import_export(out, tmp_path / "back", dataset="other@1.0")
    assert len(result.tasks) == 2


def test_hf_rows_and_card(suite, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    out = tmp_path / "out"
    export_suite(suite, "hf", out, license="cc-by-4.0")
    files = sorted((out / "data").glob("*.parquet"))
    assert [f.name for f in files] == ["train-00000-of-00001.parquet"]
    table = pq.read_table(files[0])
    assert table.num_rows == 6
    assert table.schema.field("files").type == pa.list_(
        pa.struct(
            [
                ("path", pa.string()),
                ("kind", pa.string()),
                ("mode", pa.int32()),
                ("content", pa.binary()),
                ("link_target", pa.string()),
            ]
        )
    )
    row = table.slice(0, 1).to_pylist()[0]
    assert row["instruction"] == (suite / "tasks" / row["id"] / "instruction.md").read_text()
    assert row["task_toml"] == (suite / "tasks" / row["id"] / "task.toml").read_text()
    assert json.loads(row["metadata_json"])["factory"]["pass_rate"] == 0.25
    card = (out / "README.md").read_text()
    assert card.startswith("---\n")
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["license"] == "cc-by-4.0"
    assert header["configs"][0]["data_files"][0] == {
        "split": "train",
        "path": "data/train-*.parquet",
    }
    assert header["dataset_info"]["splits"][0]["num_examples"] == 6
    assert "| tasks |" in card


def test_hf_sharding(suite, tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "out"
    export_suite(suite, "hf", out, rows_per_shard=4)
    names = sorted(p.name for p in (out / "data").glob("*.parquet"))
    assert names == ["train-00000-of-00002.parquet", "train-00001-of-00002.parquet"]
    import_export(out, tmp_path / "back")
    assert len(task_dirs(tmp_path / "back")) == 6


def test_hf_loads_with_datasets_and_rebuilds(suite, tmp_path):
    pytest.importorskip("pyarrow")
    datasets = pytest.importorskip("datasets")
    from factory.publish.hf import load_tasks, rebuild_task

    out = tmp_path / "out"
    export_suite(suite, "hf", out)
    ds = datasets.load_dataset(
        "parquet",
        data_files=str(out / "data" / "*.parquet"),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )
    assert len(ds) == 6 and "files" in ds.column_names
    for row in ds:
        dest = rebuild_task(row, tmp_path / "from-datasets")
        assert hash_tree(dest) == row["content_hash"]
        assert snapshot(dest) == snapshot(suite / "tasks" / row["id"])
    # The card's configs make the folder itself loadable.
    by_card = datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache2"))
    assert len(by_card) == 6
    rebuilt = load_tasks(out, tmp_path / "loader")
    assert sorted(p.name for p in rebuilt) == sorted(task_dirs(suite / "tasks"))


def test_import_entry_files_directly(suite, tmp_path):
    pytest.importorskip("pyarrow")
    for fmt, entry in (
        ("jsonl", "tasks.jsonl"),
        ("harbor", "registry.json"),
        ("hf", "data/train-00000-of-00001.parquet"),
    ):
        out = tmp_path / fmt
        export_suite(suite, fmt, out)
        assert detect_format(out)[0] == fmt
        result = import_export(out / entry, tmp_path / f"back-{fmt}")
        assert result.format == fmt and len(result.tasks) == 6


def test_tampered_export_fails_the_hash_check(suite, tmp_path):
    out = tmp_path / "out"
    export_suite(suite, "jsonl", out)
    victim = sorted((out / "tasks").iterdir())[2]
    (victim / "instruction.md").write_text("something else\n")
    with pytest.raises(IntegrityError, match=r"tasks\.jsonl: line 3: task '.*' rebuilds to"):
        import_export(out, tmp_path / "back")
    assert not (tmp_path / "back" / victim.name).exists()


def test_hf_row_with_wrong_hash_is_refused(suite, tmp_path):
    pytest.importorskip("pyarrow")
    from factory.publish.hf import iter_rows, rebuild_task

    out = tmp_path / "out"
    export_suite(suite, "hf", out)
    _, row = next(iter_rows(next((out / "data").glob("*.parquet"))))
    data = row.model_dump()
    first_file = next(f for f in data["files"] if f["kind"] == "file")
    first_file["content"] = b"changed"
    with pytest.raises(IntegrityError, match="content_hash"):
        rebuild_task(data, tmp_path / "back")


@pytest.mark.parametrize(
    "entries, message",
    [
        ([FileEntry(path="../evil", content=b"x")], "leaves the task directory"),
        ([FileEntry(path="/etc/evil", content=b"x")], "leaves the task directory"),
        (
            [
                FileEntry(path="link", kind="symlink", link_target="/etc"),
                FileEntry(path="link/passwd", content=b"x"),
            ],
            "lies under a symbolic link",
        ),
        ([FileEntry(path="a", content=b"1"), FileEntry(path="a", content=b"2")], "twice"),
    ],
)
def test_write_tree_refuses_unsafe_entries(entries, message, tmp_path):
    with pytest.raises(UnsafePathError, match=message):
        write_tree(entries, tmp_path / "dest", where="row 0")
    assert not (tmp_path / "evil").exists()


def test_jsonl_errors_name_file_line_and_field(suite, tmp_path):
    out = tmp_path / "out"
    export_suite(suite, "jsonl", out)
    index = out / "tasks.jsonl"
    lines = index.read_text().splitlines()
    broken = json.loads(lines[1])
    broken["content_hash"] = "nope"
    lines[1] = json.dumps(broken)
    index.write_text("\n".join(lines) + "\n")
    with pytest.raises(ExportFileError, match=r"tasks\.jsonl: line 2: content_hash: String"):
        import_export(out, tmp_path / "back")
    broken["content_hash"] = "0" * 64
    broken["path"] = "../../etc"
    lines[1] = json.dumps(broken)
    index.write_text("\n".join(lines) + "\n")
    with pytest.raises(UnsafePathError, match="line 2: path"):
        import_export(out, tmp_path / "back2")


def test_output_folder_rules(suite, tmp_path):
    out = tmp_path / "out"
    export_suite(suite, "jsonl", out)
    with pytest.raises(OutputExistsError, match="--force"):
        export_suite(suite, "jsonl", out)
    export_suite(suite, "harbor", out, force=True)
    assert (out / "registry.json").is_file() and not (out / "tasks.jsonl").exists()
    with pytest.raises(Exception, match="replace its own source"):
        export_suite(suite, "jsonl", suite, force=True)
    with pytest.raises(UnknownFormatError, match="jsonl, harbor, hf"):
        export_suite(suite, "xml", tmp_path / "x")
    # import into a folder holding a different version of a task
    back = tmp_path / "back"
    import_export(out, back)
    first = sorted(back.iterdir())[0]
    (first / "instruction.md").write_text("edited locally\n")
    with pytest.raises(OutputExistsError):
        import_export(out, back)
    replaced = import_export(out, back, force=True)
    assert {t.status for t in replaced.tasks} == {"unchanged", "replaced"}


def test_unknown_sources(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(UnknownFormatError, match="not an export"):
        import_export(tmp_path / "empty", tmp_path / "back")
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(UnknownFormatError):
        import_export(tmp_path / "notes.txt", tmp_path / "back")


def test_cli_export_import_round_trip(suite, tmp_path):
    env = {**os.environ, "COLUMNS": "200"}

    def factory(*args):
        return subprocess.run(
            [sys.executable, "-m", "factory", *args], capture_output=True, text=True, env=env
        )

    done = factory("export", str(suite), "--format", "jsonl", "--out", str(tmp_path / "x"))
    assert done.returncode == 0, done.stderr
    assert "exported 6 tasks (jsonl)" in done.stderr
    back = factory("import", str(tmp_path / "x"), "--out", str(tmp_path / "y"))
    assert back.returncode == 0, back.stderr
    assert "6 tasks into" in back.stderr and "(6 from jsonl)" in back.stderr
    bad = factory("export", str(suite), "--format", "xml", "--out", str(tmp_path / "z"))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_hf_without_pyarrow_names_the_extra(suite, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingDependencyError, match=r"\.\[publish\]"):
        export_suite(suite, "hf", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_import_factory_stays_light():
    modules = ["factory", "factory.cli", "factory.publish.api", "factory.publish.report"]
    assert loaded_after_import(modules, ["pyarrow", "datasets", "torch", "docker"]) == []
