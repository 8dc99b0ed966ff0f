"""factory_train: the bundled RL trainer (GRPO with multi-turn rollouts inside the task
containers). The only part of factory that imports torch (and vLLM, lazily, on GPUs).

Importable as ``factory_train`` (never a generic ``train``); install with
``pip install -e '.[train]'``.
"""

__all__ = ["__version__"]
__version__ = "0.1.0"
