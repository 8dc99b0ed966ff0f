"""Inside the Harbor runner: load a `factory export --format harbor` folder with Harbor's own
models (its registry.json as DatasetSpec entries, every task with harbor's Task loader).

    docker run --rm -v DIR:DIR factory/harbor-runner:0.26.0-compose2.40 python3 /opt/bench/check_export.py DIR
"""

import sys
from pathlib import Path

from harbor.models.registry import Registry
from harbor.models.task.task import Task

root = Path(sys.argv[1])
registry = Registry.from_path(root / "registry.json")
for dataset in registry.datasets:
    loaded = [Task(root / ref.path) for ref in dataset.tasks]
    print(
        f"DatasetSpec {dataset.name}@{dataset.version}: {len(dataset.tasks)} tasks, "
        f"{len(loaded)} loaded by harbor.models.task.task.Task"
    )
