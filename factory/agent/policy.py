"""The policy of ``eval`` and ``calibrate`` as the command line names it, made into an episode
runner: a local model through the trainer, or a model behind an OpenAI-compatible endpoint."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from factory.agent.actions import ActionFormat
from factory.agent.runners import EndpointRunner, EpisodeRunner, PolicyConfig, harness_config
from factory.errors import FactoryError
from factory.trainer_plugin import load_trainer


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

    def __post_init__(self) -> None:
        if self.base_url and not self.model:
            raise FactoryError("--base-url needs --model: the endpoint's model name")

    def settings(self) -> PolicyConfig:
        return load_trainer().load_config(
            self.config,
            model=self.model,
            max_new_tokens=None if self.base_url else self.max_tokens,
        )

    def runner(
        self, settings: PolicyConfig, *, cache_dir: Path, say: Callable[[str], None]
    ) -> EpisodeRunner:
        """The runner (an endpoint's replies are cached under ``cache_dir``)."""
        if self.base_url is None:
            return load_trainer().local_runner(
                settings, jobs=self.jobs, batch_episodes=self.batch_episodes, say=say
            )
        from factory.llm import LlmClient, LlmSettings, api_key_from_env

        client = LlmClient(
            LlmSettings(
                base_url=self.base_url,
                model=self.model,
                api_key=api_key_from_env(self.api_key_env),
                concurrency=self.jobs,
                cache_dir=cache_dir,
            )
        )
        return EndpointRunner(
            client,
            harness_config(settings, ActionFormat.FENCED),
            temperature=settings.temperature,
            max_tokens=self.max_tokens or 512,
            jobs=self.jobs,
            seed=settings.seed,
        )
