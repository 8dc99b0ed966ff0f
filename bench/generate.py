"""Generation benchmarks: yield per backend, time and throughput, diversity.

    .venv/bin/python bench/generate.py [--taxonomy examples/taxonomy.yaml] [--jobs 2]
        [--diversity 100] [--llm-base-url URL --llm-model NAME --llm-candidates 8]

1. Procedural: generate the taxonomy into a fresh suite (every candidate certified in
   containers) and report wall time, tasks/minute, yield (valid / candidates) and the
   rejection histogram.
2. Diversity: render N candidates the way the large taxonomy would (no Docker) and count the
   distinct ones after exact and near-duplicate removal at the taxonomy's threshold, per 100.
3. LLM (optional): the same pipeline with every leaf on the LLM backend against the given
   endpoint, reporting yield with and without the repair loop; say which model it was.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factory.generate.backends import BackendChoice, LlmOptions, backend_factory  # noqa: E402
from factory.generate.pipeline import SuiteGenerator, candidate_seed  # noqa: E402
from factory.generate.procedural import ProceduralBackend  # noqa: E402
from factory.generate.taxonomy import load_taxonomy, parse_taxonomy  # noqa: E402
from factory.quality.dedup import DedupIndex  # noqa: E402
from factory.runtime import DockerRuntime, new_run_id  # noqa: E402


def run_suite(taxonomy, text: str, out: Path, jobs: int, backends, repair_rounds: int = 0):
    runtime = DockerRuntime(new_run_id("bench"), pool_size=16)
    started = time.perf_counter()
    try:
        manifest = SuiteGenerator(
            taxonomy, text, out, runtime, backends, jobs=jobs, repair_rounds=repair_rounds
        ).run()
    finally:
        runtime.close()
    return manifest, time.perf_counter() - started


def report_suite(label: str, manifest, wall: float) -> None:
    t = manifest.totals
    outcomes = Counter()
    for leaf in manifest.coverage:
        outcomes.update(leaf.outcomes)
    print(f"\n## {label}")
    print("| measure | value |\n|---|---|")
    print(f"| tasks (valid / quota) | {int(t['valid'])} / {int(t['quota'])} |")
    print(f"| candidates | {int(t['candidates'])} |")
    print(f"| yield (valid / candidates) | {t['yield']:.1%} |")
    print(f"| wall time | {wall:.0f} s ({wall / 60:.1f} min) |")
    print(f"| tasks / minute | {60 * t['valid'] / wall:.2f} |")
    print(f"| leaves complete | {int(t['leaves_complete'])} / {int(t['leaves'])} |")
    print(f"| outcomes | {', '.join(f'{k}={v}' for k, v in sorted(outcomes.items()))} |")
    if t.get("llm_tokens"):
        print(f"| LLM tokens | {int(t['llm_tokens'])} |")


def diversity(n: int, threshold: float) -> None:
    large = load_taxonomy(REPO / "examples" / "taxonomy-large.yaml")
    leaves = list(large.leaves())
    backend = ProceduralBackend("diversity")
    index = DedupIndex()
    exact = near = 0
    for i in range(n):
        leaf = leaves[i % len(leaves)]
        attempt = i // len(leaves)
        plan = leaf.difficulty_plan()
        seed = candidate_seed(large.seed, leaf.path, attempt)
        spec, _ = backend.make(leaf, plan[attempt % len(plan)], seed, f"d-{i:04d}")
        text = spec.instruction + "\n" + spec.text_of("tests/")
        hit = index.check_and_add(spec.id, spec.content_hash(), text, threshold)
        if hit is not None:
            exact += hit[1] >= 1.0
            near += hit[1] < 1.0
    distinct = n - exact - near
    print(
        f"\n## diversity ({n} candidates over {len(leaves)} leaves of taxonomy-large, threshold {threshold})"
    )
    print("| measure | value |\n|---|---|")
    print(f"| exact duplicates | {exact} |")
    print(f"| near-duplicates | {near} |")
    print(f"| distinct per 100 generated | {100 * distinct / n:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taxonomy", type=Path, default=REPO / "examples" / "taxonomy.yaml")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--diversity", type=int, default=100)
    parser.add_argument("--skip-procedural", action="store_true")
    parser.add_argument("--llm-base-url")
    parser.add_argument("--llm-model")
    parser.add_argument("--llm-candidates", type=int, default=8)
    parser.add_argument("--llm-max-output", type=int, default=1500)
    args = parser.parse_args()

    taxonomy = load_taxonomy(args.taxonomy)
    text = args.taxonomy.read_text()
    if not args.skip_procedural:
        with tempfile.TemporaryDirectory() as tmp:
            backends = backend_factory(
                taxonomy, BackendChoice.PROCEDURAL, LlmOptions(None, None, "")
            )
            manifest, wall = run_suite(taxonomy, text, Path(tmp) / "suite", args.jobs, backends)
        report_suite(f"procedural: {args.taxonomy.name}, --jobs {args.jobs}", manifest, wall)
    diversity(args.diversity, taxonomy.defaults.dedup_threshold)
    if args.llm_base_url and args.llm_model:
        for rounds in (0, 2):
            llm_tax = parse_taxonomy(
                {
                    "suite": "llm-bench",
                    "seed": 1,
                    "defaults": {"quota": args.llm_candidates, "attempts_per_task": 1},
                    "domains": [
                        {
                            "name": "terminal",
                            "categories": [
                                {
                                    "name": "mixed",
                                    "skills": [
                                        {
                                            "name": "free",
                                            "generator": "llm",
                                            "params": {"topic": "text and log processing"},
                                        },
                                        {
                                            "name": "flag",
                                            "generator": "llm",
                                            "params": {"mode": "hidden-flag"},
                                        },
                                    ],
                                }
                            ],
                        }
                    ],
                }
            )
            with tempfile.TemporaryDirectory() as tmp:
                options = LlmOptions(
                    args.llm_base_url,
                    args.llm_model,
                    "not-needed",
                    cache_dir=None,
                    max_output_tokens=args.llm_max_output,
                    parse_repairs=rounds,
                )
                backends = backend_factory(llm_tax, BackendChoice.LLM, options)
                manifest, wall = run_suite(
                    llm_tax, "", Path(tmp) / "suite", args.jobs, backends, repair_rounds=rounds
                )
            report_suite(
                f"LLM backend, model {args.llm_model}, repair rounds {rounds}", manifest, wall
            )


if __name__ == "__main__":
    main()
