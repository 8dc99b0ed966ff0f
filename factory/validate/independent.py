"""Wrong solutions the family author did not write.

A family's own near misses (``mutations/``) test its tests against the mistakes its author
thought of; verifier strength measured on them alone is self-graded. Two sources of wrong
solutions that do not come from the author, run as probes like the near misses but reported
(probe kind ``independent``), not counted in verifier strength: whether one is really wrong
depends on whether the tests grade the outputs' text, which only the family knows. Counted,
they called sound tasks of 14 of the 37 families weak (tests that grade file modes, a tool
server's state or a binary they rebuild rightly accept an output whose text changed).

* **variations** — derived from any task's reference solution and the outputs it declares:
  the reference runs, then one output file is changed the way a solution that mishandles the
  environment would have left it. ``drop-last-record``: the last record is lost (a file without
  a final newline read line by line). ``glue-records``: the last two records run together (files
  joined without a newline between them, as ``tail -n +2`` does). ``truncate-output``: the output
  is cut in half (a write that stopped early). Records are the non-empty lines that are not
  comments, so each variation changes what the output says, not its layout: tests that grade
  that output's text and accept one are weak. An output that has no such record to change, or that is a program (starts with
  ``#!``: dropping its last line, say ``exit 0``, may change nothing), is removed instead; so
  are the declared outputs when none of them is a regular file (a folder whose files' modes are
  the task, say): a variation never leaves what the reference left.
  Source modules of a project (``.py``, ``.js``, ``.c``, ...; e.g. the files a repo-bug fix
  edits) get no variation: their tests check behaviour, not every line, so a module that lost
  its last line may still be a right fix.
* **model-written** — with an LLM endpoint configured, plausible wrong solutions written by a
  model from the instruction and the reference (:func:`model_wrong_solutions`); the model is
  asked for subtle mistakes, and an answer equal to the reference is discarded.
"""

from __future__ import annotations

import re
import shlex

from factory.llm import LlmClient, LlmError

VARIATIONS = ("drop-last-record", "glue-records", "truncate-output")
SOURCE_SUFFIXES = (".py", ".pyi", ".js", ".mjs", ".ts", ".c", ".h", ".cc", ".cpp", ".hpp", ".go",
                   ".rs", ".java", ".kt", ".rb", ".php", ".swift", ".scala")  # fmt: skip
"""Outputs that are a project's source modules: no variation of them is a sure wrong solution."""

# Runs in the task container after the reference solution: change the first output (in the
# order the task declares them) that is a regular file, as the variation says.
_ALTER = r"""
import os, shutil, sys
kind, paths = sys.argv[1], sys.argv[2:]
COMMENT = ("#", ";", "//", "--")
for path in paths:
    if not os.path.isfile(path):
        continue
    with open(path, "rb") as fh:
        data = fh.read()
    if data.startswith(b"#!"):  # a program: losing its last line (exit 0) may change nothing
        os.remove(path)
        break
    lines = data.split(b"\n")
    records = [i for i, l in enumerate(lines) if l.strip() and not l.strip().startswith(tuple(c.encode() for c in COMMENT))]
    if kind == "truncate-output" and len(data) > 1:
        data = data[: len(data) // 2]
    elif kind == "drop-last-record" and records:
        del lines[records[-1]]
        data = b"\n".join(lines)
    elif kind == "glue-records" and len(records) >= 2:
        a, b = records[-2], records[-1]
        lines[a] = lines[a] + lines[b].lstrip()
        del lines[b]
        data = b"\n".join(lines)
    else:
        os.remove(path)
        break
    with open(path, "wb") as fh:
        fh.write(data)
    break
else:  # no output is a regular file: the variation removes them all
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.remove(path)
"""


def variation_scripts(reference: str, outputs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """The variations of a task (name -> solve.sh): none when it declares no output file other
    than source modules (:data:`SOURCE_SUFFIXES`)."""
    files = [p for p in outputs if not p.endswith("/") and not p.lower().endswith(SOURCE_SUFFIXES)]
    if not files:
        return {}
    quoted = " ".join(shlex.quote(p) for p in files)
    scripts = {}
    for kind in VARIATIONS:
        scripts[f"variation-{kind}"] = (
            "#!/bin/bash\n"
            f"# A wrong solution not written by the family: the reference, then {kind}.\n"
            "bash <<'FACTORY_REFERENCE_EOF'\n"
            f"{reference.rstrip(chr(10))}\n"
            "FACTORY_REFERENCE_EOF\n"
            f"python3 -c {shlex.quote(_ALTER)} {kind} {quoted}\n"
        )
    return scripts


PROMPT = """You review the hidden tests of a terminal task for AI agents. Below are the task's
instruction and its reference solution (a bash script that solves it). Write {n} different bash
scripts that a careless but competent engineer might write for this task: each must look
plausible and run without errors, but get the task subtly wrong (an edge case missed, an
off-by-one, a requirement forgotten, the right fix in the wrong place, a shortcut that fakes the
result). Give each script in its own ```bash fenced block, with a first comment line saying what
is wrong with it. No other text.

## Instruction
{instruction}

## Reference solution
```bash
{reference}
```
"""
_FENCE = re.compile(r"```(?:bash|sh)?[ \t]*\n(.*?)```", re.S)


def model_wrong_solutions(
    client: LlmClient, instruction: str, reference: str, *, n: int = 3, seed: int = 0
) -> dict[str, str]:
    """Up to ``n`` plausible wrong solutions written by the model (name -> solve.sh); empty when
    the endpoint fails or the answer holds no script. Scripts equal to the reference, or empty,
    are dropped."""
    prompt = PROMPT.format(n=n, instruction=instruction.strip(), reference=reference.strip())
    try:
        completion = client.complete(
            [{"role": "user", "content": prompt}], temperature=0.8, max_tokens=4096, seed=seed
        )
    except LlmError:
        return {}
    out: dict[str, str] = {}
    normalised_reference = _normalise(reference)
    for body in _FENCE.findall(completion.text):
        if not _normalise(body) or _normalise(body) == normalised_reference:
            continue
        script = body if body.startswith("#!") else "#!/bin/bash\n" + body
        out[f"model-wrong-{len(out) + 1}"] = script.rstrip("\n") + "\n"
        if len(out) == n:
            break
    return out


def _normalise(script: str) -> str:
    lines = (line.strip() for line in script.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("#"))
