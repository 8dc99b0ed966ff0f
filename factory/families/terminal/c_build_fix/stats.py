"""The statistics a c-build-fix project's modules compute: each one's C body (and whether it
needs <math.h>), its labels and its documentation, and its value computed in Python the way
the C code computes it."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, RootModel

from factory.datafiles import load_toml_model
from factory.errors import RecipeError

C_STATS: dict[str, tuple[str, bool]] = {
    # name: (C body, uses sqrt)
    "sum": (
        "    double s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        s += v[i];\n"
        "    return s;\n",
        False,
    ),
    "mean": (
        "    double s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        s += v[i];\n"
        "    return s / (double)n;\n",
        False,
    ),
    "rms": (
        "    double s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        s += v[i] * v[i];\n"
        "    return sqrt(s / (double)n);\n",
        True,
    ),
    "norm": (
        "    double s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        s += v[i] * v[i];\n"
        "    return sqrt(s);\n",
        True,
    ),
    "stddev": (
        "    double m = 0.0, s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        m += v[i];\n"
        "    m /= (double)n;\n    for (size_t i = 0; i < n; i++) {\n"
        "        double d = v[i] - m;\n        s += d * d;\n    }\n"
        "    return sqrt(s / (double)n);\n",
        True,
    ),
    "min": (
        "    double m = v[0];\n    for (size_t i = 1; i < n; i++)\n        if (v[i] < m)\n"
        "            m = v[i];\n    return m;\n",
        False,
    ),
    "max": (
        "    double m = v[0];\n    for (size_t i = 1; i < n; i++)\n        if (v[i] > m)\n"
        "            m = v[i];\n    return m;\n",
        False,
    ),
    "range": (
        "    double lo = v[0], hi = v[0];\n    for (size_t i = 1; i < n; i++) {\n"
        "        if (v[i] < lo)\n            lo = v[i];\n        if (v[i] > hi)\n"
        "            hi = v[i];\n    }\n    return hi - lo;\n",
        False,
    ),
    "median": (
        "    double *c = malloc(n * sizeof *c);\n    double m;\n"
        "    memcpy(c, v, n * sizeof *c);\n    qsort(c, n, sizeof *c, cmp_double);\n"
        "    m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;\n    free(c);\n"
        "    return m;\n",
        False,
    ),
    "absdev": (
        "    double m = 0.0, s = 0.0;\n    for (size_t i = 0; i < n; i++)\n        m += v[i];\n"
        "    m /= (double)n;\n    for (size_t i = 0; i < n; i++)\n"
        "        s += fabs(v[i] - m);\n    return s / (double)n;\n",
        False,
    ),
    "variation": (
        "    double s = 0.0;\n    for (size_t i = 1; i < n; i++)\n"
        "        s += fabs(v[i] - v[i - 1]);\n    return s;\n",
        False,
    ),
}


class _StatNames(BaseModel):
    model_config = ConfigDict(extra="forbid")

    labels: list[str] = Field(min_length=1)
    doc: str


def _load_stat_names() -> dict[str, _StatNames]:
    """stat_names.toml: one entry per statistic of :data:`C_STATS`, no more, no fewer."""
    path = Path(__file__).parent / "stat_names.toml"
    names = load_toml_model(path, RootModel[dict[str, _StatNames]], "statistic names").root
    if set(names) != set(C_STATS):
        odd = sorted(set(names) ^ set(C_STATS))
        raise RecipeError(f"{path}: statistics {odd} are in only one of C_STATS and this file")
    return names


_STAT_NAMES = _load_stat_names()
C_STAT_LABELS = {stat: names.labels for stat, names in _STAT_NAMES.items()}
"""The labels each statistic may be printed under (stat_names.toml)."""
C_STAT_DOCS = {stat: names.doc for stat, names in _STAT_NAMES.items()}
"""The line documenting each statistic in the instruction (stat_names.toml)."""


def uses_math(stat: str) -> bool:
    """Whether the statistic's body calls a <math.h> function (sqrt, fabs)."""
    body = C_STATS[stat][0]
    return "sqrt(" in body or "fabs(" in body


def stat_value(stat: str, v: list[float]) -> float:
    import math

    n = len(v)
    if stat in ("sum", "mean"):
        s = 0.0
        for x in v:
            s += x
        return s if stat == "sum" else s / n
    if stat in ("rms", "norm"):
        s = 0.0
        for x in v:
            s += x * x
        return math.sqrt(s / n) if stat == "rms" else math.sqrt(s)
    if stat in ("stddev", "absdev"):
        m = 0.0
        for x in v:
            m += x
        m /= n
        s = 0.0
        for x in v:
            s += (x - m) * (x - m) if stat == "stddev" else abs(x - m)
        return math.sqrt(s / n) if stat == "stddev" else s / n
    if stat == "min":
        return min(v)
    if stat == "max":
        return max(v)
    if stat == "range":
        return max(v) - min(v)
    if stat == "median":
        c = sorted(v)
        return c[n // 2] if n % 2 else (c[n // 2 - 1] + c[n // 2]) / 2.0
    if stat == "variation":
        s = 0.0
        for i in range(1, n):
            s += abs(v[i] - v[i - 1])
        return s
    raise ValueError(stat)
