"""`factory generate`: taxonomy -> candidates -> certification -> a suite of verified tasks.

Suite folder::

    suite.json          manifest: every accepted task, coverage per leaf, totals
    taxonomy.yaml       the taxonomy the suite was generated from
    tasks/<id>/         accepted tasks (Harbor layout)
    rejected/<id>/      rejected candidates, with rejection.json (outcome, reason)
    retired/<id>/       tasks `factory calibrate` retired, with retirement.json (why)
    results/<id>.json   the journal: one record per finished candidate
    validation/logs/    phase logs of every validation and probe

Candidates are deterministic: candidate ``a`` of a leaf has id ``<category>-<skill>-<a:03d>``
and seed ``H(suite seed, leaf path, a)``. A rerun reads the journal, skips finished candidates
and redoes unfinished ones, so a killed run continues where it stopped and never duplicates a
task.

Verdicts do not depend on which worker finishes first: certification runs in parallel, but
candidates are *settled* (near-duplicate and repeated-fault-combination checks, moved to
``tasks/`` or ``rejected/``, journalled) in a fixed order, leaf by leaf in taxonomy order and
attempt by attempt within a leaf. A leaf's candidate settles once every earlier attempt of its
leaf has settled and every earlier leaf is closed (quota met or attempts spent), so of two
near-duplicates (or two tasks with one fault combination) the earlier one is kept, in every run
and after every resume.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from factory import __version__
from factory.errors import FactoryError
from factory.executor import Executor
from factory.fsutil import write_text_atomic
from factory.generate.certify import Certificate, certify
from factory.generate.results import (
    ACCEPTED,
    REJECTED,
    CandidateResult,
    LeafCoverage,
    LlmUsage,
    QualityOutcome,
    SuiteManifest,
    SuiteTask,
)
from factory.generate.spec import TaskSpec
from factory.generate.taxonomy import Difficulty, Leaf, Taxonomy
from factory.quality.dedup import DedupIndex
from factory.quality.structure import admits
from factory.runtime import DockerRuntime
from factory.tasks.hashing import hash_tree
from factory.tasks.model import load_task_config, save_task_config
from factory.validate.outcome import Outcome
from factory.validate.validator import SIGNAL_POLL_SEC, CostBound, Validator


class Backend(Protocol):
    """Makes candidates for a leaf (procedural families, or an LLM)."""

    def make(
        self, leaf: Leaf, difficulty: Difficulty, seed: int, task_id: str
    ) -> tuple[TaskSpec, LlmUsage]: ...

    def repair(
        self, leaf: Leaf, spec: TaskSpec, certificate: Certificate
    ) -> tuple[TaskSpec, LlmUsage] | None:
        """A fixed candidate, or None when this backend does not repair."""
        ...


class GenerationError(FactoryError):
    """A backend could not produce a candidate (the reason becomes the rejection reason)."""

    def __init__(
        self,
        message: str,
        outcome: QualityOutcome = QualityOutcome.GENERATION_ERROR,
        usage: LlmUsage | None = None,
        *,
        prompt_version: str | None = None,
        model: str | None = None,
    ) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.usage = usage or LlmUsage()
        self.prompt_version = prompt_version
        self.model = model


def candidate_seed(suite_seed: int, leaf_path: str, attempt: int) -> int:
    digest = hashlib.sha256(f"{suite_seed}:{leaf_path}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def candidate_id(leaf: Leaf, attempt: int) -> str:
    return f"{leaf.category.name}-{leaf.skill.name}-{attempt:03d}"


def candidate_record(
    leaf: Leaf, suite_seed: int, difficulty: Difficulty, attempt: int
) -> dict[str, Any]:
    """The fields of a candidate's result (results/<id>.json) known before it is made: its id,
    leaf, generator, difficulty, seed and attempt."""
    return dict(
        id=candidate_id(leaf, attempt),
        taxonomy_path=leaf.path,
        generator=leaf.skill.generator,
        difficulty=difficulty.value,
        seed=candidate_seed(suite_seed, leaf.path, attempt),
        attempt=attempt,
    )


@dataclass
class LeafState:
    leaf: Leaf
    plan: list[Difficulty]
    results: dict[int, CandidateResult] = field(default_factory=dict)
    inflight: set[int] = field(default_factory=set)

    @property
    def valid(self) -> int:
        return sum(r.status == ACCEPTED for r in self.results.values())

    @property
    def closed(self) -> bool:
        """No further attempt of this leaf will start or settle."""
        if self.inflight:
            return False
        if self.valid >= self.leaf.quota:
            return True
        return all(a in self.results for a in range(self.leaf.attempt_budget))

    def next_attempt(self) -> int | None:
        if self.valid + len(self.inflight) >= self.leaf.quota:
            return None
        for attempt in range(self.leaf.attempt_budget):
            if attempt not in self.results and attempt not in self.inflight:
                return attempt
        return None


@dataclass
class Certified:
    """A candidate whose certification finished, waiting for its turn to settle."""

    record: dict
    staging: Path | None
    outcome: str
    reason: str
    usage: LlmUsage
    started: float
    timings: dict[str, float]


class SuiteGenerator:
    """Runs a taxonomy to a suite: candidates are made here and certified on the executor (by
    default this machine, ``jobs`` at a time). Thread-safe across its candidate workers."""

    def __init__(
        self,
        taxonomy: Taxonomy,
        taxonomy_text: str,
        out: Path,
        runtime: DockerRuntime,
        backends: Callable[[Leaf], Backend],
        *,
        jobs: int = 2,
        repair_rounds: int = 0,
        on_result: Callable[[CandidateResult], None] | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.taxonomy = taxonomy
        self.taxonomy_text = taxonomy_text
        self.out = out
        self.runtime = runtime
        self.backend_for = backends
        self.repair_rounds = repair_rounds
        self.on_result = on_result or (lambda _r: None)
        self.validator = Validator(
            runtime,
            out / "validation",
            jobs=jobs,
            force=True,
            repeats=taxonomy.defaults.repeats,
            executor=executor,
        )
        self.jobs = self.validator.jobs
        self._write = CostBound()
        self.dedup = DedupIndex()
        self.states = {
            leaf.path: LeafState(leaf, leaf.difficulty_plan()) for leaf in taxonomy.leaves()
        }
        self._lock = threading.Lock()
        self._cancel = threading.Event()

    # --- public -------------------------------------------------------------------
    def run(self) -> SuiteManifest:
        self._prepare()
        pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="generate")
        running: dict[Future, tuple[LeafState, int]] = {}
        certified: dict[tuple[str, int], Certified] = {}
        try:
            while True:
                self._submit(pool, running, len(certified))
                if not running:
                    break
                done: set[Future] = set()
                while not done:  # short waits, so Ctrl-C is noticed (see Validator.run)
                    done, _ = wait(running, timeout=SIGNAL_POLL_SEC, return_when=FIRST_COMPLETED)
                for future in done:
                    state, attempt = running.pop(future)
                    certified[(state.leaf.path, attempt)] = future.result()
                self._settle_in_order(certified)
        except BaseException:
            self._cancel.set()
            self.validator.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            self.write_manifest()
        pool.shutdown(wait=True)
        self.validator.close()
        return self.manifest()

    def manifest(self) -> SuiteManifest:
        tasks: list[SuiteTask] = []
        coverage: list[LeafCoverage] = []
        certified_total = 0
        with self._lock:
            states = list(self.states.values())
        for state in states:
            results = sorted(state.results.values(), key=lambda r: r.attempt)
            usage = LlmUsage()
            for result in results:
                usage.add(result.llm)
            accepted = [r for r in results if r.status == ACCEPTED]
            # Tasks `factory calibrate` retired were valid candidates: yield counts them.
            certified = len(accepted) + sum(r.status == "retired" for r in results)
            certified_total += certified
            coverage.append(
                LeafCoverage(
                    taxonomy_path=state.leaf.path,
                    generator=state.leaf.skill.generator,
                    quota=state.leaf.quota,
                    candidates=len(results),
                    valid=len(accepted),
                    distinct=len(accepted),
                    yield_=certified / len(results) if results else 0.0,
                    outcomes=dict(Counter(r.outcome for r in results)),
                    seconds=sum(r.timings.get("total", 0.0) for r in results),
                    llm=usage,
                    complete=len(accepted) >= state.leaf.quota,
                )
            )
            tasks += [SuiteTask.of(r) for r in accepted]
        candidates = sum(c.candidates for c in coverage)
        valid = sum(c.valid for c in coverage)
        totals = {
            "quota": sum(c.quota for c in coverage),
            "candidates": candidates,
            "valid": valid,
            "yield": certified_total / candidates if candidates else 0.0,
            "seconds": sum(c.seconds for c in coverage),
            "llm_tokens": sum(c.llm.prompt_tokens + c.llm.completion_tokens for c in coverage),
            "llm_cost_usd": sum(c.llm.cost_usd for c in coverage),
            "leaves_complete": sum(c.complete for c in coverage),
            "leaves": len(coverage),
        }
        return SuiteManifest(
            suite=self.taxonomy.suite,
            factory_version=__version__,
            seed=self.taxonomy.seed,
            taxonomy="taxonomy.yaml",
            tasks=sorted(tasks, key=lambda t: t.id),
            coverage=coverage,
            totals=totals,
        )

    def write_manifest(self) -> None:
        write_text_atomic(
            self.out / "suite.json", self.manifest().model_dump_json(indent=2, by_alias=True)
        )

    # --- set-up and resume --------------------------------------------------------
    def _prepare(self) -> None:
        for folder in ("tasks", "rejected", "results", "candidates"):
            (self.out / folder).mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.out / "taxonomy.yaml", self.taxonomy_text)
        shutil.rmtree(self.out / "candidates", ignore_errors=True)  # unfinished: redone
        (self.out / "candidates").mkdir()
        by_id = {
            candidate_id(state.leaf, attempt): (state, attempt)
            for state in self.states.values()
            for attempt in range(state.leaf.attempt_budget)
        }
        for path in sorted((self.out / "results").glob("*.json")):
            try:
                result = CandidateResult.model_validate_json(path.read_text())
            except (ValidationError, ValueError, OSError):
                path.unlink()  # a torn write: the candidate is redone
                continue
            # Any attempt of a known leaf: `factory calibrate --regenerate` adds attempts
            # beyond the budget, and its retired tasks (status 'retired') stay recorded.
            state = self.states.get(result.taxonomy_path)
            if (
                state is None
                or result.id != candidate_id(state.leaf, result.attempt)
                or not (self.out / result.path).is_dir()
            ):
                continue
            attempt = result.attempt
            state.results[attempt] = result
            if result.status == ACCEPTED:
                self._index(
                    result.id,
                    result.content_hash or "",
                    self.out / result.path,
                    self._threshold(state.leaf),
                )
        # Folders without a journal entry were left by a kill between move and record.
        for folder in ("tasks", "rejected"):
            for path in (self.out / folder).iterdir():
                if (
                    path.name in by_id
                    and not (self.out / "results" / f"{path.name}.json").is_file()
                ):
                    shutil.rmtree(path, ignore_errors=True)

    def _submit(
        self,
        pool: ThreadPoolExecutor,
        running: dict[Future, tuple[LeafState, int]],
        waiting: int,
    ) -> None:
        """Start candidates: up to ``2 * jobs`` running, and (so that certified candidates
        waiting for an earlier one to settle stay bounded) ``8 * jobs`` unsettled in all."""
        while len(running) < self.jobs * 2 and not self._cancel.is_set():
            picked, blocking = None, True
            for state in self.states.values():
                attempt = state.next_attempt()
                if attempt is not None:
                    picked = (state, attempt)
                    break
                blocking = blocking and state.closed
            if picked is None:
                return
            # The first unclosed leaf always gets its attempts (the others wait on it).
            if not blocking and len(running) + waiting >= self.jobs * 8:
                return
            state, attempt = picked
            state.inflight.add(attempt)
            running[pool.submit(self._candidate, state.leaf, state.plan, attempt)] = picked

    def _settle_in_order(self, certified: dict[tuple[str, int], Certified]) -> None:
        """Settle every certified candidate whose turn has come (see the module docstring)."""
        for state in self.states.values():
            while state.inflight:
                attempt = min(state.inflight)
                item = certified.pop((state.leaf.path, attempt), None)
                if item is None:
                    return  # an earlier attempt is still running
                state.inflight.discard(attempt)
                result = self._settle(item)
                state.results[attempt] = result
                self.on_result(result)
                # suite.json is O(suite) to write; the journal (results/) is per candidate
                self._write(self.write_manifest)
            if not state.closed:
                return  # later leaves wait: this one may still start attempts

    def _settle(self, item: Certified) -> CandidateResult:
        outcome, reason = item.outcome, item.reason
        if outcome == Outcome.VALID.value:
            repeated = self._repeated_structure(item.record)
            if repeated:
                outcome, reason = QualityOutcome.SAME_STRUCTURE.value, repeated
        if outcome == Outcome.VALID.value and item.staging is not None:
            leaf = self.states[item.record["taxonomy_path"]].leaf
            duplicate = self._index(
                item.record["id"], hash_tree(item.staging), item.staging, self._threshold(leaf)
            )
            if duplicate:
                other, similarity = duplicate
                outcome = QualityOutcome.DUPLICATE.value
                reason = f"{'same content as' if similarity >= 1 else f'{similarity:.2f} similar to'} {other}"
                item.record["duplicate_of"] = other
        return self._finish(
            item.record, item.staging, outcome, reason, item.usage, item.started, item.timings
        )

    # --- one candidate --------------------------------------------------------------
    def _candidate(self, leaf: Leaf, plan: list[Difficulty], attempt: int) -> Certified:
        started = time.monotonic()
        difficulty = plan[attempt % len(plan)]
        record = candidate_record(leaf, self.taxonomy.seed, difficulty, attempt)
        task_id, seed = record["id"], record["seed"]
        backend = self.backend_for(leaf)
        usage = LlmUsage()
        staging = self.out / "candidates" / task_id
        try:
            spec, used = backend.make(leaf, difficulty, seed, task_id)
            usage.add(used)
        except GenerationError as exc:
            usage.add(exc.usage)
            record.update(prompt_version=exc.prompt_version, model=exc.model)
            return Certified(record, None, exc.outcome.value, str(exc), usage, started, {})
        provenance = spec.config.provenance
        record.update(
            prompt_version=provenance.prompt_version,
            model=provenance.model,
            faults=list(spec.faults),
        )
        timings = {"generate": time.monotonic() - started}
        rounds, repair_note = 0, ""
        while True:
            spec.write(staging)
            cert = self._certify(leaf, spec, staging)
            if cert.valid or rounds >= self.repair_rounds or self._cancel.is_set():
                break
            rounds += 1
            try:
                repaired = backend.repair(leaf, spec, cert)
            except GenerationError as exc:
                usage.add(exc.usage)
                repair_note = f" (repair round {rounds} failed: {exc})"
                break
            if repaired is None:
                rounds -= 1
                break
            spec, used = repaired
            usage.add(used)
        for key, value in cert.timings.items():
            timings[key] = timings.get(key, 0.0) + value
        record["repair_rounds"] = rounds
        outcome, reason = cert.outcome, cert.reason + repair_note
        if cert.valid:
            self._stamp(staging, cert)
        record.update(
            verifier_strength=cert.verifier_strength, probes=[p.model_dump() for p in cert.probes]
        )
        return Certified(record, staging, outcome, reason, usage, started, timings)

    def _certify(self, leaf: Leaf, spec: TaskSpec, staging: Path) -> Certificate:
        return certify(
            staging,
            self.validator,
            secrets=spec.secrets,
            outputs=spec.outputs,
            mutations=dict(spec.mutations),
            cheats=dict(spec.cheats),
            forbidden_strings=spec.forbidden_strings,
            min_verifier_strength=leaf.setting("min_verifier_strength"),
        )

    def _repeated_structure(self, record: dict) -> str:
        """Why a certified candidate's fault combination is refused (empty: it is not); see
        the taxonomy's ``min_fault_combinations``. Decided at settling, against the leaf's
        earlier attempts only, so the verdict does not depend on worker order."""
        state = self.states[record["taxonomy_path"]]
        minimum = state.leaf.setting("min_fault_combinations")
        faults = record.get("faults", [])
        accepted = [r.faults for r in state.results.values() if r.status == ACCEPTED]
        if admits(faults, accepted, minimum):
            return ""
        return (
            f"fault combination {', '.join(faults)} already accepted in this leaf, which "
            f"must keep at least {minimum:.0%} distinct combinations (min_fault_combinations)"
        )

    @staticmethod
    def _threshold(leaf: Leaf) -> float:
        return leaf.setting("dedup_threshold")

    def _index(
        self, task_id: str, content_hash: str, folder: Path, threshold: float
    ) -> tuple[str, float] | None:
        return self.dedup.check_and_add(task_id, content_hash, _dedup_text(folder), threshold)

    @staticmethod
    def _stamp(folder: Path, cert: Certificate) -> None:
        """Record the probes' verdicts in the accepted task's own metadata."""
        config = load_task_config(folder / "task.toml")
        provenance = config.provenance.model_copy(
            update={
                "verifier_strength": cert.verifier_strength,
                "probes": {f"{p.kind}:{p.name}": p.rejected for p in cert.probes},
            }
        )
        config.set_provenance(provenance)
        save_task_config(folder / "task.toml", config)

    def _finish(
        self,
        record: dict,
        staging: Path | None,
        outcome: str,
        reason: str,
        usage: LlmUsage,
        started: float,
        timings: dict[str, float],
    ) -> CandidateResult:
        accepted = outcome == Outcome.VALID.value
        task_id = record["id"]
        target = self.out / ("tasks" if accepted else "rejected") / task_id
        timings["total"] = time.monotonic() - started
        result = CandidateResult(
            **record,
            status=ACCEPTED if accepted else REJECTED,
            outcome=outcome,
            reason=reason,
            llm=usage,
            timings=timings,
            path=str(target.relative_to(self.out)),
            content_hash=hash_tree(staging) if staging is not None and staging.is_dir() else None,
        )
        if target.exists():
            shutil.rmtree(target)
        if staging is not None and staging.is_dir():
            staging.rename(target)
        else:
            target.mkdir(parents=True)
        if not accepted:
            (target / "rejection.json").write_text(result.model_dump_json(indent=2))
        write_text_atomic(
            self.out / "results" / f"{task_id}.json", result.model_dump_json(indent=2)
        )
        return result


def _dedup_text(folder: Path) -> str:
    parts = []
    for rel in ("instruction.md",):
        path = folder / rel
        if path.is_file():
            parts.append(path.read_text(errors="replace"))
    tests = folder / "tests"
    if tests.is_dir():
        for path in sorted(p for p in tests.rglob("*") if p.is_file()):
            parts.append(path.read_text(errors="replace"))
    return "\n".join(parts)


def load_suite_manifest(suite: Path) -> SuiteManifest:
    path = suite / "suite.json"
    if not path.is_file():
        raise FactoryError(f"{path}: no suite here (run `factory generate` first)")
    try:
        return SuiteManifest.model_validate_json(path.read_text())
    except (ValidationError, ValueError) as exc:
        raise FactoryError(f"{path}: not a suite manifest ({str(exc).splitlines()[0]})") from None


def persona_and_scenario(leaf: Leaf, seed: int) -> tuple[str | None, str | None]:
    rng = random.Random(seed ^ 0x5CE7A)
    persona = rng.choice(leaf.skill.personas) if leaf.skill.personas else None
    scenario = rng.choice(leaf.skill.scenarios) if leaf.skill.scenarios else None
    return persona, scenario
