"""data-recovery: rebuild a table from a damaged live file, a full backup and a chain of
incremental change logs, and prove it with checksums."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from factory.families.base import Draft, Family, register
from factory.families.terminal.data_recovery.changelog import changelog_draft
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.seed_tree import (
    DAY,
    EPOCH_2022,
    Entry,
    compressed,
    seed_tarball,
    sha256_hex,
    tar_bytes,
    words_text,
)
from factory.families.terminal.state_snapshot import STATE_DIR, snapshot_hook, stat_lines
from factory.families.terminal.traps import load_traps, traps_for
from factory.families.terminal.words import CLEAN_APPS, WORDS, WordTable
from factory.vocabulary import Difficulty

# --- data-recovery -------------------------------------------------------------------------

_WORDS = WordTable(Path(__file__).parent / "words.toml")
CONF_SECTIONS: list[str] = _WORDS["conf_sections"]
CONF_KEYS: list[str] = _WORDS["conf_keys"]


#: Hard (config patches): the sub-problems a task composes (two to four of them), besides the
#: base (a torn live file, a chain of diffs crossing 9 -> 10, some gzipped, checked by SHA256SUMS).
DR_FAULTS = [
    "corrupt-full",  # the newest full backup fails its checksum: start from the older one
    "corrupt-diff",  # a diff of the chain fails its checksum: its offsite copy is intact
    "missing-diff",  # a diff of the chain is gone from the backup folder: only offsite has it
    "bundled-diffs",  # the newest diffs exist only inside a bundle tarball
    "owner",  # the file belongs to the service's account (as the full backups record)
    "mode",  # the file's permission bits in the backups differ from the stub's
    "second-file",  # a second file of the service was lost too: restore it from a full backup
]
#: The unannounced ones: what each is, and the words that would give it away (traps.toml).
DR_TRAPS = load_traps(Path(__file__).parent / "traps.toml", DR_FAULTS)
SERVICE_ACCOUNTS = ["svc", "app", "daemon-user", "runner", "service"]


def _conf_value(rng, key: str) -> str:
    if key in ("host",):
        return f"{rng.choice(WORDS)}.internal"
    if key in ("user",):
        return rng.choice(WORDS)
    if key in ("path",):
        return f"/var/lib/{rng.choice(WORDS)}"
    if key in ("level",):
        return rng.choice(["debug", "info", "warning", "error"])
    if key in ("enabled",):
        return rng.choice(["true", "false"])
    return str(rng.randint(1, 9000))


@register
class DataRecovery(Family):
    """Rebuild a lost file from backups, two kinds picked by the seed.

    patches: a config file from a full backup tarball plus numbered unified diffs (numbering
    crosses 9 -> 10, older diffs already folded into the full backup). Medium: two full
    backups, some diffs gzipped, permission bits to restore. Hard (always this kind): the live
    file is a damaged stub, and two to four sub-problems of :data:`DR_FAULTS` are composed: the
    newest full backup or a diff fails its checksum (an offsite copy of the diff is intact), a
    diff is gone from the backup folder (only offsite), the newest diffs only in a bundle, an
    owner and permission bits to restore, a second lost file. Each has an ``unfixed-<fault>``
    near miss; the reference is the commands for the task's own sub-problems.

    changelog (easy and medium): a CSV table from a gzipped snapshot plus a rotated JSON-lines
    change log with non-idempotent ops (replaying the overlap double counts). Medium: other
    tables in the log, more rotations."""

    name = "data-recovery"
    title = "Recover a lost file from backups, incremental diffs or a rotated change log"
    category = "data-recovery"

    def draft(self, rng, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        # hard: always the config patches, with a grammar of sub-problems (DR_FAULTS)
        if difficulty is Difficulty.HARD or rng.random() < 0.5:
            return self._patches(rng, difficulty)
        return changelog_draft(rng, difficulty)

    # patches -------------------------------------------------------------------------------

    def _patches(self, rng, difficulty: Difficulty) -> Draft:
        level = difficulty.value
        hard = difficulty is Difficulty.HARD
        faults = sorted(rng.sample(DR_FAULTS, rng.randint(2, 4))) if hard else []
        app = rng.choice(CLEAN_APPS)
        conf = rng.choice([f"{app}.conf", "settings.ini", "service.conf", "pool.cfg", "main.conf"])
        live = f"/etc/{app}/{conf}"
        bdir = f"/var/backups/{app}"
        mode = rng.choice([0o640, 0o600, 0o644]) if level != "easy" else 0o644
        if hard:  # the stub left at the live path has the default bits; the backups, maybe others
            mode = rng.choice([0o640, 0o600, 0o440]) if "mode" in faults else 0o644
        account = rng.choice(SERVICE_ACCOUNTS) if "owner" in faults else None
        uid = rng.randint(901, 990) if account else 0
        second = rng.choice(["hosts.allow", "env", "limits.conf"]) if hard else None
        sections: list[list[str]] = []
        for name in rng.sample(CONF_SECTIONS, rng.randint(4, 6)):
            keys = rng.sample(CONF_KEYS, rng.randint(4, 8))
            sections.append([name] + [f"{k} = {_conf_value(rng, k)}" for k in keys])

        def render(rev: int) -> str:
            out = [f"# {app} configuration (managed)", f"# revision: {rev}", ""]
            for sec in sections:
                out.append(f"[{sec[0]}]")
                out += sec[1:]
                out.append("")
            return "\n".join(out)

        k_total = {
            "easy": rng.randint(10, 11),
            "medium": rng.randint(11, 13),
            "hard": rng.randint(12, 14),
        }[level]
        states = [render(0)]
        for rev in range(1, k_total + 1):
            for _ in range(rng.randint(1, 3)):
                sec = rng.choice(sections)
                what = rng.random()
                if what < 0.5 and len(sec) > 2:
                    i = rng.randint(1, len(sec) - 1)
                    key = sec[i].split(" = ")[0]
                    sec[i] = f"{key} = {_conf_value(rng, key)}"
                elif what < 0.8:
                    key = rng.choice(CONF_KEYS)
                    sec.insert(
                        rng.randint(1, len(sec)),
                        f"{key}_{rng.choice(WORDS)} = {_conf_value(rng, key)}",
                    )
                elif len(sec) > 3:
                    sec.pop(rng.randint(1, len(sec) - 1))
                else:
                    sec.append(f"# note {rng.choice(WORDS)} {rng.randint(1, 99)}")
            states.append(render(rev))
        final = states[-1]
        first = set(states[0].splitlines())
        new_lines = [ln for ln in final.splitlines() if " = " in ln and ln not in first]
        secrets = new_lines[-2:]

        fulls = [rng.randint(2, 4)]
        if level != "easy":
            fulls.append(rng.randint(6, 8))
        corrupt = fulls[-1] if "corrupt-full" in faults else None
        now = EPOCH_2022 + rng.randint(300, 900) * DAY
        step = DAY
        start = now - (k_total + 1) * step
        entries: list[Entry] = [Entry(bdir, "dir", mode=0o750, mtime=now)]
        sums: dict[str, str] = {}
        seconds: dict[int, bytes] = {}  # full backup -> the second file it holds
        owner = {"user": account, "uid": uid} if account else {}
        for n in fulls:
            members = [
                Entry(f"etc/{app}", "dir", mode=0o755, mtime=start + n * step),
                Entry(
                    f"etc/{app}/{conf}",
                    data=states[n].encode(),
                    mode=mode,
                    mtime=start + n * step,
                    **owner,
                ),
                Entry(
                    f"etc/{app}/{second or rng.choice(['hosts.allow', 'env', 'limits.conf'])}",
                    data=words_text(rng, 3, WORDS).encode(),
                    mode=0o640 if hard else 0o644,
                    mtime=start + n * step,
                    **owner,
                ),
            ]
            seconds[n] = members[2].data
            blob = compressed(tar_bytes(members), "gz")
            sums[f"full-{n}.tar.gz"] = sha256_hex(blob)
            if n == corrupt:
                lines = states[n].splitlines()
                idx = rng.choice([i for i, ln in enumerate(lines) if " = " in ln])
                key = lines[idx].split(" = ")[0]
                lines[idx] = f"{key} = {_conf_value(rng, key)}x"
                members[1] = Entry(
                    members[1].path,
                    data=("\n".join(lines) + "\n").encode(),
                    mode=mode,
                    mtime=members[1].mtime,
                    **owner,
                )
                blob = compressed(tar_bytes(members), "gz")
            entries.append(
                Entry(
                    f"{bdir}/full-{n}.tar.gz", data=blob, mode=0o640, mtime=start + n * step + 3600
                )
            )
        gz_some = level != "easy"
        base = fulls[0] if corrupt else fulls[-1]  # the newest full backup that is intact
        chain = list(range(base + 1, k_total + 1))
        bundled: list[int] = []
        if "bundled-diffs" in faults:  # the newest diffs only inside a bundle
            bundled = chain[-min(rng.randint(2, 3), len(chain) - 2) :]
        loose = [n for n in chain if n not in bundled]
        diffs: dict[int, bytes] = {}
        for n in range(1, k_total + 1):
            diffs[n] = "".join(
                difflib.unified_diff(
                    states[n - 1].splitlines(keepends=True),
                    states[n].splitlines(keepends=True),
                    f"a/{conf}",
                    f"b/{conf}",
                )
            ).encode()
        # a diff whose added lines carry a setting, to corrupt (its offsite copy stays intact)
        rotten = None
        if "corrupt-diff" in faults:

            def added(n: int) -> list[bytes]:
                return [
                    ln
                    for ln in diffs[n].splitlines()
                    if ln.startswith(b"+") and not ln.startswith(b"+++")
                ]

            candidates = [n for n in loose if any(b" = " in ln for ln in added(n))]
            rotten = rng.choice(candidates or [n for n in loose if added(n)])
        lost = None
        if "missing-diff" in faults:
            lost = rng.choice([n for n in loose if n != rotten])
        offsite = f"/mnt/offsite/{app}" if rotten or lost else None
        names: dict[int, str] = {}
        for n in range(1, k_total + 1):
            diff = diffs[n]
            name = f"incr-{n}.diff"
            if gz_some and rng.random() < 0.4:
                name, diff = name + ".gz", compressed(diff, "gz")
            names[n] = name
            if n in bundled:
                continue
            sums[name] = sha256_hex(diff)
            if offsite and (n in (rotten, lost) or n <= base and rng.random() < 0.3):
                entries.append(
                    Entry(f"{offsite}/{name}", data=diff, mode=0o640, mtime=start + n * step + 9000)
                )
            if n == lost:
                continue
            if n == rotten:
                lines = diffs[n].split(b"\n")
                at = [
                    i
                    for i, ln in enumerate(lines)
                    if ln.startswith(b"+") and not ln.startswith(b"+++")
                ]
                k = rng.choice([i for i in at if b" = " in lines[i]] or at)
                lines[k] = lines[k] + str(rng.randint(2, 9)).encode()
                diff = b"\n".join(lines)
                if name.endswith(".gz"):
                    diff = compressed(diff, "gz")
            entries.append(
                Entry(f"{bdir}/{name}", data=diff, mode=0o640, mtime=start + n * step + 7200)
            )
        bundle = None
        if bundled:
            bundle = f"incr-{bundled[0]}-{bundled[-1]}.tar.gz"
            members = [
                Entry(f"incr-{n}.diff", data=diffs[n], mode=0o640, mtime=start + n * step + 7200)
                for n in bundled
            ]
            blob = compressed(tar_bytes(members), "gz")
            sums[bundle] = sha256_hex(blob)
            entries.append(Entry(f"{bdir}/{bundle}", data=blob, mode=0o640, mtime=now - 3600))
        if offsite:
            entries.insert(0, Entry(offsite, "dir", mode=0o750, mtime=now))
        if level != "easy":
            body = "".join(f"{sums[k]}  {k}\n" for k in sorted(sums))
            entries.append(Entry(f"{bdir}/SHA256SUMS", data=body.encode(), mode=0o644, mtime=now))
        if hard:  # what is left of the live file: a torn copy
            torn = final[: len(final) // 3]
            entries.append(Entry(f"/etc/{app}", "dir", mode=0o755, mtime=now))
            # the stub has the default bits (the backups may record others)
            entries.append(Entry(live, data=torn.encode(), mode=0o644, mtime=now))
        second_path = f"/etc/{app}/{second}" if "second-file" in faults else None
        context = {
            "kind": "patches",
            "app": app,
            "conf": conf,
            "live": live,
            "bdir": bdir,
            "mode": oct(mode),
            "check_mode": level != "easy",
            "gz_some": gz_some,
            "sums": level != "easy",
            "hard": hard,
            "expected": final,
            "expected_sha": sha256_hex(final.encode()),
            "torn": hard,
            "state": f"{STATE_DIR}/live.stat",
        }
        stats = [live]
        outputs = [live]
        mutations = {}
        if hard:
            context.update(
                {
                    "faults": faults,
                    "base": base,
                    "corrupt": corrupt,
                    "last": k_total,
                    "bundle": bundle,
                    "offsite": offsite,
                    "rotten_name": names[rotten] if rotten else None,
                    "lost_name": names[lost] if lost else None,
                    "account": account,
                    "uid": uid,
                    "second": second_path,
                    "second_sha": sha256_hex(seconds[base]) if second_path else None,
                    "second_mode": "0o640",
                }
            )
            if second_path:
                stats.append(second_path)
                outputs.append(second_path)
            mutations = near_misses(self, context, faults, key="variant", value="unfixed-{}")
        return Draft(
            context=context,
            files={"environment/seed.tar.gz": seed_tarball(entries)},
            secrets=secrets,
            outputs=outputs,
            separate_verifier=True,
            artifacts=[STATE_DIR],
            collect=[snapshot_hook({"live.stat": stat_lines(stats)})],
            tags=["backup", "patch", "diff"] + (["checksums"] if hard else []),
            faults=faults,
            traps=traps_for(DR_TRAPS, faults),
            mutations=mutations,
        )
