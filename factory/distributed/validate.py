"""`factory validate --executor ray`: the local validator's bookkeeping, with the work on Ray.

The driver does what is cheap and needs the whole run: parse the task (and convert a
Terminal-Bench 1 directory), give it a unique id, skip it when it was certified with the same
content hash, and write ``validation.json`` after every task. A node does the rest (build the
image, run the phases) and sends back the verdict and its logs, which land where the local
validator would have put them.
"""

from __future__ import annotations

import time
from pathlib import Path

from factory.distributed.cluster import RayCluster
from factory.distributed.payload import TaskPayload, relocate, unpack_logs
from factory.distributed.worker import validate_on_node
from factory.errors import CancelledError, FactoryError, TaskFormatError
from factory.runtime import DockerRuntime
from factory.tasks.model import load_task
from factory.validate.outcome import Outcome, TaskValidation, ValidationReport
from factory.validate.validator import Validator, write_report

NODE_NOTE = "ray node "


def node_note(node: dict) -> str:
    """The note that says where a task ran (``ray node <id> on <host>``)."""
    return f"{NODE_NOTE}{node['node_id'][:12]} on {node['host']}"


def node_of(verdict: TaskValidation) -> str | None:
    """The Ray node id (12 characters) a verdict was made on, from its notes."""
    for note in verdict.notes:
        if note.startswith(NODE_NOTE):
            return note[len(NODE_NOTE) :].split()[0]
    return None


class RayValidator(Validator):
    """A :class:`Validator` whose tasks run as Ray tasks, one ``docker_slots`` each."""

    def __init__(
        self,
        runtime: DockerRuntime,
        out_dir: Path,
        cluster: RayCluster,
        *,
        shared_fs: bool = False,
        **kwargs,
    ) -> None:
        # One driver thread per slot, plus a few so that a node never waits for the driver.
        kwargs["jobs"] = cluster.slots + min(cluster.slots, 4)
        super().__init__(runtime, out_dir, **kwargs)
        self.cluster = cluster
        self.shared_fs = shared_fs
        self._next_write = 0.0

    def run(self, task_dirs: list[Path]) -> ValidationReport:
        try:
            return super().run(task_dirs)
        except BaseException:
            self._cancel.set()
            self.cluster.cancel()
            raise

    def _validate_and_record(self, task_dir: Path) -> TaskValidation | None:
        """As the local validator, except that validation.json is rewritten only while that
        costs at most a tenth of the driver's time: rewriting a report of n tasks after every
        task is O(n) each, which a cluster reaches quickly (10,000 tasks: 0.6 s a rewrite).
        ``run`` always writes it at the end; a kill loses at most the last few verdicts,
        which the rerun redoes."""
        if self._cancel.is_set():
            return None
        self.on_task_start(task_dir)
        try:
            verdict = self.validate(task_dir)
        except CancelledError:
            return None
        except FactoryError as exc:  # the node failed (lost, crashed): keep going
            verdict = self._verdict_without_task(
                task_dir, Outcome.INFRA_ERROR, str(exc), time.monotonic()
            )
        if self._cancel.is_set() and verdict.outcome is Outcome.INFRA_ERROR:
            return None
        with self._lock:
            self.report.tasks.append(verdict)
            if time.monotonic() >= self._next_write:
                started = time.monotonic()
                write_report(self.report, self.report_path)
                spent = time.monotonic() - started
                self._next_write = time.monotonic() + 9 * spent
        self.on_task_done(verdict)
        return verdict

    def validate(self, task_dir: Path) -> TaskValidation:
        started = time.monotonic()
        try:
            task = load_task(task_dir, tb1_cache=self.out_dir / "converted")
        except TaskFormatError as exc:
            return self._verdict_without_task(task_dir, Outcome.INVALID_TASK, str(exc), started)
        task_id = self._unique_id(task.id)
        key = (str(task.display_path), task.content_hash)
        if key in self._certified:
            earlier = self._certified[key].model_copy(update={"resumed": True})
            earlier.notes = [*earlier.notes, "skipped: already certified with this content hash"]
            return earlier
        if self._cancel.is_set():
            raise CancelledError("interrupted")
        payload = TaskPayload.pack(task.root, shared_fs=self.shared_fs)
        done = self.cluster.call(
            validate_on_node, payload, self.runtime.run_id, self.repeats, self.prestart
        )
        logs = self.out_dir / "logs" / task_id
        unpack_logs(done["logs"], logs)
        # Paths on the node (its scratch logs, its copy of the task) -> paths here.
        moved = relocate(done["verdict"], done["log_root"], str(logs))
        verdict = TaskValidation.model_validate_json(
            relocate(moved, done["task_dir"], str(task.root))
        )
        remote_notes = [n for n in verdict.notes if n not in task.notes]
        return verdict.model_copy(
            update={
                "id": task_id,
                "path": str(task.display_path),
                "content_hash": task.content_hash,
                "notes": [*task.notes, *remote_notes, node_note(done["node"])],
                # dispatch: what the trip cost on top of the node's own total (packing,
                # waiting for a slot, transfer, unpacking the logs).
                "timings": {
                    **verdict.timings,
                    "dispatch": max(
                        0.0, time.monotonic() - started - verdict.timings.get("total", 0.0)
                    ),
                },
            }
        )
