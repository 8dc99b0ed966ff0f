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
4. Hybrid (``--hybrid TAXONOMY`` with an endpoint): the same taxonomy, whose leaves use
   ``mode: scenario``, generated twice side by side: procedurally (each family's own
   vocabulary) and hybrid (the model fills the slots); yield, wall time, tokens, distinct
   instruction word 3-grams per task and the pairwise MinHash similarity of the valid tasks'
   instructions. ``--compare-suites PROCEDURAL HYBRID`` reports the same for two suites
   already generated (e.g. by ``factory generate ... --backend procedural`` and without);
   ``--paired HYBRID`` holds everything but the content equal: a hybrid suite's valid tasks
   against the same leaves, seeds and difficulties drafted procedurally (no Docker);
   ``--hybrid-report HYBRID`` lists a hybrid suite's outcomes, the reason of each rejection,
   tokens and how many slots the model filled in the valid tasks (no Docker).
5. Dedup scaling: the cost of one insert+query (and of one signature) in the near-duplicate
   index at 1k, 10k and 100k kept tasks (synthetic task-like texts, a tenth of them edited
   copies of earlier ones), the LSH index (factory.quality.dedup) side by side with the
   pure-Python all-pairs scan it replaced, and how often the two agree.
   ``--only-dedup`` runs just this part (no Docker).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dedup_scaling import dedup_scaling  # noqa: E402  (bench/, this script's folder)

from factory.generate.backends import BackendChoice, LlmOptions, backend_factory  # noqa: E402
from factory.generate.pipeline import SuiteGenerator, candidate_seed  # noqa: E402
from factory.generate.procedural import ProceduralBackend  # noqa: E402
from factory.generate.results import SuiteManifest  # noqa: E402
from factory.generate.taxonomy import Difficulty, load_taxonomy, parse_taxonomy  # noqa: E402
from factory.processes import sigterm_as_ctrl_c  # noqa: E402
from factory.quality.dedup import DedupIndex, signature, similarity  # noqa: E402
from factory.runtime import DockerRuntime, new_run_id  # noqa: E402
from factory.tasks.model import load_task_config  # noqa: E402


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


# --- hybrid vs procedural ------------------------------------------------------------------


def instruction_diversity(suite: Path) -> dict[str, float]:
    """:func:`text_diversity` of a suite's valid tasks' instructions."""
    return text_diversity(
        [p.read_text() for p in sorted((suite / "tasks").glob("*/instruction.md"))]
    )


def text_diversity(texts: list[str]) -> dict[str, float]:
    """Distinct word 3-grams per text, and the distribution of pairwise MinHash similarity."""
    grams: set[tuple[str, ...]] = set()
    for text in texts:
        words = re.findall(r"[a-z0-9]+", text.lower())
        grams.update(zip(words, words[1:], words[2:], strict=False))
    sigs = [signature(text) for text in texts]
    pairs = sorted(
        similarity(sigs[i], sigs[j]) for i in range(len(sigs)) for j in range(i + 1, len(sigs))
    )

    def q(share: float) -> float:
        return pairs[min(len(pairs) - 1, int(share * len(pairs)))] if pairs else float("nan")

    return {
        "tasks": len(texts),
        "grams_per_task": len(grams) / len(texts) if texts else 0.0,
        "sim_median": q(0.5),
        "sim_p90": q(0.9),
        "sim_max": pairs[-1] if pairs else float("nan"),
    }


def compare_suites(procedural: Path, hybrid: Path, walls: tuple[float, float] | None) -> None:
    """Side by side: yield, wall time, tokens and instruction diversity of two suites."""
    rows = []
    for suite, wall in zip((procedural, hybrid), walls or (None, None), strict=True):
        manifest = SuiteManifest.model_validate_json((suite / "suite.json").read_text())
        t = manifest.totals
        rows.append((t, wall, instruction_diversity(suite)))
    print(f"\n## hybrid vs procedural ({procedural.name} / {hybrid.name})")
    print("| measure | procedural | hybrid |\n|---|---|---|")
    (tp, wp, dp), (th, wh, dh) = rows
    print(f"| candidates | {int(tp['candidates'])} | {int(th['candidates'])} |")
    print(f"| valid | {int(tp['valid'])} | {int(th['valid'])} |")
    print(f"| yield (valid / candidates) | {tp['yield']:.1%} | {th['yield']:.1%} |")
    if walls:
        print(f"| wall time | {wp:.0f} s | {wh:.0f} s |")
    print(f"| LLM tokens | {int(tp.get('llm_tokens', 0))} | {int(th.get('llm_tokens', 0))} |")
    print(
        f"| distinct instruction 3-grams per task | {dp['grams_per_task']:.1f} "
        f"| {dh['grams_per_task']:.1f} |"
    )
    for key, label in (("sim_median", "median"), ("sim_p90", "p90"), ("sim_max", "max")):
        print(f"| pairwise MinHash similarity, {label} | {dp[key]:.3f} | {dh[key]:.3f} |")


def paired_procedural(hybrid: Path) -> None:
    """The valid tasks of a hybrid suite against the same leaves, seeds and difficulties
    drafted from each family's own vocabulary (rendered only, no Docker): what the model's
    content changes in the instructions, with everything else held equal."""
    taxonomy = load_taxonomy(hybrid / "taxonomy.yaml")
    leaves = {leaf.path: leaf for leaf in taxonomy.leaves()}
    backend = ProceduralBackend(taxonomy.suite)
    mine, theirs = [], []
    for task in sorted((hybrid / "tasks").iterdir()):
        provenance = load_task_config(task / "task.toml").provenance
        difficulty = Difficulty(load_task_config(task / "task.toml").metadata["difficulty"])
        leaf = leaves[provenance.taxonomy_path]
        spec, _ = backend.make(leaf, difficulty, provenance.seed, task.name)
        mine.append((task / "instruction.md").read_text())
        theirs.append(spec.instruction)
    rows = text_diversity(theirs), text_diversity(mine)
    print(f"\n## paired: {len(mine)} valid hybrid tasks of {hybrid.name} vs the same seeds drafted")
    print("| measure | procedural | hybrid |\n|---|---|---|")
    print(
        f"| distinct instruction 3-grams per task | {rows[0]['grams_per_task']:.1f} | {rows[1]['grams_per_task']:.1f} |"
    )
    for key, label in (("sim_median", "median"), ("sim_p90", "p90"), ("sim_max", "max")):
        print(f"| pairwise MinHash similarity, {label} | {rows[0][key]:.3f} | {rows[1][key]:.3f} |")


def hybrid_report(suites: list[Path]) -> None:
    """Hybrid suites' yield, all together, as their journals record it: every candidate's outcome and the
    reason of each rejection, the families, tokens, seconds, and for the valid tasks how many
    of their families' slots the model filled (the rest were drafted from the family's own
    content, see the provenance notes)."""
    import json

    from factory.families import registry

    results = [
        {**json.loads(p.read_text()), "suite": suite}
        for suite in suites
        for p in sorted((suite / "results").glob("*.json"))
    ]
    outcomes = Counter(r["outcome"] for r in results)
    valid = [r for r in results if r["outcome"] == "valid"]
    families = sorted({r["generator"] for r in results})
    certified = sorted({r["generator"] for r in valid})
    prompt = sum(r["llm"]["prompt_tokens"] for r in results)
    completion = sum(r["llm"]["completion_tokens"] for r in results)
    calls = sum(r["llm"]["calls"] + r["llm"]["cached_calls"] for r in results)
    seconds = sum(r["timings"].get("total", 0.0) for r in results)
    own = filled = framing = framing_filled = unparsed = 0
    fallbacks: Counter[str] = Counter()
    notes: list[str] = []
    for r in valid:
        provenance = load_task_config(r["suite"] / r["path"] / "task.toml").provenance
        slots = registry.get(r["generator"]).slots
        names = list(slots.model_fields) if slots else []
        for name in names:
            if name in ("scenario", "persona"):
                framing += 1
                framing_filled += name in provenance.slots
            else:
                own += 1
                filled += name in provenance.slots
            if name not in provenance.slots:
                fallbacks[f"{r['generator']}.{name}"] += 1
        notes += [
            f"{r['suite'].name}/{r['id']}: {n}" for n in provenance.notes if n.startswith("slot ")
        ]
        unparsed += sum(
            int(n.rsplit(" ", 1)[1])
            for n in provenance.notes
            if n.startswith("replies that were no JSON object: ")
        )
    print(f"\n## hybrid yield: {', '.join(suite.name for suite in suites)}")
    print("| measure | value |\n|---|---|")
    print(f"| candidates | {len(results)} over {len(families)} families |")
    print(f"| valid | {len(valid)} ({len(valid) / max(1, len(results)):.1%}) |")
    print(f"| outcomes | {', '.join(f'{k}={v}' for k, v in sorted(outcomes.items()))} |")
    print(f"| unparseable candidates | {outcomes.get('unparseable', 0)} |")
    print(f"| replies that did not parse, in valid tasks | {unparsed} |")
    print(f"| families certified | {len(certified)}: {', '.join(certified)} |")
    print(f"| LLM completions | {calls} |")
    print(f"| LLM tokens (prompt + completion) | {prompt} + {completion} = {prompt + completion} |")
    print(f"| candidate seconds (sum of journal totals) | {seconds:.0f} |")
    print(f"| family slots the model filled, valid tasks | {filled} / {own} |")
    print(f"| scenario + persona the model filled, valid tasks | {framing_filled} / {framing} |")
    if fallbacks:
        print(
            "| slots drafted from the family's own content | "
            + ", ".join(f"{k} x{v}" for k, v in sorted(fallbacks.items()))
            + " |"
        )
    rejected = [r for r in results if r["outcome"] != "valid"]
    if rejected:
        print("\nRejections:")
        for r in rejected:
            print(
                f"- {r['suite'].name}/{r['id']} ({r['generator']}, {r['difficulty']}): "
                f"{r['outcome']}: {r['reason'][:300]}"
            )
    if notes:
        print("\nFallback notes:")
        for note in notes:
            print(f"- {note[:300]}")


def hybrid_dry_run(path: Path, options: LlmOptions, seed: int | None) -> None:
    """The content stage of a hybrid taxonomy without Docker: every candidate the pipeline
    would make (same ids, seeds and difficulties, ``attempts_per_task`` per quota slot), its
    content asked of the model and the task drafted and rendered, not certified. Outcomes,
    slots the model filled, tokens and seconds."""
    from factory.families import registry
    from factory.generate.pipeline import GenerationError, candidate_id
    from factory.generate.scenario import ScenarioBackend

    taxonomy = load_taxonomy(path)
    suite_seed = taxonomy.seed if seed is None else seed
    backend = ScenarioBackend(
        options.client(),
        taxonomy.suite,
        temperature=options.temperature,
        parse_repairs=options.parse_repairs,
    )
    outcomes: Counter[str] = Counter()
    tokens = own = filled = 0
    started = time.perf_counter()
    print(f"\n## hybrid dry run: {path.name}, seed {suite_seed}")
    for leaf in taxonomy.leaves():
        plan = leaf.difficulty_plan()
        slots = registry.get(leaf.skill.generator).slots
        names = [
            n for n in (slots.model_fields if slots else {}) if n not in ("scenario", "persona")
        ]
        for attempt in range(leaf.quota):
            difficulty = plan[attempt % len(plan)]
            task_id = candidate_id(leaf, attempt)
            seed_ = candidate_seed(suite_seed, leaf.path, attempt)
            try:
                spec, usage = backend.make(leaf, difficulty, seed_, task_id)
            except GenerationError as exc:
                outcomes[exc.outcome.value] += 1
                tokens += exc.usage.prompt_tokens + exc.usage.completion_tokens
                print(f"- {task_id} {difficulty.value}: {exc.outcome.value}: {exc}"[:400])
                continue
            outcomes["built"] += 1
            tokens += usage.prompt_tokens + usage.completion_tokens
            got = spec.config.provenance.slots
            own += len(names)
            filled += sum(n in got for n in names)
            missing = [n for n in slots.model_fields if n not in got] if slots else []
            print(
                f"- {task_id} {difficulty.value}: built, {usage.calls} completions, "
                f"model slots {got}" + (f", family's own: {missing}" if missing else "")
            )
    print(f"| outcomes | {', '.join(f'{k}={v}' for k, v in sorted(outcomes.items()))} |")
    print(f"| LLM tokens | {tokens} |")
    print(f"| family slots the model filled, built tasks | {filled} / {own} |")
    print(f"| wall | {time.perf_counter() - started:.0f} s |")


def hybrid_bench(path: Path, jobs: int, options: LlmOptions) -> None:
    taxonomy = load_taxonomy(path)
    text = path.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        suites, walls = [], []
        for label, choice in (("procedural", BackendChoice.PROCEDURAL), ("hybrid", None)):
            backends = backend_factory(taxonomy, choice, options)
            out = Path(tmp) / label
            _, wall = run_suite(taxonomy, text, out, jobs, backends, repair_rounds=1)
            suites.append(out)
            walls.append(wall)
        compare_suites(suites[0], suites[1], (walls[0], walls[1]))


def _endpoint_options(args: argparse.Namespace, **extra) -> LlmOptions:
    """The LLM options of the endpoint named by ``--llm-base-url`` and ``--llm-model`` (no API
    key, no response cache), with ``extra`` settings."""
    return LlmOptions(args.llm_base_url, args.llm_model, "not-needed", cache_dir=None, **extra)


def main() -> None:
    sigterm_as_ctrl_c()  # a killed run still removes its containers
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taxonomy", type=Path, default=REPO / "examples" / "taxonomy.yaml")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--diversity", type=int, default=100)
    parser.add_argument("--skip-procedural", action="store_true")
    parser.add_argument(
        "--only-dedup", action="store_true", help="run only the dedup scaling part (no Docker)"
    )
    parser.add_argument(
        "--dedup-sizes", default="1000,10000,100000", help="kept-task counts, comma-separated"
    )
    parser.add_argument("--llm-base-url")
    parser.add_argument("--llm-model")
    parser.add_argument("--llm-candidates", type=int, default=8)
    parser.add_argument("--llm-max-output", type=int, default=1500)
    parser.add_argument(
        "--hybrid", type=Path, help="a taxonomy of mode: scenario leaves (needs an endpoint)"
    )
    parser.add_argument(
        "--compare-suites",
        nargs=2,
        type=Path,
        metavar=("PROCEDURAL", "HYBRID"),
        help="only compare two generated suites (no Docker)",
    )
    parser.add_argument(
        "--paired",
        type=Path,
        metavar="HYBRID",
        help="a hybrid suite's valid tasks vs the same seeds drafted procedurally (no Docker)",
    )
    parser.add_argument(
        "--hybrid-report",
        type=Path,
        nargs="+",
        metavar="HYBRID",
        help="a hybrid suite's yield, rejections, tokens and slots the model filled (no Docker)",
    )
    parser.add_argument(
        "--hybrid-dry-run",
        type=Path,
        metavar="TAXONOMY",
        help="the content stage of a hybrid taxonomy: ask, draft, render; no Docker",
    )
    parser.add_argument("--seed", type=int, help="--hybrid-dry-run: override the taxonomy's seed")
    parser.add_argument(
        "--repair-rounds", type=int, default=1, help="--hybrid-dry-run: times content goes back"
    )
    args = parser.parse_args()
    if args.hybrid_dry_run:
        if not (args.llm_base_url and args.llm_model):
            parser.error("--hybrid-dry-run needs --llm-base-url and --llm-model")
        options = _endpoint_options(args, parse_repairs=args.repair_rounds)
        hybrid_dry_run(args.hybrid_dry_run, options, args.seed)
        return
    if args.hybrid_report:
        hybrid_report(args.hybrid_report)
        return
    if args.paired:
        paired_procedural(args.paired)
        return
    if args.compare_suites:
        compare_suites(*args.compare_suites, None)
        return
    if args.hybrid:
        if not (args.llm_base_url and args.llm_model):
            parser.error("--hybrid needs --llm-base-url and --llm-model")
        options = _endpoint_options(args)
        hybrid_bench(args.hybrid, args.jobs, options)
        return

    taxonomy = load_taxonomy(args.taxonomy)
    text = args.taxonomy.read_text()
    sizes = [int(size) for size in args.dedup_sizes.split(",")]
    if args.only_dedup:
        dedup_scaling(sizes, taxonomy.defaults.dedup_threshold)
        return
    if not args.skip_procedural:
        with tempfile.TemporaryDirectory() as tmp:
            backends = backend_factory(
                taxonomy, BackendChoice.PROCEDURAL, LlmOptions(None, None, "")
            )
            manifest, wall = run_suite(taxonomy, text, Path(tmp) / "suite", args.jobs, backends)
        report_suite(f"procedural: {args.taxonomy.name}, --jobs {args.jobs}", manifest, wall)
    diversity(args.diversity, taxonomy.defaults.dedup_threshold)
    dedup_scaling(sizes, taxonomy.defaults.dedup_threshold)
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
                options = _endpoint_options(
                    args, max_output_tokens=args.llm_max_output, parse_repairs=rounds
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
