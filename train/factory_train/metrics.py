"""Metrics per step: JSONL always, a PNG of the reward curve, TensorBoard / W&B when installed."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


class MetricsLog:
    def __init__(self, out: Path, run_name: str) -> None:
        self.path = out / "metrics.jsonl"
        self.plot_path = out / "reward.png"
        self.rows: list[dict] = []
        if self.path.is_file():
            self.rows = [
                json.loads(line) for line in self.path.read_text().splitlines() if line.strip()
            ]
        self._tensorboard = None
        self._wandb = None
        try:
            from torch.utils.tensorboard import SummaryWriter

            self._tensorboard = SummaryWriter(str(out / "tensorboard"))
        except Exception:  # noqa: BLE001 - tensorboard is optional
            pass
        if os.environ.get("WANDB_PROJECT"):
            try:
                import wandb

                self._wandb = wandb.init(
                    project=os.environ["WANDB_PROJECT"], name=run_name, resume="allow"
                )
            except Exception as exc:  # noqa: BLE001 - optional
                log.warning("W&B logging off: %s", exc)

    def truncate_to(self, step: int) -> None:
        """After a resume from a checkpoint at ``step``: forget later rows (they are redone)."""
        self.rows = [r for r in self.rows if r["step"] <= step]
        self.path.write_text("".join(json.dumps(r) + "\n" for r in self.rows))

    def add(self, row: dict) -> None:
        self.rows.append(row)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")
        if self._tensorboard is not None:
            for key, value in row.items():
                if isinstance(value, (int, float)) and key != "step":
                    self._tensorboard.add_scalar(key, value, row["step"])
        if self._wandb is not None:
            self._wandb.log(row, step=row["step"])
        self.plot()

    def plot(self) -> None:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return
        steps = [r["step"] for r in self.rows]
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.plot(steps, [r["reward_mean"] for r in self.rows], label="train reward (mean)")
        ax.plot(steps, [r["pass_rate"] for r in self.rows], label="train pass rate", alpha=0.6)
        evals = [r for r in self.rows if "eval_pass_at_1" in r]
        if evals:
            ax.plot(
                [r["step"] for r in evals],
                [r["eval_pass_at_1"] for r in evals],
                "o-",
                label="held-out pass@1",
            )
        ax.set_xlabel("step")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(loc="upper left")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(self.plot_path, dpi=100)
        plt.close(fig)

    def close(self) -> None:
        if self._tensorboard is not None:
            self._tensorboard.close()
        if self._wandb is not None:
            self._wandb.finish()
