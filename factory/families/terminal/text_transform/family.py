"""text-transform: turn a fixed-width report into CSV (:mod:`.report`; hard: :mod:`.hard`) or
apply a change list to a set of configuration files (:mod:`.config`), exactly as specified."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.terminal.import_job import ImportJob, Wiring, reachable_folder
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.text_tasks import (
    OUT_DIRS,
    csv_text,
    sha256_hex,
    text_draft,
)
from factory.vocabulary import Difficulty

from .config import (
    TT_CONFIG_BUGS,
    apply_changes,
    draw_config,
    render_config,
)
from .hard import TT_HARD_FAULTS, TT_TRAPS, prep, stored_files
from .report import (
    TT_REPORT_BUGS,
    draw_report,
    parse_report,
)

TT_BUG_NOTES = {
    "split-on-spaces": "splits rows on whitespace (awk style) instead of by character position",
    "no-trim": "cuts the columns but keeps the padding spaces",
    "keep-ruler": "treats the ruler line as a data row",
    "date-order": "reads the date with day and month swapped",
    "keep-page-headers": "treats every non-blank line after the first ruler as a data row",
    "no-quoting": "joins fields with commas without CSV quoting",
    "amount-sign": "drops the parentheses of negative amounts, losing the sign",
    "substring": "replaces the name as a substring everywhere (sed s/old/new/g)",
    "first-only": "renames only the first occurrence",
    "reserialize": "rewrites the file with configparser (comments and layout lost)",
    "all-sections": "sets the value in every section, not only the one asked",
    "touch-comments": "also rewrites commented-out settings",
    "touch-backups": "also edits the backup/example files",
}


def _tt_expected_rows(r: dict[str, Any]) -> list[list[str]]:
    spec = r["spec"]
    rows = [[c["name"] for c in spec["out_cols"]]]
    for rec in r["records"]:
        row = []
        for c in spec["out_cols"]:
            value = rec[c["src"]]
            if c["kind"] == "date" and spec["level"] != "easy":
                a, b, y = re.split(r"[./-]", value)
                d, m = (b, a) if spec["date_format"] == "mdy-slash" else (a, b)
                value = f"{y}-{m}-{d}"
            elif c["kind"] == "amount" and spec["level"] == "hard":
                sign = "-" if value.startswith("(") else ""
                value = sign + value.strip("()").replace(",", "")
            row.append(value)
        rows.append(row)
    return rows


@register
class TextTransform(Family):
    """sed/awk-style rewriting. Either a fixed-width report to convert to CSV (easy: same
    columns, trimmed; medium: pages with repeated headers, chosen columns, dates rewritten;
    hard: CSV quoting, accounting amounts, empty cells, annotations), or INI-style config
    files to edit in place (easy: rename a key in one file; medium: rename across files and
    set a value in one section only; hard: commented-out look-alikes, inline comments,
    spacing variants, a key to delete and backup files that must stay untouched). Hard draws
    the report only, composed with two to four sub-problems (:mod:`.hard`): first pages rotated
    into a gzip file, rows padded with tabs, an export in UTF-16 (unannounced), and the CSV's
    import job (:mod:`..import_job`)."""

    name = "text-transform"
    title = "Reformat a fixed-width report or edit config files in place, preserving layout"
    category = "text-processing"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = difficulty
        hard = level is Difficulty.HARD
        outdir = rng.choice(OUT_DIRS)
        faults: list[str] = []
        if hard:  # the report, with two to four sub-problems (see :mod:`.hard`)
            shape = "report"
            faults = sorted(rng.sample(TT_HARD_FAULTS, rng.randint(2, 4)))
            outdir = reachable_folder(rng, outdir, OUT_DIRS)
        else:
            shape = "config" if rng.random() < 0.5 else "report"
        wiring = Wiring.none()
        if shape == "report":
            bugs = TT_REPORT_BUGS[level.value]
            for _ in range(40):
                r = draw_report(rng, level)
                expected = _tt_expected_rows(r)
                if parse_report(r["text"], r["spec"]) == expected and all(
                    parse_report(r["text"], r["spec"], b) != expected for b in bugs
                ):
                    break
            else:  # pragma: no cover
                raise RuntimeError("text-transform: could not draw a report exposing every bug")
            srcdir = rng.choice(["/srv/legacy/exports", "/data/mainframe", "/opt/reports/in"])
            stem = f"{r['dataset']}_{rng.choice(['q1', 'q3', 'weekly', 'eom', '2024'])}"
            context = {
                "shape": shape,
                "src": f"{srcdir}/{stem}.txt",
                "srcdir": srcdir,
                "outdir": outdir,
                "out": f"{outdir}/{stem}.csv",
                "columns": r["src_cols"],
                "out_cols": r["spec"]["out_cols"],
                "date_format_doc": r["date_format_doc"],
                "title": r["spec"]["title"],
                "spec": r["spec"],
                "expected": expected,
                "digests": {f"{srcdir}/{stem}.txt": sha256_hex(r["text"])},
            }
            files: dict[str, str | bytes] = {f"environment/data/{stem}.txt": r["text"]}
            outputs = [context["out"]]
            secret = csv_text(expected)
            if hard:
                src = context["src"]
                stored = stored_files(rng, r["text"], r["spec"], expected, faults)
                files = {f"environment/data/{stem}.txt{k}": v for k, v in stored.items()}
                context["digests"] = {f"{src}{k}": sha256_hex(v) for k, v in sorted(stored.items())}
                header = csv_text(expected[:1]).rstrip("\n")
                job = ImportJob.draw(rng, r["dataset"], context["out"], header, faults)
                work = f"/tmp/{stem}.txt"
                context.update(
                    hard=True,
                    faults=faults,
                    job=job.context(),
                    work=work,
                    prep=prep(src, work, faults),
                )
                unfixed = near_misses(
                    self,
                    context,
                    faults,
                    each=lambda f: {"prep": prep(src, work, faults, f)},
                    difficulty=level.value,
                )
                wiring = job.wire(faults, TT_TRAPS, unfixed)
                files.update(job.files())
            kept = sorted(context["digests"])
        else:
            bugs = TT_CONFIG_BUGS[level.value]
            for _ in range(40):
                cfg = draw_config(rng, level)
                paths = [f"{cfg['dir']}/{c.name}" for c in cfg["cfgs"]]
                expected_files = {
                    p: apply_changes(cfg, c) for p, c in zip(paths, cfg["cfgs"], strict=True)
                }
                originals = {
                    p: render_config(c.items) for p, c in zip(paths, cfg["cfgs"], strict=True)
                }
                # (reserialize always differs: every file has comments, configparser drops them)
                if all(
                    {p: apply_changes(cfg, c, b) for p, c in zip(paths, cfg["cfgs"], strict=True)}
                    != expected_files
                    for b in bugs
                    if b != "reserialize"
                ):
                    break
            else:  # pragma: no cover
                raise RuntimeError("text-transform: could not draw configs exposing every bug")
            changed = [p for p in expected_files if expected_files[p] != originals[p]]
            context = {
                "shape": shape,
                "app": cfg["app"],
                "dir": cfg["dir"],
                "live": [c.name for c in cfg["cfgs"] if c.live],
                "others": [c.name for c in cfg["cfgs"] if not c.live],
                **{k: cfg[k] for k in ("old", "new", "k3", "s3", "v3", "k4", "s4")},
                "expected": expected_files,
                "outdir": outdir,
            }
            files = {
                f"environment/conf/{c.name}": originals[f"{cfg['dir']}/{c.name}"]
                for c in cfg["cfgs"]
            }
            outputs = changed
            # the tests compare every file, the unchanged ones (backups, look-alikes) too
            kept = sorted(p for p in expected_files if p not in changed)
            secret = "".join(expected_files[p] for p in changed)
        context["bugs"] = bugs
        context["bug_notes"] = [TT_BUG_NOTES[b] for b in bugs]
        tags = [shape, "sed", "awk"] + (["cron", "encoding"] if hard else [])
        return text_draft(
            self, level, context, files, faults, wiring, [secret], outputs, tags, kept
        )
