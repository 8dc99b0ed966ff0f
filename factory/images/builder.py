"""Build the local base images offline: debootstrap -> docker import -> a small docker build.

Idempotent: an image whose ``factory.recipe_hash`` label matches the recipe is left alone, so a
second `factory images build` takes seconds.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from factory.errors import FactoryError, ImageBuildError
from factory.images.recipes import ImageRecipe
from factory.runtime import (
    KIND_BASE_IMAGE,
    LABEL_KIND,
    LABEL_MANAGED,
    LABEL_RECIPE_HASH,
    DockerRuntime,
)
from factory.tasks.hashing import hash_tree

HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
_PEM_RE = re.compile(
    rb"-----BEGIN CERTIFICATE-----\r?\n.+?\r?\n-----END CERTIFICATE-----", re.DOTALL
)


def default_cache_dir() -> Path:
    """~/.cache/factory/images (honours XDG_CACHE_HOME and FACTORY_CACHE_DIR)."""
    if os.environ.get("FACTORY_CACHE_DIR"):
        return Path(os.environ["FACTORY_CACHE_DIR"]) / "images"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "factory" / "images"


@dataclass
class BuildOutcome:
    name: str
    status: str
    """'up-to-date' or 'built'."""
    seconds: float
    image_id: str


def host_mirror(sources: tuple[Path, ...] = (Path("/etc/apt/sources.list"),)) -> str:
    """The first http(s) Debian mirror in the host's apt sources, else deb.debian.org."""
    files = [p for p in sources if p.is_file()]
    sources_d = Path("/etc/apt/sources.list.d")
    if sources_d.is_dir():
        files += sorted(sources_d.glob("*.list")) + sorted(sources_d.glob("*.sources"))
    for path in files:
        for line in path.read_text(errors="replace").splitlines():
            line = line.strip()
            if line.startswith("#"):
                continue
            match = re.match(r"^(?:deb\s+(?:\[[^\]]*\]\s+)?|URIs:\s*)(https?://\S+)", line)
            if match and "security" not in match.group(1):
                return match.group(1).rstrip("/")
    return DEFAULT_MIRROR


def host_ca_bytes(enabled: bool) -> bytes:
    if not enabled or not HOST_CA_BUNDLE.is_file():
        return b""
    return HOST_CA_BUNDLE.read_bytes()


def recipe_hash(recipe: ImageRecipe, host_ca: bytes, parent_id: str = "") -> str:
    digest = hashlib.sha256()
    digest.update(recipe.model_dump_json(by_alias=True).encode())
    for spec in recipe.copy_:
        digest.update(hash_tree(spec.source_path()).encode())
    digest.update(hashlib.sha256(host_ca).digest())
    digest.update(parent_id.encode())
    return digest.hexdigest()


def extra_certificates(host_bundle: bytes, image_bundle: bytes) -> list[bytes]:
    """Certificates the host trusts that the image's bundle lacks (e.g. a TLS-intercepting proxy)."""
    known = {pem.strip() for pem in _PEM_RE.findall(image_bundle)}
    return [pem for pem in _PEM_RE.findall(host_bundle) if pem.strip() not in known]


def _run_logged(cmd: list[str], log: Path, what: str) -> None:
    with log.open("a") as handle:
        handle.write(f"$ {' '.join(cmd)}\n")
        handle.flush()
        result = subprocess.run(cmd, stdout=handle, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise ImageBuildError(
            f"{what} failed (exit {result.returncode}); log: {log}", "\n".join(tail)
        )


def _debootstrap(
    recipe: ImageRecipe, workdir: Path, host_ca: bytes, log: Path, cache_dir: Path
) -> tuple[Path, int]:
    """A root filesystem tarball for the recipe (cached by what goes into it)."""
    spec = recipe.debootstrap
    assert spec is not None
    mirror = spec.mirror or host_mirror()
    key = hashlib.sha256(
        spec.model_dump_json().encode() + mirror.encode() + hashlib.sha256(host_ca).digest()
    ).hexdigest()[:16]
    cached = cache_dir / f"rootfs-{spec.suite}-{key}.tar"
    if cached.is_file():
        return cached, -1
    if shutil.which("debootstrap") is None:
        raise FactoryError(
            "debootstrap is not installed; run `apt-get install -y debootstrap` (scripts/setup.sh does)"
        )
    rootfs = workdir / "rootfs"
    cmd = [
        "debootstrap",
        f"--variant={spec.variant}",
        f"--components={','.join(spec.components)}",
    ]
    if spec.packages:
        cmd.append(f"--include={','.join(spec.packages)}")
    cmd += [spec.suite, str(rootfs), mirror]
    _run_logged(cmd, log, "debootstrap")
    added = 0
    if host_ca:
        image_bundle = rootfs / SYSTEM_CA_BUNDLE.lstrip("/")
        existing = image_bundle.read_bytes() if image_bundle.is_file() else b""
        target = rootfs / "usr/local/share/ca-certificates/factory-host"
        for index, pem in enumerate(extra_certificates(host_ca, existing)):
            target.mkdir(parents=True, exist_ok=True)
            (target / f"host-{index:03d}.crt").write_bytes(pem + b"\n")
            added += 1
    tarball = workdir / "rootfs.tar"
    _run_logged(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(tarball), "."], log, "tar")
    shutil.rmtree(rootfs, ignore_errors=True)
    for stale in cache_dir.glob(f"rootfs-{spec.suite}-*.tar"):
        stale.unlink(missing_ok=True)
    tarball.replace(cached)
    return cached, added


def _dockerfile(recipe: ImageRecipe, base: str, with_ca: bool, labels: dict[str, str]) -> str:
    lines = [f"FROM {base}"]
    if recipe.apt_packages:
        lines.append(
            "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "
            f"--no-install-recommends {' '.join(recipe.apt_packages)} && apt-get clean"
        )
    for index, spec in enumerate(recipe.copy_):
        lines.append(f"COPY copy{index}/ {spec.dest}")
    if with_ca:
        lines.append("RUN update-ca-certificates >/dev/null")
    env = dict(recipe.env)
    if with_ca:
        for var in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "NODE_EXTRA_CA_CERTS"):
            env.setdefault(var, SYSTEM_CA_BUNDLE)
    if env:
        lines.append("ENV " + " ".join(f"{k}={json.dumps(v)}" for k, v in env.items()))
    if recipe.run:
        lines.append("RUN set -e; " + "; ".join(recipe.run))
    lines.append("LABEL " + " ".join(f"{k}={json.dumps(v)}" for k, v in labels.items()))
    lines.append('CMD ["bash"]')
    return "\n".join(lines) + "\n"


def build_recipe(
    runtime: DockerRuntime,
    recipe: ImageRecipe,
    *,
    host_ca: bool = True,
    force: bool = False,
    cache_dir: Path | None = None,
    log_dir: Path | None = None,
    say: Callable[[str], None] = lambda _msg: None,
) -> BuildOutcome:
    """Build one recipe unless an image with the same recipe hash already exists."""
    started = time.monotonic()
    parent_id = ""
    if recipe.from_image:
        parent_id = runtime.image_id(recipe.from_image) or ""
        if not parent_id:
            raise FactoryError(f"{recipe.source}: from_image {recipe.from_image} is not built yet")
    ca = host_ca_bytes(host_ca)
    wanted = recipe_hash(recipe, ca, parent_id)
    current = runtime.image_labels(recipe.name) if runtime.image_exists(recipe.name) else {}
    if not force and current.get(LABEL_RECIPE_HASH) == wanted:
        return BuildOutcome(
            recipe.name,
            "up-to-date",
            time.monotonic() - started,
            runtime.image_id(recipe.name) or "",
        )
    cache_dir = cache_dir or default_cache_dir()
    cache_dir.mkdir(parents=True, exist_ok=True)
    log_dir = log_dir or cache_dir
    log_dir.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", recipe.name)
    log = log_dir / f"{safe}.log"
    log.write_text(f"# factory images build {recipe.name} ({wanted[:12]})\n")
    labels = {LABEL_MANAGED: "1", LABEL_KIND: KIND_BASE_IMAGE, LABEL_RECIPE_HASH: wanted}
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=f"{safe}-") as tmp:
        workdir = Path(tmp)
        rootfs_tag = ""
        with_ca = False
        if recipe.debootstrap is not None:
            say(f"{recipe.name}: debootstrap {recipe.debootstrap.suite} (about a minute, cached)")
            tarball, _ = _debootstrap(recipe, workdir, ca, log, cache_dir)
            with_ca = bool(ca)
            rootfs_tag = f"factory/rootfs:{safe.replace(':', '-')}-{wanted[:12]}"
            say(f"{recipe.name}: docker import")
            runtime.import_rootfs(tarball, rootfs_tag)
            base = rootfs_tag
        else:
            base = recipe.from_image or ""
        context = workdir / "context"
        context.mkdir()
        for index, spec in enumerate(recipe.copy_):
            shutil.copytree(spec.source_path(), context / f"copy{index}", symlinks=True)
        say(f"{recipe.name}: docker build")
        try:
            image_id = runtime.build_image(
                context,
                _dockerfile(recipe, base, with_ca, labels),
                tag=recipe.name,
                labels=labels,
                timeout_sec=1800,
                log_path=log_dir / f"{safe}.docker.log",
            ).id
        finally:
            if rootfs_tag:
                runtime.remove_image(rootfs_tag)
    return BuildOutcome(recipe.name, "built", time.monotonic() - started, image_id)


def build_images(
    runtime: DockerRuntime,
    recipes: list[ImageRecipe],
    *,
    host_ca: bool = True,
    force: bool = False,
    log_dir: Path | None = None,
    say: Callable[[str], None] = lambda _msg: None,
    on_built: Callable[[BuildOutcome], None] = lambda _outcome: None,
) -> list[BuildOutcome]:
    """`factory images build`: each recipe in order (see :func:`build_recipe`)."""
    outcomes = []
    for recipe in recipes:
        outcome = build_recipe(
            runtime, recipe, host_ca=host_ca, force=force, log_dir=log_dir, say=say
        )
        on_built(outcome)
        outcomes.append(outcome)
    return outcomes
