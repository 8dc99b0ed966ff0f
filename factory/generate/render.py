"""Family draft + templates -> TaskSpec."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from factory.families.base import Draft, Family
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import Difficulty
from factory.tasks.config import (
    AgentConfig,
    EnvironmentConfig,
    FactoryProvenance,
    NetworkMode,
    TaskConfig,
    TaskSection,
    VerifierCollectConfig,
    VerifierConfig,
    VerifierEnvironmentMode,
    unique,
)
from factory.tasks.new_config import new_task_config
from factory.templating import folder_environment

MUTATIONS_DIR = "mutations/"
CHEATS_DIR = "cheats/"


@dataclass(frozen=True)
class Origin:
    """Where a candidate comes from (becomes [metadata.factory])."""

    suite: str
    taxonomy_path: str
    category: str
    seed: int
    generator: str
    prompt_version: str | None = None
    model: str | None = None
    persona: str | None = None
    scenario: str | None = None
    mode: str | None = None
    """LLM generation mode, recorded for hybrid (``scenario``) candidates."""
    content: dict[str, Any] | None = None
    """Hybrid mode: the content the model wrote for the family's slots."""


def _framing(origin: Origin) -> str:
    parts = []
    if origin.scenario:
        parts.append(f"Context: {origin.scenario}.")
    if origin.persona:
        parts.append(f"This request comes from {origin.persona}.")
    return (" ".join(parts) + "\n\n") if parts else ""


def render_family(
    family: Family, draft: Draft, *, task_id: str, difficulty: Difficulty, origin: Origin
) -> TaskSpec:
    """Render a family's templates with the draft's context into a TaskSpec."""
    root = family.templates
    env = folder_environment(root)
    if not root.is_dir():
        raise FileNotFoundError(f"family {family.name}: no templates at {root}")
    context = {**draft.context, "difficulty": difficulty.value, "task_id": task_id}
    files: dict[str, bytes] = {}
    mutations: dict[str, str] = {}
    cheats: dict[str, str] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel.endswith(".j2"):
            content = env.get_template(rel).render(**context).encode()
            rel = rel[: -len(".j2")]
        else:
            content = path.read_bytes()
        if rel.startswith(MUTATIONS_DIR):
            mutations[rel[len(MUTATIONS_DIR) :].rsplit(".", 1)[0]] = content.decode()
        elif rel.startswith(CHEATS_DIR):
            cheats[rel[len(CHEATS_DIR) :].rsplit(".", 1)[0]] = content.decode()
        else:
            files[rel] = content
    for rel, content in draft.files.items():
        files[rel] = content.encode() if isinstance(content, str) else content
    mutations.update(draft.mutations)
    cheats.update(draft.cheats)
    files["instruction.md"] = _framing(origin).encode() + files["instruction.md"]
    config = new_task_config(
        provenance(origin).model_copy(update={"faults": list(draft.faults)}),
        task=TaskSection(
            name=f"{origin.suite}/{task_id}",
            description=family.title,
            keywords=unique([family.category, *draft.tags]),
        ),
        metadata={
            "difficulty": difficulty.value,
            "category": family.category,
            "tags": unique([family.name, *draft.tags]),
        },
        verifier=VerifierConfig(timeout_sec=draft.verifier_timeout_sec),
        agent=AgentConfig(timeout_sec=draft.agent_timeout_sec, user=draft.agent_user),
        environment=EnvironmentConfig(
            network_mode=NetworkMode.PUBLIC if draft.allow_internet else NetworkMode.NO_NETWORK,
            cpus=1,
            memory_mb=draft.memory_mb,
            **({"healthcheck": draft.healthcheck} if draft.healthcheck else {}),
            **({"mcp_servers": draft.mcp_servers} if draft.mcp_servers else {}),
            **({"env": draft.env} if draft.env else {}),
        ),
    )
    if draft.separate_verifier:
        _separate_verifier(config, draft)
    return TaskSpec(
        id=task_id,
        files=files,
        config=config,
        mutations=mutations,
        cheats=cheats,
        secrets=tuple(s for s in draft.secrets if s),
        outputs=tuple(draft.outputs),
        forbidden_strings=tuple(draft.forbidden_strings),
        faults=tuple(draft.faults),
        traps=tuple(draft.traps),
    )


def kept_hook(paths: list[str]) -> str:
    """A collect hook: each of ``paths`` that is missing or a link becomes an empty file, so
    the separate verifier sees the deletion (an absent artifact would leave the image's copy)."""
    quoted = " ".join(shlex.quote(p) for p in paths)
    return (
        f"for p in {quoted}; do "
        'if [ -L "$p" ] || [ ! -e "$p" ]; then rm -f "$p"; mkdir -p "${p%/*}" && : > "$p"; fi; '
        "done"
    )


def _separate_verifier(config: TaskConfig, draft: Draft) -> None:
    """Harbor's separate verifier for a family's task (see :attr:`Draft.separate_verifier`)."""
    paths = unique(p.rstrip("/") or "/" for p in [*draft.outputs, *draft.kept, *draft.artifacts])
    # A path inside another entry travels with it; listed too, it would collide in Harbor,
    # which keeps the first claim and skips the folder listed after a file inside it.
    paths = [p for p in paths if not any(p.startswith(q.rstrip("/") + "/") for q in paths)]
    hooks = ([kept_hook(draft.kept)] if draft.kept else []) + list(draft.collect)
    config.artifacts = paths
    config.verifier = VerifierConfig(
        timeout_sec=draft.verifier_timeout_sec,
        environment_mode=VerifierEnvironmentMode.SEPARATE,
        collect=[
            c
            if isinstance(c, VerifierCollectConfig)
            else VerifierCollectConfig(command=c, user=draft.collect_user)
            for c in hooks
        ],
    )


def provenance(origin: Origin) -> FactoryProvenance:
    return FactoryProvenance(
        source=f"generator:{origin.generator}",
        taxonomy_path=origin.taxonomy_path,
        generator=origin.generator,
        seed=origin.seed,
        prompt_version=origin.prompt_version,
        model=origin.model,
        mode=origin.mode,
        slots=list(origin.content or {}),
        content=origin.content,
    )
