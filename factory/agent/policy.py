"""The policy of ``eval`` and ``calibrate`` as the command line names it, made into an episode
runner: a local model through the trainer, or a model behind an OpenAI-compatible endpoint."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from factory.agent.actions import ActionFormat
from factory.agent.runners import EndpointRunner, EpisodeRunner, PolicyConfig, harness_config
from factory.errors import FactoryError
from factory.trainer_plugin import load_trainer

if TYPE_CHECKING:
    from factory.agent.harness import HarnessConfig
    from factory.llm import LlmClient


@dataclass
class PolicyChoice:
    """The policy of ``eval`` and ``calibrate`` as the command line names it: a local model
    (through the trainer), or ``model`` behind an OpenAI-compatible endpoint at ``base_url``."""

    model: str | None = None
    """A checkpoint folder, .gguf or known local name (None: the settings'); with
    ``base_url``, the endpoint's model name (required)."""
    config: Path | None = None
    """The trainer's settings file (sampling, harness, split)."""
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    jobs: int = 2
    """Episodes whose containers are busy at once (an endpoint: requests in flight)."""
    batch_episodes: int = 16
    """A local model: episodes generated together."""
    max_tokens: int | None = None
    """Tokens per reply (default: the settings' max_new_tokens; 512 for an endpoint)."""
    action_format: ActionFormat | None = None
    """How the policy acts (default: native tool calls for an endpoint, the settings'
    ``action_format`` for a local model)."""

    def __post_init__(self) -> None:
        if self.base_url and not self.model:
            raise FactoryError("--base-url needs --model: the endpoint's model name")

    def settings(self) -> PolicyConfig:
        return load_trainer().load_config(
            self.config,
            model=self.model,
            max_new_tokens=None if self.base_url else self.max_tokens,
            action_format=self.action_format.value if self.action_format else None,
        )

    def runner(
        self, settings: PolicyConfig, *, cache_dir: Path, say: Callable[[str], None]
    ) -> EpisodeRunner:
        """The runner (an endpoint's replies are cached under ``cache_dir``)."""
        if self.base_url is None:
            return load_trainer().local_runner(
                settings, jobs=self.jobs, batch_episodes=self.batch_episodes, say=say
            )
        return EndpointRunner(
            self.client(cache_dir),
            self.harness(settings),
            temperature=settings.temperature,
            max_tokens=self.endpoint_max_tokens,
            jobs=self.jobs,
            seed=settings.seed,
        )

    def harness(self, settings: PolicyConfig) -> HarnessConfig:
        """The episode harness: the settings', in the chosen action format."""
        if self.action_format is not None:
            chosen = self.action_format
        elif self.base_url is not None:
            chosen = ActionFormat.TOOLS  # endpoints take tools= and answer with structured calls
        else:
            chosen = ActionFormat(settings.action_format)
        return harness_config(settings, chosen)

    @property
    def endpoint_max_tokens(self) -> int:
        return self.max_tokens or 512

    def client(self, cache_dir: Path) -> LlmClient:
        """The endpoint's client (``--base-url``); replies cached under ``cache_dir``."""
        from factory.llm import LlmClient, LlmSettings, api_key_from_env

        if self.base_url is None or self.model is None:
            raise FactoryError("--base-url needs --model: the endpoint's model name")
        return LlmClient(
            LlmSettings(
                base_url=self.base_url,
                model=self.model,
                api_key=api_key_from_env(self.api_key_env),
                concurrency=self.jobs,
                cache_dir=cache_dir,
            )
        )
