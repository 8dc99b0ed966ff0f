"""The image alias table: base-image names that cannot be pulled here -> local images.

The table is data (``environments/images/aliases.toml``); users extend it with their own TOML
files listed in ``FACTORY_IMAGE_ALIASES`` (``os.pathsep``-separated) or in
``~/.config/factory/aliases.toml``. User rules come first, so they override the bundled ones.

``rewrite_dockerfile`` rewrites the ``FROM`` lines (and ``COPY --from=<image>``) of a Dockerfile so
that every base image is one the local engine has.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from factory.datafiles import load_toml_model
from factory.errors import BaseImageMissingError
from factory.resources import environments_dir

ALIAS_ENV_VAR = "FACTORY_IMAGE_ALIASES"


class AliasRule(BaseModel):
    """One ``[[alias]]`` entry."""

    model_config = ConfigDict(extra="forbid")

    pattern: str
    """Shell-style glob over the normalised reference ``repo:tag`` (``docker.io/library/`` is
    dropped; a reference without a tag means ``:latest``)."""
    targets: list[str]
    """Local images to use, best first; the first one the engine has (or, for a recipe built
    from another local image, can build on first use) wins. Empty: explicitly no stand-in
    (e.g. Alpine variants), so a broader rule below does not catch the reference."""
    note: str | None = None
    """Why this mapping is reasonable (shown in import notes)."""


class AliasFile(BaseModel):
    """A whole alias TOML file."""

    model_config = ConfigDict(extra="forbid")

    alias: list[AliasRule] = Field(default_factory=list)


def normalize_reference(ref: str) -> str:
    """'docker.io/library/python:3.12@sha256:..' -> 'python:3.12'; 'ubuntu' -> 'ubuntu:latest'."""
    ref = ref.strip().split("@", 1)[0]
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if ref.startswith(prefix):
            ref = ref[len(prefix) :]
    if ref.startswith("library/"):
        ref = ref[len("library/") :]
    last = ref.rsplit("/", 1)[-1]
    if ":" not in last:
        ref += ":latest"
    return ref


@dataclass
class AliasTable:
    """Ordered alias rules; ``lookup`` returns the targets of the first matching rule."""

    rules: list[AliasRule] = field(default_factory=list)
    sources: list[Path] = field(default_factory=list)

    @classmethod
    def load(cls, extra_files: Sequence[Path] = ()) -> AliasTable:
        files: list[Path] = list(extra_files)
        env = os.environ.get(ALIAS_ENV_VAR, "")
        files += [Path(p) for p in env.split(os.pathsep) if p]
        user_file = Path.home() / ".config" / "factory" / "aliases.toml"
        if user_file.is_file():
            files.append(user_file)
        files.append(environments_dir() / "images" / "aliases.toml")
        table = cls()
        for path in files:
            table.rules.extend(load_alias_file(path))
            table.sources.append(path)
        return table

    def lookup(self, ref: str) -> AliasRule | None:
        normalized = normalize_reference(ref)
        for rule in self.rules:
            if fnmatch.fnmatchcase(normalized, rule.pattern) or fnmatch.fnmatchcase(
                normalized, normalize_reference(rule.pattern)
            ):
                return rule
        return None

    def note_suffix(self, ref: str) -> str:
        """``': <note>'`` of the rule that maps ``ref`` (how the stand-in differs), or ''."""
        rule = self.lookup(ref)
        return f": {rule.note}" if rule is not None and rule.note else ""

    def resolve(self, ref: str, exists: Callable[[str], bool]) -> str | None:
        """The local image to use for ``ref``, or None when nothing local fits."""
        if exists(ref):
            return ref
        rule = self.lookup(ref)
        if rule is None:
            return None
        return next((target for target in rule.targets if exists(target)), None)


def load_alias_file(path: Path) -> list[AliasRule]:
    return load_toml_model(path, AliasFile, "alias file").alias


# --- Dockerfile rewriting ---------------------------------------------------------------

_FROM_RE = re.compile(
    r"^(?P<indent>\s*)FROM\s+(?P<flags>(?:--\S+\s+)*)(?P<image>\S+)(?P<rest>(?:\s+AS\s+\S+)?\s*)$",
    re.IGNORECASE,
)
_COPY_FROM_RE = re.compile(r"(?P<pre>^\s*COPY\s+(?:--\S+\s+)*?)--from=(?P<src>\S+)", re.IGNORECASE)
_ARG_RE = re.compile(r"^\s*ARG\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=(?P<value>\S*))?\s*$", re.I)
_VAR_RE = re.compile(r"\$\{?(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}?")


@dataclass
class DockerfileRewrite:
    """Result of :func:`rewrite_dockerfile`."""

    text: str
    substitutions: list[tuple[str, str]] = field(default_factory=list)
    """(original image, local image) pairs, in order of appearance."""
    base_images: list[str] = field(default_factory=list)
    """Every external image the Dockerfile now starts from."""
    final_base: str | None = None
    """The local image its final stage builds on, through stage names (``FROM builder``); None
    for ``scratch`` or a Dockerfile without ``FROM``."""
    notes: list[str] = field(default_factory=list)


def rewrite_dockerfile(
    text: str,
    table: AliasTable,
    exists: Callable[[str], bool],
    *,
    dockerfile: Path | str = "Dockerfile",
) -> DockerfileRewrite:
    """Point every ``FROM`` at a local image; drop ``--platform`` flags.

    Raises :class:`BaseImageMissingError` naming the first image nothing local can stand in for.
    """
    result = DockerfileRewrite(text="")
    stages: dict[str, str | None] = {}  # stage name (lower case, as Docker matches) -> its base
    args: dict[str, str] = {}
    seen_from = False
    out_lines: list[str] = []

    def expand(value: str) -> str:
        return _VAR_RE.sub(lambda m: args.get(m.group("name"), m.group("default") or ""), value)

    def local_for(image: str) -> str:
        expanded = expand(image)
        if expanded.lower() == "scratch" or expanded.lower() in stages:
            return image
        resolved = table.resolve(expanded, exists)
        if resolved is None:
            raise BaseImageMissingError(expanded, dockerfile)
        if resolved != expanded:
            result.substitutions.append((expanded, resolved))
        if resolved not in result.base_images:
            result.base_images.append(resolved)
        return resolved

    for line in text.splitlines():
        if not seen_from and (arg := _ARG_RE.match(line)):
            args[arg.group("name")] = arg.group("value") or ""
        match = _FROM_RE.match(line)
        if match:
            seen_from = True
            flags = match.group("flags").split()
            kept = [f for f in flags if not f.lower().startswith("--platform")]
            if len(kept) != len(flags):
                result.notes.append(f"dropped '{' '.join(set(flags) - set(kept))}' from FROM")
            image = local_for(match.group("image"))
            named = expand(match.group("image")).lower()
            result.final_base = None if named == "scratch" else stages.get(named, image)
            rest = match.group("rest")
            stage = re.search(r"\s+AS\s+(\S+)", rest, re.IGNORECASE)
            if stage:
                stages[stage.group(1).lower()] = result.final_base
            flag_text = " ".join(kept) + " " if kept else ""
            line = f"{match.group('indent')}FROM {flag_text}{image}{rest}"
        else:
            copy = _COPY_FROM_RE.match(line)
            if copy and not copy.group("src").isdigit() and copy.group("src").lower() not in stages:
                image = local_for(copy.group("src"))
                line = line[: copy.start("src")] + image + line[copy.end("src") :]
        out_lines.append(line)
    result.text = "\n".join(out_lines) + ("\n" if text.endswith("\n") else "")
    for original, local in result.substitutions:
        result.notes.append(
            f"base image {original} -> {local} (alias{table.note_suffix(original)})"
        )
    return result
