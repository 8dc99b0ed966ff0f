"""The near-duplicate index at scale: the cost of one insert+query (and of one signature) at
1k, 10k and 100k kept tasks (synthetic task-like texts, a tenth of them edited copies of earlier
ones), the LSH index (factory.quality.dedup) side by side with the pure-Python all-pairs scan it
replaced, and how often the two agree. No Docker.

    .venv/bin/python bench/dedup_scaling.py [--sizes 1000,10000,100000] [--threshold 0.9]

``bench/generate.py`` runs it as its part 5 (``--only-dedup``: just this part).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from factory.generate.taxonomy import Defaults  # noqa: E402
from factory.quality.dedup import DedupIndex, signature  # noqa: E402

_WORDS = (  # noqa: SIM905 - a sentence reads better than 55 quoted words
    "count lines words errors warnings log file directory archive backup user group permission "
    "service port socket config yaml json csv column row header total sum average sort unique "
    "rotate compress extract rename move copy delete find replace pattern match report summary "
    "write read parse validate check fix repair install build test deploy release version tag"
).split()


def synthetic_texts(n: int, seed: int = 7) -> list[str]:
    """n task-like texts (~250 tokens, paths and numbers included); every tenth is a copy of an
    earlier one with 1 to 4 words changed (estimated Jaccard about 0.85 to 0.97: on both sides
    of the usual thresholds)."""
    rng = random.Random(seed)
    texts: list[str] = []
    for i in range(n):
        if i >= 10 and i % 10 == 0:
            words = texts[rng.randrange(i)].split()
            for _ in range(rng.randint(1, 4)):
                words[rng.randrange(len(words))] = rng.choice(_WORDS)
            texts.append(" ".join(words))
            continue
        words = []
        for _ in range(250):
            roll = rng.random()
            if roll < 0.08:
                words.append(f"/app/{rng.choice(_WORDS)}_{rng.randrange(1000)}.txt")
            elif roll < 0.14:
                words.append(str(rng.randrange(100000)))
            else:
                words.append(rng.choice(_WORDS))
        texts.append(" ".join(words))
    return texts


class AllPairsIndex:
    """The index dedup.py had before the LSH one (kept here as the baseline): pure-Python
    MinHash (128 universal hashes over 5-token shingles), each lookup compared with every
    kept signature under the lock."""

    PRIME = (1 << 61) - 1
    TOKEN = re.compile(r"[A-Za-z_]+|\d+|[^\sA-Za-z_\d]")

    def __init__(self) -> None:
        rng = random.Random(0x5EED)
        self.a = [rng.randrange(1, self.PRIME) for _ in range(128)]
        self.b = [rng.randrange(0, self.PRIME) for _ in range(128)]
        self.signatures: dict[str, tuple[int, ...]] = {}

    def signature(self, text: str) -> tuple[int, ...]:
        tokens = self.TOKEN.findall(text.lower())
        tokens += [""] * max(0, 5 - len(tokens))
        values = {
            int.from_bytes(
                hashlib.blake2b(" ".join(tokens[i : i + 5]).encode(), digest_size=8).digest(), "big"
            )
            for i in range(len(tokens) - 4)
        }
        return tuple(
            min((a * v + b) % self.PRIME for v in values)
            for a, b in zip(self.a, self.b, strict=True)
        )

    def check_and_add(self, task_id: str, sig: tuple[int, ...], threshold: float):
        best = max(
            (
                (other, sum(x == y for x, y in zip(sig, s, strict=True)) / 128)
                for other, s in self.signatures.items()
            ),
            key=lambda item: item[1],
            default=None,
        )
        if best is not None and best[1] >= threshold:
            return best
        self.signatures[task_id] = sig
        return None


def _ms(seconds: float) -> str:
    return f"{1000 * seconds:.3f}"


def dedup_scaling(sizes: list[int], threshold: float, probes: int = 50, real: int = 1000) -> None:
    """Insert+query cost at each size, LSH vs all-pairs, in one run (see the module docstring).

    The LSH index is filled for real (every text signed and looked up, as generation does) and
    its last ``probes`` insert+queries are timed. Its verdicts on the first ``real`` texts and
    on the probes are checked against an exhaustive scan over the same signatures (what LSH
    may miss). The all-pairs baseline signs and looks up the first ``real`` texts for real
    (its verdicts are compared too: a different hash family, so estimates near the threshold
    differ); beyond that it is filled with copies of those signatures, since its lookup cost
    depends only on how many it holds (signing 100k texts at its speed would take hours), and
    then timed on the same ``probes`` texts."""
    print(
        f"\n## dedup scaling (threshold {threshold}; median of the last {probes} "
        "insert+queries and signatures)"
    )
    print(
        "| kept tasks | LSH insert+query (ms) | all-pairs insert+query (ms) | ratio "
        "| LSH signature (ms) | all-pairs signature (ms) | LSH = exhaustive scan "
        "| LSH = old index |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size in sizes:
        texts = synthetic_texts(size + probes)
        checked = [*range(min(real, size)), *range(size, size + probes)]
        index = DedupIndex()
        kept = np.zeros((len(texts), 128), dtype=np.uint32)
        kept_ids: list[str] = []
        lsh: dict[str, list[float]] = {"insert": [], "sign": []}
        lsh_verdicts, scan_verdicts = {}, {}
        for i, text in enumerate(texts):
            task_id = f"t{i:07d}"
            start = time.perf_counter()
            sig = signature(text)
            middle = time.perf_counter()
            hit = index.check_and_add_signature(task_id, f"h{i}", sig, threshold)
            if i >= size:
                lsh["insert"].append(time.perf_counter() - middle)
                lsh["sign"].append(middle - start)
            if i < real or i >= size:
                lsh_verdicts[i] = None if hit is None else hit[0]
                same = np.count_nonzero(kept[: len(kept_ids)] == sig.hashvalues, axis=1)
                best = int(np.argmax(same)) if kept_ids else -1
                found = best >= 0 and same[best] / 128 >= threshold
                scan_verdicts[i] = kept_ids[best] if found else None
            if hit is None:
                kept[len(kept_ids)] = sig.hashvalues
                kept_ids.append(task_id)
        baseline = AllPairsIndex()
        old: dict[str, list[float]] = {"insert": [], "sign": []}
        old_verdicts = {}
        filled = min(real, size)
        for i in range(filled):
            hit = baseline.check_and_add(f"t{i:07d}", baseline.signature(texts[i]), threshold)
            old_verdicts[i] = None if hit is None else hit[0]
        pool = list(baseline.signatures.values())
        for i in range(filled, size):
            baseline.signatures[f"t{i:07d}"] = pool[i % len(pool)]
        for i in range(size, size + probes):
            start = time.perf_counter()
            sig = baseline.signature(texts[i])
            middle = time.perf_counter()
            hit = baseline.check_and_add(f"t{i:07d}", sig, threshold)
            old["insert"].append(time.perf_counter() - middle)
            old["sign"].append(middle - start)
            if filled == size:
                old_verdicts[i] = None if hit is None else hit[0]
        scan_same = sum(lsh_verdicts[i] == scan_verdicts[i] for i in checked)
        old_same = sum(lsh_verdicts[i] == verdict for i, verdict in old_verdicts.items())
        duplicates = sum(verdict is not None for verdict in scan_verdicts.values())
        fast, slow = statistics.median(lsh["insert"]), statistics.median(old["insert"])
        print(
            f"| {size:,} | {_ms(fast)} | {_ms(slow)} | {slow / max(fast, 1e-12):.0f}x "
            f"| {_ms(statistics.median(lsh['sign']))} | {_ms(statistics.median(old['sign']))} "
            f"| {scan_same}/{len(checked)} ({duplicates} duplicates) "
            f"| {old_same}/{len(old_verdicts)} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="kept-task counts")
    parser.add_argument(
        "--threshold",
        type=float,
        default=Defaults().dedup_threshold,
        help="near-duplicate Jaccard (default: a taxonomy's)",
    )
    args = parser.parse_args()
    dedup_scaling([int(size) for size in args.sizes.split(",")], args.threshold)


if __name__ == "__main__":
    main()
