"""Generation backends for rollouts: transformers `generate` (CPU and GPU), or vLLM on GPU
(imported lazily; the weights are pushed to the engine after each update)."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


class HFGenerator:
    """Batched sampling with transformers: left-padded prompts, returns the new token ids."""

    def __init__(
        self,
        model,
        tokenizer,
        *,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        autocast_dtype=None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.autocast_dtype = autocast_dtype

    def __call__(self, prompts: list[list[int]]) -> list[list[int]]:
        import torch

        device = next(self.model.parameters()).device
        pad = self.tokenizer.pad_token_id
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), pad, dtype=torch.long)
        attention = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, prompt in enumerate(prompts):
            input_ids[row, width - len(prompt) :] = torch.tensor(prompt)
            attention[row, width - len(prompt) :] = 1
        was_training = self.model.training
        self.model.eval()
        with torch.no_grad(), _autocast(device, self.autocast_dtype):
            out = self.model.generate(
                input_ids=input_ids.to(device),
                attention_mask=attention.to(device),
                max_new_tokens=self.max_new_tokens,
                do_sample=True,
                temperature=self.temperature,
                top_p=self.top_p,
                pad_token_id=pad,
                eos_token_id=self.tokenizer.eos_token_id,
            )
        if was_training:
            self.model.train()
        results = []
        for row in out[:, width:].tolist():
            ids = []
            for token in row:
                ids.append(token)
                if token == self.tokenizer.eos_token_id:
                    break
            while ids and ids[-1] == pad and pad != self.tokenizer.eos_token_id:
                ids.pop()
            results.append(ids)
        return results

    def sync(self) -> None:
        """Nothing to do: generation uses the training model itself."""


class VLLMGenerator:
    """vLLM engine on the GPU; ``sync`` loads the training model's weights into it."""

    def __init__(
        self,
        model,
        tokenizer,
        model_path: str,
        *,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        gpu_memory_utilization: float = 0.35,
        seed: int = 0,
    ) -> None:
        from vllm import LLM, SamplingParams  # GPU only; never imported on CPU

        self.model = model
        self.tokenizer = tokenizer
        self.llm = LLM(
            model=model_path,
            gpu_memory_utilization=gpu_memory_utilization,
            seed=seed,
            enforce_eager=True,
        )
        self.params = SamplingParams(
            max_tokens=max_new_tokens,
            temperature=temperature,
            top_p=top_p,
            stop_token_ids=[tokenizer.eos_token_id],
        )

    def __call__(self, prompts: list[list[int]]) -> list[list[int]]:
        from vllm.inputs import TokensPrompt

        outputs = self.llm.generate(
            [TokensPrompt(prompt_token_ids=p) for p in prompts], self.params, use_tqdm=False
        )
        return [list(o.outputs[0].token_ids) for o in outputs]

    def sync(self) -> None:
        state = self.model.state_dict()
        engine = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
        engine.load_weights(state.items())


def _autocast(device, dtype):
    import contextlib

    import torch

    if dtype is None or dtype == torch.float32:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)
