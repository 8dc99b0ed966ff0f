"""The statistics a c-build-fix project's modules compute: each one's C body (and whether it
needs <math.h>), its labels and its documentation, and its value computed in Python the way
the C code computes it."""

from __future__ import annotations

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
C_STAT_LABELS = {
    "sum": ["sum", "total"],
    "mean": ["mean", "average", "avg"],
    "rms": ["rms", "quadratic-mean"],
    "norm": ["norm", "length", "l2"],
    "stddev": ["stddev", "sd", "sigma"],
    "min": ["min", "lowest", "minimum"],
    "max": ["max", "highest", "maximum"],
    "range": ["range", "spread"],
    "median": ["median", "middle"],
    "absdev": ["absdev", "mad", "mean-abs-dev"],
    "variation": ["variation", "path", "travel"],
}
C_STAT_DOCS = {
    "sum": "the sum of the values",
    "mean": "the arithmetic mean",
    "rms": "the root mean square, sqrt(sum of squares / count)",
    "norm": "the Euclidean norm, sqrt(sum of squares)",
    "stddev": "the population standard deviation (divide by count)",
    "min": "the smallest value",
    "max": "the largest value",
    "range": "largest minus smallest value",
    "median": "the median (mean of the two middle values for an even count)",
    "absdev": "the mean absolute deviation from the mean",
    "variation": "the sum of |v[i] - v[i-1]| over consecutive values (0 for one value)",
}


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
