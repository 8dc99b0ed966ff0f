"""Near-duplicate detection: MinHash over word shingles of instruction + tests, indexed with
locality-sensitive hashing (datasketch's ``MinHash`` and ``MinHashLSH``).

Two tasks whose estimated Jaccard similarity (the share of equal signature values) reaches the
taxonomy's ``dedup_threshold`` are near-duplicates; exact duplicates are caught first by content
hash. A lookup asks the LSH index for candidates and compares the new task with those only, so
its cost does not grow with the number of kept tasks at usual thresholds (0.8 and up).

No duplicate is missed: the bands are chosen so that two signatures similar enough to count
must agree on a whole band (:func:`band_params`, a pigeonhole argument), and every candidate is
then compared on the full signature. So the verdict is the one an exhaustive scan gives.

Deterministic: fixed permutations (seed), SHA-1 shingle hashes, ties broken by task id.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass, field

import numpy as np
from datasketch import LeanMinHash, MinHash, MinHashLSH

NUM_PERM = 128
SHINGLE = 5
SEED = 0x5EED
SCHEME = "affine32"
_TOKEN = re.compile(r"[A-Za-z_]+|\d+|[^\sA-Za-z_\d]")
_TEMPLATE = MinHash(num_perm=NUM_PERM, seed=SEED, scheme=SCHEME)


def shingles(text: str, k: int = SHINGLE) -> set[bytes]:
    """The text's k-token shingles (lower-cased words, numbers and punctuation marks)."""
    tokens = _TOKEN.findall(text.lower())
    if len(tokens) < k:
        tokens = tokens + [""] * (k - len(tokens))
    return {" ".join(tokens[i : i + k]).encode() for i in range(len(tokens) - k + 1)}


def signature(text: str) -> LeanMinHash:
    """The MinHash signature of the text's shingles."""
    minhash = MinHash(
        num_perm=NUM_PERM, seed=SEED, scheme=SCHEME, permutations=_TEMPLATE.permutations
    )
    minhash.update_batch(list(shingles(text)))
    return LeanMinHash(minhash)


def similarity(left: MinHash, right: MinHash) -> float:
    """Estimated Jaccard similarity of two signatures."""
    return float(np.count_nonzero(left.hashvalues == right.hashvalues)) / NUM_PERM


def band_params(threshold: float, num_perm: int = NUM_PERM) -> tuple[int, int]:
    """(bands, rows per band) such that two signatures with similarity >= ``threshold`` agree
    on at least one whole band: they differ in at most ``m`` positions, and ``m + 1`` disjoint
    bands cannot all hold one of them. High thresholds give few wide bands (few candidates);
    at 0.5 and below every band is one row and the index degenerates to a full scan."""
    needed = math.ceil(threshold * num_perm - 1e-9)
    mismatches = num_perm - needed
    bands = min(num_perm, mismatches + 1)
    return bands, num_perm // bands


@dataclass
class DedupIndex:
    """Accepted tasks' signatures with one LSH index per threshold in use; thread-safe."""

    signatures: dict[str, LeanMinHash] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    _indexes: dict[float, MinHashLSH] = field(default_factory=dict, repr=False)
    _matrix: np.ndarray = field(
        default_factory=lambda: np.zeros((64, NUM_PERM), dtype=_TEMPLATE.hashvalues.dtype),
        repr=False,
    )
    """Row i: the signature of the i-th kept task (candidates are compared in one step)."""
    _rows: dict[str, int] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check_and_add(
        self, task_id: str, content_hash: str, text: str, threshold: float
    ) -> tuple[str, float] | None:
        """None when the task is new (and it is added); else (closest id, similarity)."""
        return self.check_and_add_signature(task_id, content_hash, signature(text), threshold)

    def check_and_add_signature(
        self, task_id: str, content_hash: str, sig: LeanMinHash, threshold: float
    ) -> tuple[str, float] | None:
        """:meth:`check_and_add` for a text already signed with :func:`signature`."""
        with self._lock:
            if content_hash in self.hashes:
                return self.hashes[content_hash], 1.0
            best = self._closest(sig, threshold)
            if best is not None and best[1] >= threshold:
                return best
            self._keep(task_id, content_hash, sig)
            return None

    def _closest(self, sig: LeanMinHash, threshold: float) -> tuple[str, float] | None:
        candidates = sorted(self._index(threshold).query(sig))
        if not candidates:
            return None
        rows = self._matrix[[self._rows[c] for c in candidates]]
        equal = np.count_nonzero(rows == sig.hashvalues, axis=1)
        best = int(np.argmax(equal))  # the first of the best: the smallest id
        return candidates[best], float(equal[best]) / NUM_PERM

    def _keep(self, task_id: str, content_hash: str, sig: LeanMinHash) -> None:
        row = len(self._rows)
        if row == len(self._matrix):
            self._matrix = np.concatenate([self._matrix, np.zeros_like(self._matrix)])
        self._matrix[row] = sig.hashvalues
        self._rows[task_id] = row
        self.signatures[task_id] = sig
        self.hashes[content_hash] = task_id
        for index in self._indexes.values():
            index.insert(task_id, sig, check_duplication=False)

    def _index(self, threshold: float) -> MinHashLSH:
        """The LSH index banded for ``threshold`` (built from every kept task on first use)."""
        index = self._indexes.get(threshold)
        if index is None:
            index = MinHashLSH(num_perm=NUM_PERM, params=band_params(threshold))
            for other, sig in self.signatures.items():
                index.insert(other, sig, check_duplication=False)
            self._indexes[threshold] = index
        return index
