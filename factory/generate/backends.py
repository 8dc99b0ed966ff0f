"""Which backend makes a leaf's candidates: its procedural family, the LLM, or both (hybrid
leaves, ``params: {mode: scenario}``: the model writes the content, the family the task)."""

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
    from factory.llm import LlmClient


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

    def client(self) -> LlmClient:
        """The client of the endpoint these options name."""
        from factory.llm import LlmClient, LlmSettings

        return LlmClient(
            LlmSettings(
                base_url=self.base_url,
                model=self.model,
                api_key=self.api_key,
                concurrency=self.concurrency,
                max_tokens_budget=self.max_tokens,
                max_cost_usd=self.max_cost_usd,
                cache_dir=self.cache_dir,
            )
        )


def is_hybrid(leaf: Leaf) -> bool:
    """Whether the leaf asks for model-written content inside its procedural family."""
    from factory.generate.taxonomy import LLM_GENERATOR, SCENARIO_MODE

    return leaf.skill.generator != LLM_GENERATOR and leaf.skill.params.get("mode") == SCENARIO_MODE


def backend_factory(
    taxonomy: Taxonomy, choice: BackendChoice | None, llm: LlmOptions
) -> Callable[[Leaf], Backend]:
    """A function leaf -> backend. The LLM client is made once, and only if a leaf needs it.
    With ``--backend procedural`` a hybrid leaf is drafted from its family's own content (the
    baseline `bench/generate.py` compares hybrid suites with)."""
    from factory.generate.procedural import ProceduralBackend
    from factory.generate.taxonomy import LLM_GENERATOR

    procedural = ProceduralBackend(taxonomy.suite)
    needs_llm = choice is BackendChoice.LLM or any(
        leaf.skill.generator == LLM_GENERATOR
        or (is_hybrid(leaf) and choice is not BackendChoice.PROCEDURAL)
        for leaf in taxonomy.leaves()
    )
    if choice is BackendChoice.PROCEDURAL:
        llm_leaves = [
            leaf.path for leaf in taxonomy.leaves() if leaf.skill.generator == LLM_GENERATOR
        ]
        if llm_leaves:
            raise FactoryError(
                f"--backend procedural, but leaves {', '.join(llm_leaves)} have generator 'llm'"
            )
    llm_backend = scenario_backend = None
    if needs_llm:
        if not llm.base_url or not llm.model:
            raise FactoryError(
                "the LLM backend needs --llm-base-url and --llm-model (or FACTORY_LLM_BASE_URL "
                "and FACTORY_LLM_MODEL); any OpenAI-compatible endpoint works, e.g. `vllm serve`"
            )
        from factory.generate.llm_backend import LlmBackend
        from factory.generate.scenario import ScenarioBackend

        client = llm.client()
        llm_backend = LlmBackend(
            client,
            taxonomy.suite,
            temperature=llm.temperature,
            max_tokens=llm.max_output_tokens,
            parse_repairs=llm.parse_repairs,
        )
        scenario_backend = ScenarioBackend(
            client,
            taxonomy.suite,
            temperature=llm.temperature,
            parse_repairs=llm.parse_repairs,
        )

    def pick(leaf: Leaf) -> Backend:
        if scenario_backend is not None and is_hybrid(leaf):
            return scenario_backend
        if llm_backend is not None and (
            choice is BackendChoice.LLM or leaf.skill.generator == LLM_GENERATOR
        ):
            return llm_backend
        return procedural

    return pick
