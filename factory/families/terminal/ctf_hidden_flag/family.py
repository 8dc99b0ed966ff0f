"""ctf-hidden-flag: find a flag hidden in the container (encoded in layers, inside a database,
a git history, a log, a PNG or a zip comment) and write it out."""

from __future__ import annotations

import base64
import codecs
import gzip
import io
import json
import random
import struct
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from factory.families.base import Draft, Family, Trap, register
from factory.families.terminal.knobs import level_of
from factory.families.terminal.shipped import read
from factory.families.terminal.words import CTF_APPS, WordTable
from factory.vocabulary import Difficulty

# =============================================================================================
# ctf-hidden-flag
# =============================================================================================

_WORDS = WordTable(Path(__file__).parent / "words.toml")
CTF_WORDS: list[str] = _WORDS["words"]
CTF_USERS: list[str] = _WORDS["users"]
CTF_SIMPLE = ["b64", "b32", "hex", "gz-b64"]
CTF_XOR = ["xor-b64", "xor-hex"]
CTF_EXTRA = ["rev", "rot13", "b64", "b32", "hex"]
CTF_SPOTS = ["config-line", "sqlite", "git-history", "gzip-log", "png-text", "zip-comment"]
CTF_PIPE = {
    "b64": "base64 -w0",
    "b32": "base32 -w0",
    "hex": "od -An -tx1 | tr -d ' \\n'",
    "rot13": "tr 'A-Za-z' 'N-ZA-Mn-za-m'",
    "rev": "rev",
    "xor-b64": "python3 /opt/tools/xor.py {key} | base64 -w0",
    "xor-hex": "python3 /opt/tools/xor.py {key} | od -An -tx1 | tr -d ' \\n'",
    "gz-b64": "gzip -9n | base64 -w0",
}
#: The shell command that undoes one encoding (hard's task-specific decoding pipelines).
CTF_UNDO = {
    "b64": "base64 -d",
    "b32": "base32 -d",
    "hex": "tr a-f A-F | basenc --base16 -d",
    "rot13": "tr 'A-Za-z' 'N-ZA-Mn-za-m'",
    "rev": "perl -0777 -pe '$_ = reverse $_'",
    "xor-b64": "base64 -d | python3 /opt/tools/xor.py {key}",
    "xor-hex": "tr a-f A-F | basenc --base16 -d | python3 /opt/tools/xor.py {key}",
    "gz-b64": "base64 -d | gunzip",
}


def _xor(data: bytes, key: bytes) -> bytes:
    return bytes(b ^ key[i % len(key)] for i, b in enumerate(data))


def _ctf_encode(name: str, data: bytes, key: bytes) -> bytes:
    if name == "b64":
        return base64.b64encode(data)
    if name == "b32":
        return base64.b32encode(data)
    if name == "hex":
        return data.hex().encode()
    if name == "rot13":
        return codecs.encode(data.decode("latin-1"), "rot13").encode("latin-1")
    if name == "rev":
        return data[::-1]
    if name == "xor-b64":
        return base64.b64encode(_xor(data, key))
    if name == "xor-hex":
        return _xor(data, key).hex().encode()
    if name == "gz-b64":
        return base64.b64encode(gzip.compress(data, mtime=0))
    raise ValueError(name)


def _png(rng: random.Random, meta: dict[str, bytes]) -> bytes:
    w, h = rng.randint(8, 24), rng.randint(8, 24)
    color = bytes(rng.randrange(256) for _ in range(3))
    raw = b"".join(b"\0" + color * w for _ in range(h))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        )

    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    out += chunk(b"tEXt", b"Software\0pixelkit 2.1")
    out += chunk(b"IDAT", zlib.compress(raw, 9))
    for key, value in meta.items():
        out += chunk(b"tEXt", key.encode() + b"\0" + value)
    return out + chunk(b"IEND", b"")


def _zip(rng: random.Random, members: dict[str, str], comment: bytes) -> bytes:
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, text in members.items():
            zf.writestr(
                zipfile.ZipInfo(name, date_time=(2023, rng.randint(1, 12), 1, 9, 30, 0)), text
            )
        zf.comment = comment
    return buf.getvalue()


@register
class CtfHiddenFlag(Family):
    """A flag FLAG{...} hidden at image build time, never in plain text on disk: encoded through
    a chain of transforms (base64, base32, hex, rot13, reversal, gzip, XOR with a key kept
    elsewhere) and stashed in a config line, a SQLite BLOB, a deleted file in git history, an
    unreachable git blob, a rotated gzip log, a PNG tEXt chunk or a zip comment. The intruder's
    shell history is the breadcrumb trail. Easy: one transform, one spot; medium: two transforms
    including XOR, a decoy flag; hard: the flag split in two or three parts hidden in as many
    different spots (one of them in git) with 2-3 transforms each, the XOR key stored
    base64-encoded half the time, and two decoys; none of it announced. Hard's reference
    solution extracts each part and undoes its own chain with shell commands."""

    name = "ctf-hidden-flag"
    title = "Recover a flag hidden through layers of encoding on the machine"
    category = "security"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = level_of(difficulty)
        words = rng.sample(CTF_WORDS, 6 + level)[level:]
        flag = f"FLAG{{{words[0]}_{words[1]}_{rng.randrange(16**8):08x}}}"
        decoys = [
            f"FLAG{{{words[2 + 2 * i]}_{words[3 + 2 * i]}_{rng.randrange(16**8):08x}}}"
            for i in range(2)
        ]
        app = rng.choice(CTF_APPS)
        user = rng.choice(CTF_USERS)
        key_path = rng.choice(
            [
                f"/etc/{app}/deploy.key",
                f"/opt/{app}/.keys/session.key",
                f"/var/lib/{app}/secret.key",
            ]
        )
        key_text = f"{rng.choice(CTF_WORDS)}-{rng.randrange(16**6):06x}"
        key = key_text.encode()
        out_path = rng.choice(
            [
                "/root/recovered_flag.txt",
                f"/home/{user}/answer.txt",
                "/srv/ctf/answer.txt",
                "/tmp/found/flag.txt",
            ]
        )
        nparts = rng.choice([2, 3]) if level == 2 else 1
        if nparts > 1:
            # cut points at least 6 characters apart and from both ends
            while True:
                cuts = sorted(rng.sample(range(6, len(flag) - 5), nparts - 1))
                if all(b - a >= 6 for a, b in zip(cuts, cuts[1:], strict=False)):
                    break
            bounds = [0, *cuts, len(flag)]
            pieces = [flag[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
        else:
            bounds = [0, len(flag)]
            pieces = [flag]
        spot_pool = list(CTF_SPOTS)
        if params.get("spots"):
            spots = list(params["spots"])[:nparts]
        elif level == 2:
            spots = [rng.choice(["git-dangling", "git-history"])] + rng.sample(
                [s for s in spot_pool if not s.startswith("git")], nparts - 1
            )
            rng.shuffle(spots)
        else:
            spots = [rng.choice(spot_pool)]
        parts = []
        for i, (piece, spot) in enumerate(zip(pieces, spots, strict=True)):
            if level == 0:
                chain = [rng.choice(CTF_SIMPLE)]
            elif level == 1:
                chain = [rng.choice(CTF_XOR), rng.choice(CTF_EXTRA)]
                if rng.random() < 0.5:
                    chain.reverse()
            else:
                chain = [rng.choice(CTF_XOR)] + rng.sample(CTF_EXTRA, rng.randint(1, 2))
                rng.shuffle(chain)
            if params.get("chain"):
                chain = list(params["chain"])
            data = piece.encode()
            for step in chain:
                data = _ctf_encode(step, data, key)
            parts.append(
                {
                    "index": i,
                    "spot": spot,
                    "chain": chain,
                    "payload": data.decode(),
                    "label": rng.choice(
                        ["token", "blob", "sig", "nonce", "cache_id", "trace", "build_ref"]
                    )
                    + f"_{i + 1}",
                }
            )
        uses_key = any(s.startswith("xor") for p in parts for s in p["chain"])
        # hard: half the time the key file holds the key base64-encoded (the intruder decoded
        # it to a temporary file they shredded)
        key_encoded = level == 2 and rng.random() < 0.5
        xor_key = "/tmp/.k" if key_encoded else key_path
        files: dict[str, str | bytes] = {}
        installs: list[tuple[str, str, str]] = []  # (staged name, destination, mode)
        setup: list[str] = []

        def stage(dest: str, content: str | bytes, mode: str = "644") -> None:
            name = f"f{len(installs):02d}"
            files[f"environment/ctf/{name}"] = content
            installs.append((name, dest, mode))

        stage("/opt/tools/xor.py", read(__file__, "xor.py"), "755")
        if uses_key or level >= 1:
            stored = base64.b64encode(key).decode() if key_encoded else key_text
            stage(key_path, stored + "\n", "600")
        hist = ["cd /tmp", "ls -la", "read -rs SECRET"]
        if nparts > 1:
            for n, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False), 1):
                span = f"{a}" if b == len(flag) else f"{a}:{b - a}"
                hist.append(f"printf '%s' \"${{SECRET:{span}}}\" > /tmp/.p{n}")
        else:
            hist += ["printf '%s' \"$SECRET\" > /tmp/.p1"]
        if key_encoded:
            hist.append(f"base64 -d {key_path} > /tmp/.k")
        solve: list[str] = []
        if key_encoded:
            solve.append(f"base64 -d {key_path} > /tmp/solve/key")
        sqlite_rows: list[str] = []
        app_dir = f"/srv/{app}"
        for part in parts:
            n = part["index"] + 1
            pipe = " | ".join(CTF_PIPE[s].format(key=xor_key) for s in part["chain"])
            hist.append(f"cat /tmp/.p{n} | {pipe} > /tmp/.e{n}")
            payload, label, spot = part["payload"], part["label"], part["spot"]
            get = f"/tmp/solve/e{n}"
            if spot == "config-line":
                conf = f"/etc/{app}/{rng.choice(['app', 'runtime', 'cache', 'worker'])}.conf"
                lines = [
                    f"{k} = {v}"
                    for k, v in [
                        ("listen", f"0.0.0.0:{rng.randint(2000, 9000)}"),
                        ("workers", str(rng.randint(2, 16))),
                        ("log_level", rng.choice(["info", "warn", "debug"])),
                        ("cache_ttl", str(rng.randint(30, 900))),
                    ]
                ]
                lines.insert(rng.randint(1, len(lines)), f"{label} = {payload}")
                stage(conf, "# " + app + " settings\n" + "\n".join(lines) + "\n")
                hist.append(f'echo "{label} = $(cat /tmp/.e{n})" >> {conf}')
                solve.append(f"sed -n 's/^{label} = //p' {conf} | tr -d '\\n' > {get}")
            elif spot == "sqlite":
                db = f"/var/lib/{app}/state.db"
                table = rng.choice(["blobs", "kv_store", "attachments"])
                sqlite_rows.append(
                    f"INSERT INTO {table}(name, data) VALUES ('{label}', X'{payload.encode().hex()}');"
                )
                part["db"], part["table"] = db, table
                hist.append(
                    f'sqlite3 {db} "INSERT INTO {table}(name, data) VALUES '
                    f"('{label}', readfile('/tmp/.e{n}'))\""
                )
                solve.append(
                    f"python3 -c \"import sqlite3,sys; sys.stdout.buffer.write(sqlite3.connect('{db}')"
                    f".execute('SELECT data FROM {table} WHERE name = ?', ('{label}',)).fetchone()[0])\""
                    f" > {get}"
                )
            elif spot in ("git-history", "git-dangling"):
                repo = f"{app_dir}/{rng.choice(['config', 'deploy', 'infra'])}-repo" + (
                    "" if spot == "git-history" else "-old"
                )
                fname = rng.choice(["notes.bin", ".cache.dat", "session.tmp", "blob.txt"])
                stage(f"/tmp/ctf-git/{spot}-{n}", payload)
                part["repo"], part["fname"] = repo, fname
                setup += self._git_setup(
                    rng, repo, app, user, spot, fname, f"/tmp/ctf-git/{spot}-{n}"
                )
                if spot == "git-history":
                    hist += [
                        f"cp /tmp/.e{n} {repo}/{fname}",
                        f"cd {repo}",
                        f"git add {fname} && git commit -m 'wip'",
                        "git log --oneline | head",
                        f"git rm -q {fname} && git commit -m 'tidy up'",
                        "cd /tmp",
                    ]
                    solve.append(
                        f'git -C {repo} show "$(git -C {repo} log --all --diff-filter=A '
                        f'--format=%H -- {fname} | head -n 1):{fname}" > {get}'
                    )
                else:
                    hist += [f"git -C {repo} hash-object -w /tmp/.e{n}"]
                    solve.append(
                        f"sha=$(git -C {repo} fsck --unreachable --no-reflogs 2>/dev/null | "
                        f"awk '/unreachable blob/ {{print $3}}' | head -n 1)"
                    )
                    solve.append(f'git -C {repo} cat-file -p "$sha" > {get}')
            elif spot == "gzip-log":
                gen = rng.randint(2, 6)
                log = f"/var/log/{app}/{app}.log.{gen}.gz"
                lines = []
                for i in range(rng.randint(60, 140)):
                    lines.append(
                        f"2024-0{rng.randint(1, 9)}-{rng.randint(10, 28)}T{i % 24:02d}:"
                        f"{rng.randrange(60):02d}:00Z INFO request id={rng.randrange(16**8):08x} "
                        f"status={rng.choice([200, 200, 304, 404, 500])}"
                    )
                lines.insert(
                    rng.randrange(len(lines)),
                    f"2024-03-03T03:03:03Z DEBUG session {label}={payload}",
                )
                stage(log, gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
                hist += [
                    f'echo "$(date -Is) DEBUG session {label}=$(cat /tmp/.e{n})" >> /var/log/{app}/{app}.log.{gen}',
                    f"gzip -9 /var/log/{app}/{app}.log.{gen}",
                ]
                solve.append(f"zcat {log} | sed -n 's/.* {label}=//p' | tr -d '\\n' > {get}")
            elif spot == "png-text":
                png = f"{app_dir}/static/{rng.choice(['logo', 'banner', 'favicon-large'])}.png"
                stage(png, _png(rng, {label: payload.encode()}))
                stage("/opt/tools/pngmeta.py", read(__file__, "pngmeta.py"), "755")
                hist.append(f'python3 /opt/tools/pngmeta.py set {png} {label} "$(cat /tmp/.e{n})"')
                solve.append(
                    "python3 - <<'__PNG__' > " + get + "\n"
                    "import struct, sys\n"
                    f"data = open({png!r}, 'rb').read()\npos = 8\n"
                    "while pos < len(data):\n"
                    "    size, kind = struct.unpack('>I4s', data[pos:pos + 8])\n"
                    "    body = data[pos + 8:pos + 8 + size]\n"
                    f"    if kind == b'tEXt' and body.split(b'\\0', 1)[0] == {label.encode()!r}:\n"
                    "        sys.stdout.buffer.write(body.split(b'\\0', 1)[1])\n"
                    "    pos += 12 + size\n"
                    "__PNG__"
                )
            else:  # zip-comment
                archive = f"/var/backups/{app}-{rng.randint(2021, 2024)}.zip"
                members = {
                    "README.txt": f"{app} backup\n",
                    f"etc/{app}.conf": f"workers = {rng.randint(2, 9)}\n",
                    "db/schema.sql": "CREATE TABLE t (id INTEGER);\n",
                }
                stage(archive, _zip(rng, members, payload.encode()))
                hist.append(f"zip -z {archive} < /tmp/.e{n}")
                solve.append(
                    f"python3 -c \"import zipfile,sys; sys.stdout.buffer.write(zipfile.ZipFile('{archive}')"
                    f'.comment)" > {get}'
                )
        hist += [
            "shred -u /tmp/.p* /tmp/.e*" + (" /tmp/.k" if key_encoded else ""),
            "unset SECRET",
        ]
        if level >= 1:
            hist.insert(2, f"echo '{decoys[0]}' > /root/flag.txt")
            stage("/root/flag.txt", decoys[0] + "\n")
        else:
            stage(
                f"/home/{user}/todo.txt",
                "- clean up the box\n- "
                + rng.choice(["rotate keys", "check the backups", "remove test users"])
                + "\n",
            )
        if level == 2:
            stage(f"{app_dir}/flag.bak", base64.b64encode(decoys[1].encode()).decode())
            hist.insert(4, f"printf '%s' '{decoys[1]}' | base64 -w0 > {app_dir}/flag.bak")
        stage(f"/home/{user}/.bash_history", "\n".join(hist) + "\n", "600")
        dbs = sorted({(p["db"], p["table"]) for p in parts if p["spot"] == "sqlite"})
        sql = ""
        for _db, table in dbs:
            sql += f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT, data BLOB);\n"
            for i in range(rng.randint(5, 12)):
                junk = bytes(rng.randrange(256) for _ in range(rng.randint(8, 40)))
                sql += (
                    f"INSERT INTO {table}(name, data) VALUES "
                    f"('{rng.choice(['avatar', 'thumb', 'draft', 'cfg'])}_{i}', X'{junk.hex()}');\n"
                )
            sql += "\n".join(sqlite_rows) + "\n"
            if level == 2:
                sql += (
                    f"INSERT INTO {table}(name, data) VALUES ('flag', "
                    f"X'{base64.b32encode(decoys[1][::-1].encode()).hex()}');\n"
                )
        if dbs:
            files["environment/ctf/state.sql"] = sql
        # Nothing generated may hold the flag (or a part of it) in plain text.
        for rel, content in files.items():
            blob = content.encode() if isinstance(content, str) else content
            for secret in [flag, flag[5:-1], *pieces]:
                assert secret.encode() not in blob or len(secret) < 8, (rel, secret)
        decode = {
            "parts": [
                {"chain": p["chain"], "file": f"/tmp/solve/e{p['index'] + 1}"} for p in parts
            ],
            "key": "/tmp/solve/key" if key_encoded else key_path,
        }
        decoded_key = "/tmp/solve/key" if key_encoded else key_path

        def hard_steps(slip: str = "") -> list[str]:
            """Hard's reference: each payload extracted, then undone layer by layer with the
            commands its chain needs; ``slip`` leaves one thing undone (a near miss)."""
            lines = ["mkdir -p /tmp/solve"]
            for line in solve:
                if slip == "key-encoded" and line.startswith("base64 -d " + key_path):
                    continue
                lines.append(line)
            key_for = key_path if slip == "key-encoded" else decoded_key
            for part in parts:
                n = part["index"] + 1
                undo = [CTF_UNDO[st].format(key=key_for) for st in reversed(part["chain"])]
                lines.append(f"cat /tmp/solve/e{n} | " + " | ".join(undo) + f" > /tmp/solve/p{n}")
            kept = [p for p in parts if slip != f"part-{p['index'] + 1}"]
            lines.append(f'mkdir -p "$(dirname {out_path})"')
            cat = " ".join(f"/tmp/solve/p{p['index'] + 1}" for p in kept)
            lines.append(f"printf '%s\\n' \"$(cat {cat})\" > {out_path}")
            return lines

        faults: list[str] = []
        traps: list[Trap] = []
        mutations: dict[str, str] = {}
        if level == 2:
            faults = [*spots, *sorted({st for p in parts for st in p["chain"]})]
            faults += [f"{nparts}-parts"] + (["key-encoded"] if key_encoded else [])
            traps = [
                Trap("the flag split across places", ("one piece", "split", "parts", "pieces")),
                Trap("decoy flags", ("not every", "decoy", "real one", "fake")),
            ]
            if key_encoded:
                traps.append(Trap("the XOR key stored encoded", ("encoded key", "key file")))
                mutations["unfixed-key-encoded"] = (
                    "#!/bin/bash\n" + "\n".join(hard_steps("key-encoded")) + "\n"
                )
            mutations["last-part-missing"] = (
                "#!/bin/bash\n" + "\n".join(hard_steps(f"part-{nparts}")) + "\n"
            )
        return Draft(
            context={
                "level": level,
                "user": user,
                "app": app,
                "out_path": out_path,
                "installs": installs,
                "setup": setup,
                "db": dbs[0][0] if dbs else None,
                "solve": solve,
                "decode_json": json.dumps(decode),
                "flag": flag,
                "decoys": decoys,
                "nparts": nparts,
                "pieces": pieces,
                "hard_steps": hard_steps() if level == 2 else [],
            },
            files=files,
            secrets=[flag, flag[5:-1]],
            outputs=[out_path],
            separate_verifier=True,
            forbidden_strings=[flag, flag[5:-1]],
            faults=faults,
            traps=traps,
            mutations=mutations,
            tags=[
                "ctf",
                "forensics",
                *sorted({p["spot"] for p in parts}),
                *sorted({s for p in parts for s in p["chain"]}),
            ],
        )

    @staticmethod
    def _git_setup(
        rng: random.Random, repo: str, app: str, user: str, spot: str, fname: str, staged: str
    ) -> list[str]:
        env = "GIT_AUTHOR_DATE='2024-02-0{d}T10:00:00Z' GIT_COMMITTER_DATE='2024-02-0{d}T10:00:00Z'"
        lines = [
            f"mkdir -p {repo}",
            f"git -C {repo} init -q -b main",
            f"git -C {repo} config user.name {user}",
            f"git -C {repo} config user.email {user}@{app}.internal",
            f"printf '# {app} %s\\n\\nDeployment settings.\\n' {spot.split('-')[1]} > {repo}/README.md",
            f"printf 'replicas = {rng.randint(1, 5)}\\n' > {repo}/app.conf",
            f"git -C {repo} add -A",
            f"{env.format(d=1)} git -C {repo} commit -qm 'initial import'",
        ]
        if spot == "git-history":
            lines += [
                f"cp {staged} {repo}/{fname}",
                f"git -C {repo} add {fname}",
                f"{env.format(d=2)} git -C {repo} commit -qm 'wip'",
                f"printf 'replicas = {rng.randint(6, 9)}\\n' > {repo}/app.conf",
                f"git -C {repo} rm -q {fname}",
                f"{env.format(d=3)} git -C {repo} commit -qam 'tidy up'",
            ]
        else:
            lines += [
                f"printf 'replicas = {rng.randint(6, 9)}\\n' > {repo}/app.conf",
                f"{env.format(d=2)} git -C {repo} commit -qam 'scale up'",
                f"git -C {repo} hash-object -w {staged} > /dev/null",
            ]
        return lines
