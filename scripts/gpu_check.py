"""A few GRPO steps on a GPU, without Docker (the lent GPU machine has no Docker engine).

    python scripts/gpu_check.py [--model PATH] [--steps 4]

The environment is in-process: a prompt asks for a shell command, the reward checks the
command by running it in a temporary folder with subprocess (count the lines of a file). It
exercises the same pieces `factory train` uses on a GPU — bf16 model, batched sampling, the
token-level GRPO loss from factory_train.grpo, AdamW — and prints tokens/s and step times.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "train"))

PROMPT = (
    "Reply with one shell command, in a ```bash block, that prints the number of lines "
    "of the file data.txt in the current directory."
)


def reward(text: str, lines: int) -> float:
    command = text.split("```")[0].strip().splitlines()[0] if text.strip() else ""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "data.txt").write_text("x\n" * lines)
        try:
            out = subprocess.run(
                ["bash", "-c", command], cwd=tmp, capture_output=True, text=True, timeout=5
            )
        except subprocess.TimeoutExpired:
            return 0.0
    return 1.0 if out.stdout.strip().split()[:1] == [str(lines)] else 0.0


def main() -> None:
    import torch
    from factory_train.grpo import group_advantages, grpo_loss, make_batch, token_logprobs
    from factory_train.models import load_policy, resolve_model
    from factory_train.rollout import TokenTrace

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="SmolLM2-135M-Instruct")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--group", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=64)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(f"device: {device} ({torch.cuda.get_device_name() if device.type == 'cuda' else 'cpu'})")
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    model, tok = load_policy(resolve_model(args.model), device=str(device), dtype=dtype)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)
    prompt = (
        tok.apply_chat_template(
            [{"role": "user", "content": PROMPT}], tokenize=False, add_generation_prompt=True
        )
        + "```bash\n"
    )
    prompt_ids = tok(prompt, add_special_tokens=False)["input_ids"]
    for step in range(1, args.steps + 1):
        started = time.perf_counter()
        batch_in = torch.tensor([prompt_ids] * args.group, device=device)
        with torch.no_grad():
            out = model.generate(
                input_ids=batch_in,
                attention_mask=torch.ones_like(batch_in),
                max_new_tokens=args.tokens,
                do_sample=True,
                temperature=1.0,
                pad_token_id=tok.pad_token_id,
                eos_token_id=tok.eos_token_id,
            )
        generated = out[:, len(prompt_ids) :].tolist()
        gen_sec = time.perf_counter() - started
        traces, rewards = [], []
        for ids in generated:
            ids = ids[: ids.index(tok.eos_token_id) + 1] if tok.eos_token_id in ids else ids
            trace = TokenTrace()
            trace.extend(prompt_ids, policy=False)
            trace.extend(ids, policy=True)
            traces.append(trace)
            rewards.append(reward(tok.decode(ids, skip_special_tokens=True), 7 + step))
        batch = make_batch(traces, group_advantages(rewards), tok.pad_token_id, device)
        with torch.no_grad():
            old = token_logprobs(model, batch)
        new = token_logprobs(model, batch)
        total, tokens, _ = grpo_loss(new, old, batch.advantages, batch.loss_mask, clip_epsilon=0.2)
        (total / tokens.clamp(min=1)).backward()
        optimizer.step()
        optimizer.zero_grad()
        if device.type == "cuda":
            torch.cuda.synchronize()
        step_sec = time.perf_counter() - started
        new_tokens = sum(t.policy_tokens for t in traces)
        print(
            f"step {step}: reward {sum(rewards) / len(rewards):.3f}, generated {new_tokens} tokens "
            f"in {gen_sec:.2f}s ({new_tokens / gen_sec:.0f} tokens/s), step {step_sec:.2f}s, "
            f"loss {float(total.detach()) / max(float(tokens), 1):.4f}"
        )


if __name__ == "__main__":
    main()
