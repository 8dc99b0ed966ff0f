"""ctf-hidden-flag at hard, without Docker: the flag split over two or three places, the XOR key
sometimes stored encoded, the instruction announcing neither, and a reference solution that
undoes each part's own encodings (checked by running its decoding commands on the encoded parts,
where the shell tools are installed)."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest
from fixtures import family_grammar as grammar

from factory.families import registry
from factory.families.terminal.ctf_hidden_flag.family import CTF_SPOTS, _ctf_encode
from factory.quality.structure import solution_steps
from factory.vocabulary import Difficulty

FAMILY = registry.get("ctf-hidden-flag")
XOR = Path(__file__).parents[2] / "factory/families/terminal/ctf_hidden_flag/shipped/xor.py"


draft = grammar.drafter(FAMILY)


def test_hard_composes_places_encodings_and_the_key():
    combos, sizes, keyed = set(), set(), set()
    for seed in range(1, 101):
        d = draft(Difficulty.HARD, seed)
        combos.add(tuple(sorted(d.faults)))
        nparts = d.context["nparts"]
        sizes.add(nparts)
        keyed.add("key-encoded" in d.faults)
        spots = [f for f in d.faults if f in CTF_SPOTS or f == "git-dangling"]
        assert len(spots) == nparts and f"{nparts}-parts" in d.faults
        assert "".join(d.context["pieces"]) == d.context["flag"]
        assert len(d.traps) == 2 + ("key-encoded" in d.faults)
    assert len(combos) >= 50 and sizes == {2, 3} and keyed == {True, False}


def test_easy_and_medium_declare_no_grammar():
    for level in (Difficulty.EASY, Difficulty.MEDIUM):
        d = draft(level, 2)
        assert d.faults == [] and d.traps == [] and d.context["hard_steps"] == []


def test_the_hard_instruction_names_no_trap_and_the_solution_grows():
    steps = []
    for seed in range(1, 41):
        d = draft(Difficulty.HARD, seed)
        spec = grammar.render_hard(FAMILY, d, seed, "terminal/x/ctf")
        grammar.assert_names_no_trap(spec.instruction, spec.traps)
        assert "piece" not in spec.instruction and "real one" not in spec.instruction
        solve = spec.files["solution/solve.sh"].decode()
        assert "__DECODE__" not in solve, "hard decodes with the task's own commands"
        steps.append(len(solution_steps(solve)))
    steps.sort()
    assert steps[len(steps) // 2] >= 8


def _decode(d, lines: list[str], tmp: Path) -> str | None:
    """Run the decoding part of a hard solution on the task's encoded parts (written where the
    extraction commands would have put them)."""
    ctx = d.context
    key_dest = next(dest for _, dest, _ in ctx["installs"] if dest.endswith(".key"))
    key_staged = next(name for name, dest, _ in ctx["installs"] if dest == key_dest)
    stored = d.files[f"environment/ctf/{key_staged}"]
    (tmp / "keyfile").write_text(stored)
    key = stored.strip().encode()
    if "key-encoded" in d.faults:
        key = base64.b64decode(key)
    for i, (piece, part) in enumerate(
        zip(ctx["pieces"], json.loads(ctx["decode_json"])["parts"], strict=True)
    ):
        data = piece.encode()
        for step in part["chain"]:
            data = _ctf_encode(step, data, key)
        (tmp / f"e{i + 1}").write_bytes(data)
    script = ["set -e"]
    for line in lines:
        if line.startswith(("cat /tmp/solve/e", "printf", f"base64 -d {key_dest}")):
            script.append(
                line.replace("/tmp/solve", str(tmp))
                .replace(key_dest, str(tmp / "keyfile"))
                .replace(ctx["out_path"], str(tmp / "out"))
                .replace("/opt/tools/xor.py", str(XOR))
            )
    subprocess.run(["bash", "-c", "\n".join(script)], capture_output=True, timeout=60)
    out = tmp / "out"
    text = out.read_text(errors="replace").strip() if out.exists() else None
    out.unlink(missing_ok=True)
    return text


@grammar.needs_tools("basenc", "perl", "base32")
@pytest.mark.parametrize("seed", range(1, 13))
def test_the_reference_decodes_each_part_and_the_near_misses_do_not(tmp_path, seed):
    d = draft(Difficulty.HARD, seed)
    assert _decode(d, d.context["hard_steps"], tmp_path) == d.context["flag"]
    assert "last-part-missing" in d.mutations
    assert ("unfixed-key-encoded" in d.mutations) == ("key-encoded" in d.faults)
    for name in ("last-part-missing", "unfixed-key-encoded"):
        if name in d.mutations:
            assert _decode(d, d.mutations[name].splitlines(), tmp_path) != d.context["flag"]
