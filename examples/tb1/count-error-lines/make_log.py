import random
from pathlib import Path

rng = random.Random(1234)
levels = ["INFO"] * 12 + ["WARN"] * 4 + ["ERROR"] * 3 + ["DEBUG"] * 5
words = ["cache", "request", "user", "db", "timeout", "retry", "queue", "disk"]
lines = []
for i in range(700):
    level = rng.choice(levels)
    msg = " ".join(rng.choice(words) for _ in range(5))
    # Decoys: the word ERROR inside messages of other levels.
    if level != "ERROR" and rng.random() < 0.05:
        msg += " (previous ERROR cleared)"
    lines.append(f"2024-05-{1 + i % 28:02d}T10:{i % 60:02d}:00 [{level}] {msg}")
Path("/app/logs").mkdir(parents=True, exist_ok=True)
Path("/app/logs/service.log").write_text("\n".join(lines) + "\n")
