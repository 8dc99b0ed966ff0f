"""`factory images prune --max-size SIZE`: evict least-recently-used task images.

Only images labelled ``factory.kind=task-image`` are candidates: base images, rootfs imports
and everything that is not factory's are never touched, and neither is an image a running
container uses. "Last used" comes from the usage log :mod:`factory.images.usage` writes each
time a run asks for an image; an image the log does not know counts as used when it was built.

Size is counted per layer, as Docker stores it: the task images' footprint is the size of the
layers they use that no other (non-task) image uses, each shared layer counted once (task
images of one family built on one base share the base's layers; an older base that was
rebuilt since lives on only in the task images built on it). Evicting an image frees the
layers no remaining image uses. Layer sizes come from the image history (its non-empty
entries align one to one with the layers; where they do not, the image's size beyond the
layers known from other images is put on its last layer).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import Counter
from dataclasses import dataclass, field

from factory.errors import FactoryError
from factory.images import usage
from factory.runtime import KIND_TASK_IMAGE, LABEL_KIND, LABEL_RUN, DockerRuntime

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """'20G', '512M', '1.5GiB', '300k', '1048576' -> bytes (binary units: G = 2**30)."""
    match = _SIZE_RE.match(text)
    if not match:
        raise FactoryError(f"--max-size: '{text}' is not a size such as 20G, 512M or 0")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def format_size(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"  # pragma: no cover


@dataclass
class ImageEntry:
    image_id: str
    tags: list[str]
    layers: tuple[str, ...]
    """Keys of the image's layers (chain ids: a layer and everything below it)."""
    last_used: float
    """Epoch seconds: the usage log's time, else the build time."""
    in_use: bool = False
    """A running container uses it: never evicted."""
    logged: bool = True
    """False when the usage log did not know the image (last_used is its build time)."""
    freed: int = 0
    """Set by the plan: bytes its eviction frees."""

    @property
    def name(self) -> str:
        return self.tags[0] if self.tags else self.image_id[:19]


@dataclass
class PrunePlan:
    entries: list[ImageEntry]
    max_size: int
    evict: list[ImageEntry] = field(default_factory=list)
    total_before: int = 0
    """Bytes of the layers only task images use."""
    total_after: int = 0
    """Projected, if every eviction succeeds."""


def footprint(
    entries: list[ImageEntry], sizes: dict[str, int], protected: set[str] = frozenset()
) -> int:
    """Bytes of the layers the ``entries`` use, each once, leaving out ``protected`` layers
    (those of images that are not task images)."""
    used = {layer for e in entries for layer in e.layers} - set(protected)
    return sum(sizes.get(layer, 0) for layer in used)


def plan_evictions(
    entries: list[ImageEntry],
    sizes: dict[str, int],
    max_size: int,
    protected: set[str] = frozenset(),
) -> PrunePlan:
    """Least recently used first, skipping images in use, until the footprint is at most
    ``max_size``. An eviction frees the layers no remaining image (nor a protected one) uses."""
    refs = Counter(layer for e in entries for layer in set(e.layers))
    total = footprint(entries, sizes, protected)
    plan = PrunePlan(entries=entries, max_size=max_size, total_before=total)
    for entry in sorted(entries, key=lambda e: (e.last_used, e.image_id)):
        if total <= max_size:
            break
        if entry.in_use:
            continue
        freed = 0
        for layer in set(entry.layers):
            refs[layer] -= 1
            if refs[layer] == 0 and layer not in protected:
                freed += sizes.get(layer, 0)
        entry.freed = freed
        plan.evict.append(entry)
        total -= freed
    plan.total_after = total
    return plan


def chain_keys(diff_ids: list[str]) -> tuple[str, ...]:
    """One key per layer that also names everything below it (Docker's chain ids, in spirit)."""
    keys, current = [], ""
    for diff in diff_ids:
        current = hashlib.sha256(f"{current}:{diff}".encode()).hexdigest()[:32]
        keys.append(current)
    return tuple(keys)


def _layer_sizes(api, image_id: str, keys: tuple[str, ...], size: int, sizes: dict[str, int]):
    """Add the sizes of ``keys`` to ``sizes`` from the image's history."""
    try:
        history = api.history(image_id)
    except Exception:  # noqa: BLE001 - removed meanwhile
        history = []
    # Docker lists history newest first; the non-empty entries are the layers.
    steps = [int(h.get("Size") or 0) for h in reversed(history) if int(h.get("Size") or 0) > 0]
    if len(steps) == len(keys):
        for key, step in zip(keys, steps, strict=True):
            sizes.setdefault(key, step)
        return
    known = sum(sizes.get(k, 0) for k in keys[:-1])
    if keys:
        sizes.setdefault(keys[-1], max(0, size - known))


def list_task_images(
    runtime: DockerRuntime, *, run_id: str | None = None
) -> tuple[list[ImageEntry], dict[str, int], set[str]]:
    """(task images, layer sizes, protected layers). With ``run_id``: only that run's images
    are candidates, every other task image keeps its layers (they count as protected)."""
    api = runtime.api
    every = api.images(all=False)
    task_label = f"{LABEL_KIND}={KIND_TASK_IMAGE}"
    ours = {
        i["Id"]
        for i in api.images(
            filters={"label": [task_label] + ([f"{LABEL_RUN}={run_id}"] if run_id else [])}
        )
    }
    running = {c.get("ImageID") for c in api.containers(all=False)}
    used = usage.last_used()
    sizes: dict[str, int] = {}
    protected: set[str] = set()
    entries = []
    for item in every:
        try:
            info = api.inspect_image(item["Id"])
        except Exception:  # noqa: BLE001 - removed meanwhile
            continue
        keys = chain_keys((info.get("RootFS") or {}).get("Layers") or [])
        _layer_sizes(api, item["Id"], keys, int(info.get("Size") or 0), sizes)
        if item["Id"] not in ours:
            protected.update(keys)
            continue
        tags = [t for t in item.get("RepoTags") or [] if t != "<none>:<none>"]
        times = [used[k] for k in [*tags, item["Id"]] if k in used]
        entries.append(
            ImageEntry(
                image_id=item["Id"],
                tags=tags,
                layers=keys,
                last_used=max(times) if times else float(item.get("Created") or 0),
                in_use=item["Id"] in running,
                logged=bool(times),
            )
        )
    return entries, sizes, protected


@dataclass
class PruneReport:
    plan: PrunePlan
    removed: list[ImageEntry] = field(default_factory=list)
    failed: list[tuple[ImageEntry, str]] = field(default_factory=list)
    """Images Docker refused to remove (a stopped container still uses it), with why."""
    total_after: int = 0


def prune_task_images(
    runtime: DockerRuntime, max_size: int, *, run_id: str | None = None, dry_run: bool = False
) -> PruneReport:
    """Evict least-recently-used task images until their footprint is <= ``max_size``."""
    entries, sizes, protected = list_task_images(runtime, run_id=run_id)
    plan = plan_evictions(entries, sizes, max_size, protected)
    report = PruneReport(plan=plan, total_after=plan.total_before)
    if dry_run:
        report.total_after = plan.total_after
        return report
    for entry in plan.evict:
        # A container may have started from it since the listing.
        if any(c.get("ImageID") == entry.image_id for c in runtime.api.containers(all=False)):
            report.failed.append((entry, "in use by a running container"))
            continue
        error = _remove(runtime, entry)
        if error:
            report.failed.append((entry, error))
            continue
        report.removed.append(entry)
    if report.removed:
        gone = {e.image_id for e in report.removed}
        remaining = [e for e in entries if e.image_id not in gone]
        report.total_after = footprint(remaining, sizes, protected)
        usage.forget([t for e in report.removed for t in e.tags])
    return report


def _remove(runtime: DockerRuntime, entry: ImageEntry) -> str | None:
    """Remove every tag of the image (no force: an image a container uses stays)."""
    try:
        for tag in entry.tags or [entry.image_id]:
            runtime.forget_image(tag)
            runtime.api.remove_image(tag, force=False, noprune=False)
    except Exception as exc:  # noqa: BLE001 - docker.errors.APIError and friends
        return str(getattr(exc, "explanation", None) or exc).splitlines()[0][:200]
    return None


def age(seconds_since_epoch: float) -> str:
    delta = max(0.0, time.time() - seconds_since_epoch)
    for unit, span in (("d", 86400), ("h", 3600), ("min", 60)):
        if delta >= span:
            return f"{delta / span:.0f} {unit} ago"
    return f"{delta:.0f} s ago"
