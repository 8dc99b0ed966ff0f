"""Which backend makes a leaf's candidates: its procedural family, or the LLM."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from factory.errors import FactoryError

if TYPE_CHECKING:  # light to import: the CLI lists BackendChoice in --help
    from factory.generate.pipeline import Backend
    from factory.generate.taxonomy import Leaf, Taxonomy


class BackendChoice(str, Enum):
    """``--backend``: which generator makes every leaf's candidates."""

    PROCEDURAL = "procedural"
    LLM = "llm"


@dataclass
class LlmOptions:
    """The LLM settings of a run (CLI flags, with FACTORY_LLM_* environment fallbacks)."""

    base_url: str | None
    model: str | None
    api_key: str
    concurrency: int = 4
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    cache_dir: Path | None = None
    max_output_tokens: int = 3000
    temperature: float = 0.7
    parse_repairs: int = 1
    """Times a reply that does not parse goes back to the model with the parse error."""


def backend_factory(
    taxonomy: Taxonomy, choice: BackendChoice | None, llm: LlmOptions
) -> Callable[[Leaf], Backend]:
    """A function leaf -> backend. The LLM client is made once, and only if a leaf needs it."""
    from factory.generate.procedural import ProceduralBackend
    from factory.generate.taxonomy import LLM_GENERATOR

    procedural = ProceduralBackend(taxonomy.suite)
    needs_llm = choice is BackendChoice.LLM or any(
        leaf.skill.generator == LLM_GENERATOR for leaf in taxonomy.leaves()
    )
    if choice is BackendChoice.PROCEDURAL:
        llm_leaves = [
            leaf.path for leaf in taxonomy.leaves() if leaf.skill.generator == LLM_GENERATOR
        ]
        if llm_leaves:
            raise FactoryError(
                f"--backend procedural, but leaves {', '.join(llm_leaves)} have generator 'llm'"
            )
    llm_backend = None
    if needs_llm:
        if not llm.base_url or not llm.model:
            raise FactoryError(
                "the LLM backend needs --llm-base-url and --llm-model (or FACTORY_LLM_BASE_URL "
                "and FACTORY_LLM_MODEL); any OpenAI-compatible endpoint works, e.g. `vllm serve`"
            )
        from factory.generate.llm_backend import LlmBackend
        from factory.llm import LlmClient, LlmSettings

        client = LlmClient(
            LlmSettings(
                base_url=llm.base_url,
                model=llm.model,
                api_key=llm.api_key,
                concurrency=llm.concurrency,
                max_tokens_budget=llm.max_tokens,
                max_cost_usd=llm.max_cost_usd,
                cache_dir=llm.cache_dir,
            )
        )
        llm_backend = LlmBackend(
            client,
            taxonomy.suite,
            temperature=llm.temperature,
            max_tokens=llm.max_output_tokens,
            parse_repairs=llm.parse_repairs,
        )

    def pick(leaf: Leaf) -> Backend:
        if llm_backend is not None and (
            choice is BackendChoice.LLM or leaf.skill.generator == LLM_GENERATOR
        ):
            return llm_backend
        return procedural

    return pick
