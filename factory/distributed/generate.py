"""`factory generate --executor ray`: candidates are made on the driver (procedural families or
LLM calls), certified on Ray nodes (leak checks, validation, cheat and mutation probes, in the
node's own engine). Journal, dedup, accept/reject and the manifest stay on the driver, exactly
as with the local executor, so a killed run resumes the same way."""

from __future__ import annotations

import time
from pathlib import Path

from factory.distributed.cluster import RayCluster
from factory.distributed.payload import TaskPayload, relocate, unpack_logs
from factory.distributed.validate import node_note
from factory.distributed.worker import certify_on_node
from factory.errors import CancelledError, FactoryError
from factory.generate.certify import Certificate
from factory.generate.pipeline import SuiteGenerator
from factory.generate.results import ProbeRecord
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import Leaf
from factory.validate.outcome import Outcome, TaskValidation


class RaySuiteGenerator(SuiteGenerator):
    """A :class:`SuiteGenerator` whose certification runs as Ray tasks (one slot each)."""

    def __init__(self, *args, cluster: RayCluster, shared_fs: bool = False, **kwargs) -> None:
        kwargs["jobs"] = cluster.slots + min(cluster.slots, 4)
        super().__init__(*args, **kwargs)
        self.cluster = cluster
        self.shared_fs = shared_fs
        self._next_write = 0.0

    def run(self):
        try:
            return super().run()
        except BaseException:
            self._cancel.set()
            self.cluster.cancel()
            raise
        finally:
            super().write_manifest()

    def write_manifest(self) -> None:
        """suite.json, rewritten only while that costs at most a tenth of the driver's time
        (it is O(suite) each time; the journal in results/ is still written per candidate,
        so resuming is unaffected). ``run`` always writes it at the end."""
        if time.monotonic() < self._next_write:
            return
        started = time.monotonic()
        super().write_manifest()
        self._next_write = time.monotonic() + 9 * (time.monotonic() - started)

    def _certify(self, leaf: Leaf, spec: TaskSpec, staging: Path) -> Certificate:
        validator = self.validator
        task_id = validator._unique_id(staging.name)  # noqa: SLF001 - same ids as local
        options = dict(
            secrets=tuple(spec.secrets),
            outputs=tuple(spec.outputs),
            mutations=dict(spec.mutations),
            cheats=dict(spec.cheats),
            forbidden_strings=tuple(spec.forbidden_strings),
            min_verifier_strength=leaf.setting("min_verifier_strength"),
        )
        try:
            done = self.cluster.call(
                certify_on_node,
                TaskPayload.pack(staging, shared_fs=self.shared_fs),
                self.runtime.run_id,
                validator.repeats,
                options,
            )
        except CancelledError:
            raise
        except FactoryError as exc:
            return Certificate(Outcome.INFRA_ERROR.value, str(exc))
        logs = validator.out_dir / "logs" / task_id
        unpack_logs(done["logs"], logs)
        validation = None
        if done["validation"]:
            moved = TaskValidation.model_validate_json(
                relocate(
                    relocate(done["validation"], done["log_root"], str(logs)),
                    done["task_dir"],
                    str(staging),
                )
            )
            validation = moved.model_copy(
                update={
                    "id": task_id,
                    "path": str(staging),
                    "notes": [*moved.notes, node_note(done["node"])],
                }
            )
        return Certificate(
            outcome=done["outcome"],
            reason=done["reason"].replace(done["task_dir"], str(staging)),
            validation=validation,
            probes=[ProbeRecord.model_validate(p) for p in done["probes"]],
            verifier_strength=done["verifier_strength"],
            log_tail=done["log_tail"],
            timings=done["timings"],
        )
