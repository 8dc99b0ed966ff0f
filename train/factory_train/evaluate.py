"""Evaluation during training: k episodes per held-out task, pass@1 and pass@k per family.

The scoring is torch-free and lives with the harness (:mod:`factory.agent.evaluation`), where
``factory eval`` uses it too; this module keeps the trainer's import path.
"""

from factory.agent.evaluation import evaluate_tasks, pass_at_k

__all__ = ["evaluate_tasks", "pass_at_k"]
