"""Evaluation during training: k episodes per held-out task, pass@1, pass@k and pass^k per
family.

The scoring is torch-free and lives with the harness (:mod:`factory.agent.evaluation`, the
estimators in :mod:`factory.agent.passk`), where ``factory eval`` uses it too; this module
keeps the trainer's import path.
"""

from factory.agent.evaluation import evaluate_tasks
from factory.agent.passk import pass_at_k, pass_hat_k

__all__ = ["evaluate_tasks", "pass_at_k", "pass_hat_k"]
