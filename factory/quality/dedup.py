"""Near-duplicate detection: MinHash over word shingles of instruction + tests.

Two tasks whose estimated Jaccard similarity exceeds the taxonomy's ``dedup_threshold`` are
near-duplicates; exact duplicates are caught earlier by content hash.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
from dataclasses import dataclass, field

NUM_PERM = 128
SHINGLE = 5
_PRIME = (1 << 61) - 1
_rng = random.Random(0x5EED)
_A = [_rng.randrange(1, _PRIME) for _ in range(NUM_PERM)]
_B = [_rng.randrange(0, _PRIME) for _ in range(NUM_PERM)]
_TOKEN = re.compile(r"[A-Za-z_]+|\d+|[^\sA-Za-z_\d]")


def shingles(text: str, k: int = SHINGLE) -> set[int]:
    tokens = _TOKEN.findall(text.lower())
    if len(tokens) < k:
        tokens = tokens + [""] * (k - len(tokens))
    return {
        int.from_bytes(
            hashlib.blake2b(" ".join(tokens[i : i + k]).encode(), digest_size=8).digest(), "big"
        )
        for i in range(len(tokens) - k + 1)
    }


def signature(text: str) -> tuple[int, ...]:
    values = shingles(text)
    return tuple(min((a * v + b) % _PRIME for v in values) for a, b in zip(_A, _B, strict=True))


def similarity(left: tuple[int, ...], right: tuple[int, ...]) -> float:
    return sum(x == y for x, y in zip(left, right, strict=True)) / NUM_PERM


@dataclass
class DedupIndex:
    """Accepted tasks' signatures; thread-safe."""

    signatures: dict[str, tuple[int, ...]] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check_and_add(
        self, task_id: str, content_hash: str, text: str, threshold: float
    ) -> tuple[str, float] | None:
        """None when the task is new (and it is added); else (closest id, similarity)."""
        sig = signature(text)
        with self._lock:
            if content_hash in self.hashes:
                return self.hashes[content_hash], 1.0
            best = max(
                ((other, similarity(sig, s)) for other, s in self.signatures.items()),
                key=lambda item: item[1],
                default=None,
            )
            if best is not None and best[1] >= threshold:
                return best
            self.signatures[task_id] = sig
            self.hashes[content_hash] = task_id
            return None
