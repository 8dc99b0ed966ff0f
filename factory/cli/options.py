"""The options several commands share: one name, one help text and one default per idea.
Command modules use them as ``jobs: opt.Jobs = opt.DEFAULT_JOBS``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factory.agent.actions import ActionFormat
from factory.distributed import ExecutorKind
from factory.executor import DEFAULT_JOBS as DEFAULT_JOBS
from factory.runtime import BuildNetwork

LOCAL = ExecutorKind.LOCAL

Json = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print the result as one JSON document on stdout (logs and progress stay on stderr).",
    ),
]
Jobs = Annotated[
    int,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="Tasks, candidates or episodes worked on at once (each in containers of its own); "
        "with --executor ray and no --ray-address, the slots of the Ray instance started here.",
    ),
]
Executors = Annotated[
    ExecutorKind,
    typer.Option(
        "--executor",
        help="local: this machine's Docker engine. ray: the nodes of a Ray cluster, each with "
        "its own engine and 'docker_slots' (see README).",
    ),
]
BuildNetworks = Annotated[
    BuildNetwork,
    typer.Option(
        "--build-network",
        help="Network of image builds: filtered (package registries yes, the host and private "
        "addresses no) or none.",
    ),
]
FILTERED = BuildNetwork.FILTERED
RayAddress = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="Head of a running Ray cluster (HOST:PORT or auto); default: a one-node Ray "
        "instance in this process with --jobs slots.",
    ),
]
RayShared = Annotated[
    bool,
    typer.Option(
        "--ray-shared-fs",
        help="Every Ray node sees the task folders at the same paths: send paths, not copies.",
    ),
]
Model = Annotated[
    str | None,
    typer.Option(
        help="The policy: a local checkpoint folder, .gguf file or known local name; with "
        "--base-url, the endpoint's model name. Default: the config's (SmolLM2-135M-Instruct)."
    ),
]
Config = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        exists=True,
        dir_okay=False,
        help="train.yaml: the trainer's settings (sampling, harness, split).",
    ),
]
Episodes = Annotated[
    int, typer.Option("--k", "-k", min=1, help="Episodes per task (pass@k and pass^k).")
]
Batch = Annotated[
    int, typer.Option("--batch", min=1, help="A local model: episodes generated together.")
]
BaseUrl = Annotated[
    str | None,
    typer.Option(help="The policy behind this OpenAI-compatible endpoint (model: --model)."),
]
ApiKeyEnv = Annotated[str, typer.Option(help="Environment variable holding --base-url's API key.")]
MaxTokens = Annotated[
    int | None,
    typer.Option(help="Tokens per policy reply (default: the config's; 512 for an endpoint)."),
]
Actions = Annotated[
    ActionFormat | None,
    typer.Option(
        "--action-format",
        help="How the policy acts: tools (native tool calls: bash and the task's MCP tools) or "
        "fenced (one ```bash block per reply). Default: tools for an endpoint (--base-url), the "
        "config's action_format for a local model.",
    ),
]
FlakeRuns = Annotated[
    int,
    typer.Option(
        "--flake-runs",
        min=0,
        help="Then rerun nop + oracle of each valid task (calibrate: each kept one) N times "
        "under perturbation (time zone, hash seed, CPU load): its verifier flake rate, stored "
        "as flake_rate in its task.toml.",
    ),
]
DEFAULT_EPISODES = 4
DEFAULT_BATCH = 16
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


# --- the LLM that writes tasks (generate, calibrate --regenerate) or wrong solutions (families
# try) ---------------------------------------------------------------------------------------

LlmBaseUrl = Annotated[
    str | None,
    typer.Option(
        envvar="FACTORY_LLM_BASE_URL",
        help="The endpoint of the LLM that writes tasks (generate, calibrate) or wrong "
        "solutions (families try).",
    ),
]
LlmModel = Annotated[
    str | None, typer.Option(envvar="FACTORY_LLM_MODEL", help="That LLM's model (--llm-base-url).")
]
LlmApiKeyEnv = Annotated[
    str, typer.Option(help="Environment variable holding --llm-base-url's API key.")
]
