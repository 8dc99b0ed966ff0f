"""Images: ids, labels, pristine contents, imports and tags, and the harness toolkit volume
every task container mounts."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from factory.errors import BaseImageMissingError, DockerUnavailableError, ImageBuildError
from factory.runtime.client import docker_sdk
from factory.runtime.constants import (
    HARNESS_IMAGE,
    KIND_CONTAINER,
    KIND_HARNESS,
    KIND_ROOTFS,
    LABEL_KIND,
    LABEL_MANAGED,
)

_HARNESS_SOURCE = "/opt/factory-harness"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def harness_lock():
    """A host-wide lock around making the harness volume (several runs may start at once)."""
    import fcntl

    @contextlib.contextmanager
    def locked():
        folder = Path(os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
        with (folder / "factory-harness.lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    return locked()


class ImagesMixin:
    """The images of a :class:`~factory.runtime.engine.DockerRuntime`."""

    _lock: threading.Lock
    _image_ids: dict[str, str]
    _harness_volume: str | None
    _references: dict[str, str]
    _image_env: dict[str, str]
    _path_kinds: dict[tuple[str, str], str | None]

    def image_id(self, ref: str) -> str | None:
        """The image's id, or None when the engine does not have it (positive results cached)."""
        cached = self._image_ids.get(ref)
        if cached:
            return cached
        try:
            image_id = self.api.inspect_image(ref)["Id"]
        except docker_sdk().errors.ImageNotFound:
            return None
        except docker_sdk().errors.APIError as exc:
            if getattr(exc, "status_code", None) in (400, 404):
                return None
            raise
        self._image_ids[ref] = image_id
        return image_id

    def image_exists(self, ref: str) -> bool:
        return self.image_id(ref) is not None

    def image_labels(self, ref: str) -> dict[str, str]:
        try:
            return self.api.inspect_image(ref)["Config"].get("Labels") or {}
        except docker_sdk().errors.APIError:
            return {}

    # --- the harness toolkit and pristine image contents ---------------------------------
    def harness_volume(self) -> str:
        """The read-only volume with factory's harness toolkit, made from
        :data:`HARNESS_IMAGE` once per engine (its name carries the image id)."""
        if self._harness_volume:
            return self._harness_volume
        docker = docker_sdk()
        image_id = self.image_id(HARNESS_IMAGE)
        if image_id is None:
            raise BaseImageMissingError(
                f"factory's harness image {HARNESS_IMAGE} is not built; run `factory images build`"
            )
        name = f"factory-harness-{image_id.split(':')[-1][:16]}"
        with harness_lock():
            try:
                self.api.inspect_volume(name)
            except docker.errors.NotFound:
                self._populate_harness_volume(name)
        self._harness_volume = name
        return name

    def _populate_harness_volume(self, name: str) -> None:
        """Fill a new named volume: mounted where the harness image has its files, it gets a
        copy of them from the engine; the container then runs the busybox from the volume, and a
        volume it cannot run from is removed again (callers hold :func:`_harness_lock`)."""
        docker = docker_sdk()
        labels = {LABEL_MANAGED: "1", LABEL_KIND: KIND_HARNESS}
        self.api.create_volume(name, labels=labels)
        mount = docker.types.Mount(_HARNESS_SOURCE, name, type="volume")
        container = self.api.create_container(
            HARNESS_IMAGE,
            command=[f"{_HARNESS_SOURCE}/busybox", "true"],
            labels={**self.base_labels(), LABEL_KIND: KIND_CONTAINER},
            host_config=self.api.create_host_config(mounts=[mount], network_mode="none"),
        )["Id"]
        try:
            self.api.start(container)
            status = self.api.wait(container, timeout=60).get("StatusCode")
        except Exception:
            status = None
        finally:
            self.api.remove_container(container, force=True)
        if status != 0:
            self.api.remove_volume(name, force=True)
            raise DockerUnavailableError(f"could not fill the harness volume {name}")

    def _image_key(self, image: str) -> str:
        """What the per-image caches below are keyed by: the image's id, so a tag that this
        runtime builds, imports or tags again is read afresh (``image`` itself when the engine
        does not know it: the call that follows then fails as it would have)."""
        return self.image_id(image) or image

    def image_path_env(self, image: str) -> str:
        """The image's PATH (the verifier's commands are looked up on it)."""
        key = self._image_key(image)
        if key not in self._image_env:
            env = self.api.inspect_image(key)["Config"].get("Env") or []
            found = [e.split("=", 1)[1] for e in env if e.startswith("PATH=")]
            self._image_env[key] = found[0] if found else DEFAULT_PATH
        return self._image_env[key]

    def _reference(self, image: str) -> str:
        """A container created (never started) from ``image``: its files are the image's."""
        image = self._image_key(image)
        with self._lock:
            found = self._references.get(image)
        if found:
            return found
        created = self.api.create_container(
            image,
            command=["true"],
            entrypoint=[],
            labels={**self.base_labels(), LABEL_KIND: KIND_CONTAINER},
            host_config=self.api.create_host_config(network_mode="none"),
        )["Id"]
        with self._lock:
            if image in self._references:
                keep = self._references[image]
            else:
                self._references[image] = keep = created
        if keep != created:
            self.api.remove_container(created, force=True)
        return keep

    def image_path_kind(self, image: str, path: str) -> str | None:
        """'dir', 'file' (anything else: files, links) or None: what ``image`` has at
        ``path``."""
        key = (self._image_key(image), path)
        if key not in self._path_kinds:
            try:
                stream, stat = self.api.get_archive(self._reference(key[0]), path)
                stream.close()
            except docker_sdk().errors.NotFound:
                self._path_kinds[key] = None
            else:
                is_dir = bool(int(stat.get("mode", 0)) & (1 << 31))  # Go's os.ModeDir
                self._path_kinds[key] = "dir" if is_dir else "file"
        return self._path_kinds[key]

    def image_archive(self, image: str, path: str) -> bytes | None:
        """A tar of ``path`` as ``image`` has it (None when the image has nothing there)."""
        try:
            stream, _ = self.api.get_archive(self._reference(image), path)
        except docker_sdk().errors.NotFound:
            return None
        return b"".join(stream)

    def forget_image(self, ref: str) -> None:
        self._image_ids.pop(ref, None)

    def import_rootfs(self, tar_path: Path, tag: str, changes: Iterable[str] = ()) -> str:
        """``docker import`` a root filesystem tarball (labelled with its run and owner, so gc
        finds a stray one and leaves one that a live build is using alone)."""
        repository, _, image_tag = tag.rpartition(":")
        owner = " ".join(f"{k}={json.dumps(v)}" for k, v in self.base_labels().items())
        label = f"LABEL {owner} {LABEL_KIND}={KIND_ROOTFS}"
        self.api.import_image_from_file(
            str(tar_path), repository=repository, tag=image_tag, changes=[label, *changes]
        )
        self.forget_image(tag)
        found = self.image_id(tag)
        if found is None:
            raise ImageBuildError(f"docker import of {tag} produced no image")
        return found

    def remove_image(self, ref: str, *, force: bool = False) -> bool:
        self.forget_image(ref)
        try:
            self.api.remove_image(ref, force=force)
            return True
        except docker_sdk().errors.APIError:
            return False

    def tag_image(self, image: str, tag: str) -> None:
        repository, _, image_tag = tag.rpartition(":")
        self.api.tag(image, repository, image_tag)
        self.forget_image(tag)
