"""Helpers for the trainer's CPU tests: a tiny random model with SmolLM2's tokenizer, a suite
of generated tool tasks (they run in process, no Docker), and a scripted sampler whose replies
carry the model's real log-probs."""

from __future__ import annotations

from pathlib import Path

from factory_train.batch import make_batch, token_logprobs
from factory_train.generation import Sample
from factory_train.rollout import TokenTrace

from factory.generate.taxonomy import Difficulty
from factory.generate.trial import render_trial


def tiny_model_dir(root: Path, **overrides) -> Path:
    """A 2-layer random Llama saved with SmolLM2-135M-Instruct's tokenizer (model + tokenizer)."""
    import torch
    from factory_train.models import resolve_model
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(str(resolve_model("SmolLM2-135M-Instruct")))
    settings = dict(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    settings.update(overrides)
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**settings))
    model.save_pretrained(str(root))
    tokenizer.save_pretrained(str(root))
    return root


def tool_suite(root: Path, count: int = 4, family: str = "tool-calendar") -> Path:
    for seed in range(1, count + 1):
        render_trial(family, Difficulty.EASY, seed, root / "tasks")
    return root


def reference_commands(task_dir: Path) -> str:
    """The `tool call` lines of a tool task's reference solution."""
    lines = (task_dir / "solution" / "solve.sh").read_text().splitlines()
    return "\n".join(line for line in lines if line.startswith("tool "))


class ScriptedSampler:
    """Replies from ``script(prompt_index, call_index) -> text``, tokenised, ended with EOS,
    with the log-probs the model gives those tokens (as if it had sampled them)."""

    def __init__(self, model, tokenizer, script, sampling) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.script = script
        self.sampling = sampling
        self.calls = 0

    def __call__(self, prompts, budgets=None):
        import torch

        samples = []
        for i, prompt in enumerate(prompts):
            text = self.script(i, self.calls)
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            ids = ids + [self.tokenizer.eos_token_id]
            trace = TokenTrace()
            trace.extend(prompt, policy=False)
            trace.extend(ids, policy=True, logprobs=[0.0] * len(ids))
            batch = make_batch([trace], [0.0], self.tokenizer.pad_token_id, "cpu")
            with torch.no_grad():
                logps = token_logprobs(self.model, batch, self.sampling)[0, -len(ids) :]
            samples.append(Sample(ids, logps.tolist(), truncated=False))
        self.calls += 1
        return samples
