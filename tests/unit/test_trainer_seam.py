"""factory never imports its trainer: the trainer-facing commands reach factory_train only
through factory.trainer_plugin, by name, when they run."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from fixtures.fresh_import import loaded_after_import

import factory.trainer_plugin as seam
from factory.agent.runners import PolicyConfig
from factory.errors import FactoryError

FACTORY = Path(__file__).resolve().parents[2] / "factory"


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_no_module_of_factory_imports_the_trainer():
    offenders = [
        str(path.relative_to(FACTORY.parent))
        for path in FACTORY.rglob("*.py")
        if "shipped" not in path.parts  # files families copy into tasks (fragments, not modules)
        and any(m.split(".")[0] == "factory_train" for m in imported_modules(path))
    ]
    assert offenders == []


def test_the_cli_loads_without_the_trainer():
    assert loaded_after_import(["factory.cli"], ["factory_train"]) == []


def test_the_trainer_implements_the_seam():
    trainer = seam.load_trainer()
    for method in ("load_config", "local_runner", "train"):
        assert callable(getattr(trainer, method)), method
    config = trainer.load_config(None, model="some-model", seed=None)
    assert config.model == "some-model" and config.seed == 0  # None overrides nothing
    for field in PolicyConfig.__annotations__:
        assert hasattr(config, field), field


def test_a_missing_trainer_is_one_clear_error(monkeypatch):
    monkeypatch.setattr(seam, "TRAINER_MODULE", "factory_train_not_installed_here")
    with pytest.raises(FactoryError, match=r"the trainer does not import.*pip install"):
        seam.load_trainer()


def test_bad_settings_name_the_file_and_field(tmp_path):
    bad = tmp_path / "train.yaml"
    bad.write_text("steps: -3\n")
    with pytest.raises(FactoryError, match=r"train.yaml.*steps"):
        seam.load_trainer().load_config(bad)
