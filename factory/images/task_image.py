"""The image a task runs in: its Dockerfile with base images mapped through the alias table,
built once per content hash and reused (unchanged environment -> no rebuild, no new image)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from factory.errors import (
    BaseImageMissingError,
    BuildLimitError,
    ImageBuildError,
    UnavailableOfflineError,
)
from factory.images.aliases import AliasTable, rewrite_dockerfile
from factory.images.build_log import missing_packages, recall_unreachable, remember_unreachable
from factory.images.builder import build_recipe
from factory.images.dockerfile_compat import make_legacy_compatible
from factory.images.dockerfile_errors import explain_parse_error
from factory.images.npm_downloads import provide_npm_downloads
from factory.images.offline_needs import test_time_downloads
from factory.images.recipes import ImageRecipe, load_recipes
from factory.images.toolchains import (
    provide_on_another_release,
    provide_toolchains,
    stand_in_release,
)
from factory.images.usage import record_use
from factory.inputs import read_text
from factory.runtime import (
    DEFAULT_PIDS_LIMIT,
    KIND_TASK_IMAGE,
    LABEL_ENV_HASH,
    LABEL_KIND,
    TASK_IMAGE_REPO,
    BuildLimits,
    BuildNetwork,
    DockerRuntime,
)
from factory.tasks.hashing import hash_tree
from factory.tasks.model import Task

_MANAGED_LABEL_LINE = "LABEL factory.managed=1"


@dataclass
class TaskImage:
    ref: str
    """Image reference to start containers from."""
    built: bool
    """True when this call built it; False when it was cached (or prebuilt)."""
    seconds: float
    env_hash: str
    notes: list[str] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)
    """Hosts the build tried and failed to reach (no internet here) although it succeeded,
    e.g. ``curl ... | sh`` whose pipe hid the failure: the image may lack what they serve."""
    services: dict[str, str] = field(default_factory=dict)
    """The image of each sidecar (service name -> reference); empty for one container."""
    base: str | None = None
    """The local image the final stage of its Dockerfile starts from (what the task's build
    added to: :attr:`~factory.images.aliases.DockerfileRewrite.final_base`); None for a prebuilt ``docker_image``
    or a final stage from ``scratch``."""


_SERVICE_IMAGES: dict[tuple[str, str], dict[str, str]] = {}
_SERVICES_LOCK = threading.Lock()


def service_images(task: Task, image: str) -> dict[str, str]:
    """The sidecar images :meth:`TaskImageBuilder.ensure` made for ``task`` (whose own image is
    ``image``) in this process. Raises :class:`ImageBuildError` when it made none: every
    caller gets ``image`` from ``ensure`` first."""
    if task.compose is None or not task.compose.sidecars:
        return {}
    with _SERVICES_LOCK:
        found = _SERVICE_IMAGES.get((str(task.root.resolve()), image))
    if found is None:
        raise ImageBuildError(
            f"the sidecar images of {task.root} were not built in this process "
            "(TaskImageBuilder.ensure builds them with the task's own image)"
        )
    return dict(found)


def _label_each_stage(dockerfile: str) -> str:
    """Add ``LABEL factory.managed=1`` after every FROM, so that intermediate images and
    containers of an interrupted build can be found (and removed) by `factory gc`."""
    out = []
    for line in dockerfile.splitlines():
        out.append(line)
        if line.lstrip().upper().startswith("FROM "):
            out.append(_MANAGED_LABEL_LINE)
    return "\n".join(out) + "\n"


class TaskImageBuilder:
    """Builds task images, one build per environment hash even with many threads."""

    def __init__(
        self,
        runtime: DockerRuntime,
        aliases: AliasTable | None = None,
        *,
        build_network: BuildNetwork | None = None,
    ) -> None:
        self.runtime = runtime
        self.aliases = aliases or AliasTable.load()
        self.build_network = BuildNetwork(build_network or runtime.build_network)
        """``filtered`` (factory's bridge: registries yes, host and private ranges no) or
        ``none``; default: the runtime's."""
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._recipes: dict[str, ImageRecipe] | None = None

    def _base_available(self, ref: str) -> bool:
        """Whether the engine has ``ref``; a missing recipe image that starts from a built
        local image (the language toolchains: factory/node:trixie, ...) is built first."""
        if self.runtime.image_exists(ref):
            return True
        if self._recipes is None:
            self._recipes = {r.name: r for r in load_recipes() if r.from_image}
        recipe = self._recipes.get(ref)
        if recipe is None or not self.runtime.image_exists(recipe.from_image or ""):
            return False
        with self._lock_for(f"recipe:{ref}"):
            if not self.runtime.image_exists(ref):
                build_recipe(self.runtime, recipe)
        return True

    def _lock_for(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def ensure(self, task: Task, *, log_path: Path | None = None) -> TaskImage:
        """Return the image for ``task``, building it if needed; a task with sidecars (its
        compose file's other services) gets theirs too (each built from its Dockerfile under
        ``environment/``, with its log beside ``log_path`` as ``build-<service>.log``, or its
        ``image`` through the alias table), in :attr:`TaskImage.services` and for
        :func:`service_images`.

        Raises BaseImageMissingError, UnavailableOfflineError (what the Dockerfile installs
        from the internet, or what the tests download, has no offline source here),
        ImageBuildError (BuildLimitError when the build hit its
        memory or process limit; the reason names the Dockerfile line of a syntax error),
        ExecTimeoutError (build timeout) or CancelledError.

        The image's notes say which of the task's limits this engine cannot enforce.
        """
        image = self._ensure_main(task, log_path=log_path)
        compose = task.compose
        if compose is None or not compose.sidecars:
            return image
        started = time.monotonic()
        for sidecar in compose.sidecars:
            if sidecar.build_context is None:
                assert sidecar.image is not None
                ref = self.aliases.resolve(sidecar.image, self._base_available)
                if ref is None:
                    raise BaseImageMissingError(sidecar.image, compose.path)
                if ref != sidecar.image:
                    image.notes.append(f"sidecar '{sidecar.name}': image {sidecar.image} -> {ref}")
                image.services[sidecar.name] = ref
                continue
            context = task.paths.environment_dir / sidecar.build_context
            built = self._build_dockerfile(
                task,
                context,
                context / sidecar.dockerfile,
                log_path=log_path.with_name(f"build-{sidecar.name}.log") if log_path else None,
                service=sidecar.name,
            )
            image.services[sidecar.name] = built.ref
            sidecar_log = log_path.with_name(f"build-{sidecar.name}.log") if log_path else None
            if sidecar_log is not None and not built.built and not sidecar_log.exists():
                sidecar_log.write_text(f"# cached image {built.ref} (sidecar unchanged)\n")
            image.notes += built.notes
            image.unreachable += [h for h in built.unreachable if h not in image.unreachable]
            image.built = image.built or built.built
        image.seconds += time.monotonic() - started
        with _SERVICES_LOCK:
            _SERVICE_IMAGES[(str(task.root.resolve()), image.ref)] = dict(image.services)
        return image

    def _ensure_main(self, task: Task, *, log_path: Path | None = None) -> TaskImage:
        """The image of the task's own container (see :meth:`ensure`)."""
        started = time.monotonic()
        env = task.config.environment
        notes: list[str] = []
        if env.docker_image:
            resolved = self.aliases.resolve(env.docker_image, self._base_available)
            if resolved is not None:
                if resolved != env.docker_image:
                    suffix = self.aliases.note_suffix(env.docker_image)
                    notes.append(f"docker_image {env.docker_image} -> {resolved} (alias{suffix})")
                notes += self._run_notes(task, resolved)
                return TaskImage(resolved, False, time.monotonic() - started, resolved, notes)
            if not task.paths.dockerfile.is_file():
                raise BaseImageMissingError(env.docker_image, task.paths.config)
            notes.append(
                f"docker_image {env.docker_image} cannot be pulled here; built "
                "environment/Dockerfile instead"
            )
        image = self._build_dockerfile(
            task, task.paths.environment_dir, task.paths.dockerfile, log_path=log_path
        )
        image.notes = notes + image.notes + self._run_notes(task, image.ref)
        image.seconds = time.monotonic() - started
        return image

    def _build_dockerfile(
        self,
        task: Task,
        context_dir: Path,
        dockerfile_path: Path,
        *,
        log_path: Path | None,
        service: str | None = None,
    ) -> TaskImage:
        """Build ``dockerfile_path`` with ``context_dir`` as context (base images through the
        alias table, toolchains provided offline), once per content hash."""
        started = time.monotonic()
        env = task.config.environment
        notes: list[str] = []
        original = read_text(dockerfile_path)
        compat = make_legacy_compatible(original)
        notes += compat.notes
        rewrite = rewrite_dockerfile(
            compat.text, self.aliases, self._base_available, dockerfile=dockerfile_path
        )
        toolchains = provide_toolchains(rewrite.text)
        scripts = _scripts_text(task) if service is None else ""
        later: list[str] = []  # the tests' downloads must be here too
        if rewrite.substitutions and service is None:
            later = test_time_downloads(task.paths.environment_dir, scripts)
        # What the stand-in's release lacks, its sibling on the other release may have (jammy's
        # openjdk-21-jdk: trixie, not bookworm); the sibling is built only when that is all.
        elsewhere = provide_on_another_release(rewrite.text, toolchains, lambda _image: True)
        if (
            elsewhere is not None
            and not later
            and not all(self._base_available(image) for image in elsewhere[1].values())
        ):
            elsewhere = None
        if elsewhere is not None:
            toolchains, swaps = elsewhere
            rewrite.base_images = [swaps.get(b, b) for b in rewrite.base_images]
            rewrite.final_base = swaps.get(rewrite.final_base, rewrite.final_base)
            rewrite.substitutions = [(o, swaps.get(n, n)) for o, n in rewrite.substitutions]
            for old, new in swaps.items():
                rewrite.notes = [n.replace(f"-> {old} ", f"-> {new} ") for n in rewrite.notes]
        rewrite.notes += toolchains.notes
        npm = provide_npm_downloads(toolchains.text, task.paths.environment_dir, scripts)
        rewrite.notes += npm.notes
        missing = [*toolchains.missing, *npm.missing, *later]
        if missing:
            raise UnavailableOfflineError(missing, dockerfile_path)
        dockerfile = _label_each_stage(npm.text)
        base_ids = [self.runtime.image_id(ref) or ref for ref in rewrite.base_images]
        extra = [dockerfile, *base_ids] + ([f"service:{service}"] if service else [])
        env_hash = hash_tree(context_dir, extra=extra)
        tag = f"{TASK_IMAGE_REPO}:{env_hash[:20]}"
        if service:
            notes = [f"sidecar '{service}': {note}" for note in notes + rewrite.notes]
            rewrite.notes = []
        with self._lock_for(env_hash):
            if self.runtime.image_exists(tag):
                record_use(tag, self.runtime.image_id(tag))  # for `factory images prune`
                return TaskImage(
                    tag,
                    False,
                    time.monotonic() - started,
                    env_hash,
                    notes + rewrite.notes,
                    recall_unreachable(env_hash),
                    base=rewrite.final_base,
                )
            labels = {
                **self.runtime.base_labels(task.id),
                LABEL_KIND: KIND_TASK_IMAGE,
                LABEL_ENV_HASH: env_hash,
            }
            labels.pop("factory.pid", None)
            labels.pop("factory.host", None)
            limits = BuildLimits(
                memory_mb=env.effective_memory_mb,
                cpus=env.effective_cpus,
                pids=env.pids_limit or DEFAULT_PIDS_LIMIT,
                storage_mb=env.effective_storage_mb,
            )
            try:
                built = self.runtime.build_image(
                    context_dir,
                    dockerfile,
                    tag=tag,
                    labels=labels,
                    timeout_sec=env.build_timeout_sec,
                    log_path=log_path,
                    limits=limits,
                    network=self.build_network,
                )
            except BuildLimitError:
                raise
            except ImageBuildError as exc:
                _raise_if_packages_missing(exc, rewrite.base_images, dockerfile_path)
                where = dockerfile_path.relative_to(task.root).as_posix()
                explained = explain_parse_error(str(exc), dockerfile, original, where)
                if explained is None:
                    raise
                raise ImageBuildError(explained, exc.log_tail) from None
            record_use(tag, self.runtime.image_id(tag))
            unreachable = remember_unreachable(env_hash, log_path)
        notes += rewrite.notes + built.notes
        return TaskImage(
            tag,
            True,
            time.monotonic() - started,
            env_hash,
            notes,
            unreachable,
            base=rewrite.final_base,
        )

    def _run_notes(self, task: Task, image: str) -> list[str]:
        """What of the task's container settings this engine cannot enforce."""
        env = task.config.environment
        notes = []
        if env.network_enabled and self.runtime.network_note():
            notes.append(str(self.runtime.network_note()))
        storage = self.runtime.storage_note(image, env.effective_storage_mb)
        if storage:
            notes.append(storage)
        return notes


def _scripts_text(task: Task) -> str:
    """The text of the task's test and solution scripts (what runs the build tools)."""
    texts = []
    for folder in (task.paths.tests_dir, task.paths.solution_dir):
        if folder.is_dir():
            for path in sorted(folder.glob("*.sh"))[:50]:
                texts.append(read_text(path))
    return "\n".join(texts)


def _raise_if_packages_missing(exc: ImageBuildError, bases: list[str], dockerfile: Path) -> None:
    """A stand-in build that failed because apt has no such package: name the packages."""
    releases = [r for r in (stand_in_release(b) for b in bases) if r]
    names = missing_packages(exc.log_tail)
    if releases and names:
        where = f"Debian {releases[-1]} (the stand-in's release)"
        raise UnavailableOfflineError(
            [f"apt package {name} (not in {where})" for name in names], dockerfile
        ) from exc
