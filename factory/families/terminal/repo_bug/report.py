"""The instruction of a repo-bug task: an issue report that describes the symptom from the
outside (which public function, called how, fails with what), never the file, the line or the
fix. Written from a template, or by the LLM when ``FACTORY_LLM_BASE_URL`` and
``FACTORY_LLM_MODEL`` are set (its report is used only when it passes the same checks).
"""

from __future__ import annotations

import ast
import logging
import os
import random
import re
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

log = logging.getLogger(__name__)

PROMPT_VERSION = "repo_bug_report_v1"


@lru_cache(maxsize=64)
def parse(text: str) -> ast.Module:
    """ast.parse, cached (a test file is read once per task for every failing test; the tree
    is only read) and quiet about the project's own invalid escape sequences."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(text)


_ADDRESS = re.compile(r"\s+at 0x[0-9a-fA-F]+")
_LINE_REF = re.compile(r"\bline\s+\d+|\.py:\d+|:\d+:\d+", re.IGNORECASE)


@dataclass
class Symptom:
    """One failing behaviour, seen from the outside."""

    test: str
    """The failing test's name (function only, e.g. 'test_roundtrip')."""
    api: list[str]
    """Public names of the project the test calls."""
    error: str
    """Exception type ('AssertionError', 'KeyError', ...)."""
    detail: str
    """The failure's message, cleaned (may be empty)."""


@dataclass
class Forbidden:
    """What an instruction must not name: the project's files and module paths."""

    paths: set[str] = field(default_factory=set)
    modules: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, files: list[str], package: str, root: str) -> Forbidden:
        paths, modules = set(), set()
        for path in files:
            pure = PurePosixPath(path)
            paths.add(path)
            if pure.suffix and len(pure.name) > 4:
                paths.add(pure.name)
            if path.endswith(".py"):
                rel = pure.relative_to(root) if root and pure.parts[0] == root else pure
                dotted = ".".join(rel.with_suffix("").parts)
                if dotted.endswith(".__init__"):
                    dotted = dotted[: -len(".__init__")]
                if "." in dotted and dotted.startswith(package + "."):
                    modules.add(dotted)
        return cls(paths, modules)

    def problems(self, text: str) -> list[str]:
        """Why ``text`` gives away a location ([] when it does not)."""
        found = []
        for path in sorted(self.paths):
            if re.search(rf"(?<![\w./-]){re.escape(path)}(?![\w/-])", text):
                found.append(f"names the file {path}")
        for module in sorted(self.modules):
            if re.search(rf"(?<![\w.]){re.escape(module)}(?![\w])", text):
                found.append(f"names the module {module}")
        match = _LINE_REF.search(text)
        if match:
            found.append(f"names a line ({match.group(0)!r})")
        return found


def public_names(sources: dict[str, str]) -> set[str]:
    """Top-level public functions and classes of the project's modules."""
    names: set[str] = set()
    for text in sources.values():
        try:
            tree = parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            public = not getattr(node, "name", "_").startswith("_")
            if public and isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
                names.add(node.name)
    return names


def called_names(test_source: str, test_id: str, public: set[str]) -> list[str]:
    """Public project names the test function ``test_id`` calls, in order of appearance."""
    try:
        tree = parse(test_source)
    except (SyntaxError, ValueError):
        return []
    parts = test_id.split("[", 1)[0].split("::")[1:]
    scope: list[ast.stmt] = tree.body
    node = None
    for part in parts:
        node = next(
            (
                n
                for n in scope
                if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
                and n.name == part
            ),
            None,
        )
        if node is None:
            return []
        scope = getattr(node, "body", [])
    out: list[str] = []
    for sub in ast.walk(node) if node is not None else []:
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in public and name not in out:
                out.append(name)
    return out


def clean_message(message: str, forbidden: Forbidden) -> tuple[str, str]:
    """(exception type, detail) from a failure message; detail is '' when it would name a
    location or is too long to help."""
    first = _ADDRESS.sub("", message.strip()).splitlines()
    head = first[0] if first else ""
    error, detail = "AssertionError", head
    match = re.match(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt)):\s*(.*)$", head)
    if match:
        error, detail = match.group(1).rsplit(".", 1)[-1], match.group(2)
    elif head.startswith("assert "):
        detail = head
    if len(detail) > 240 or forbidden.problems(detail) or "/" in detail and ".py" in detail:
        detail = ""
    return error, detail


# --- the template report -------------------------------------------------------------------------
_TITLES = [
    "{api} misbehaves in {project} {version}",
    "Regression in {project} {version}: {api}",
    "{project} {version}: wrong results from {api}",
    "Bug report: {api} ({project} {version})",
]
_OPENINGS = [
    "I am using {project} {version} from its source release, checked out in `/app` with the "
    "project's own test suite.",
    "`/app` holds a checkout of {project} {version} (the source release, with its tests), and "
    "it does not behave as documented.",
    "We vendor {project} {version}; the copy in `/app` (source release plus the project's test "
    "suite) has started failing for us.",
]
_ASKS = [
    "Please find the cause and fix the library so that it behaves as documented again.",
    "Could you track the problem down and fix it in the library code?",
    "Please fix the library so these work again without breaking anything else.",
]


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def symptom_line(symptom: Symptom, level: str) -> str:
    api = ", ".join(f"`{a}`" for a in symptom.api[:3]) or "the library"
    what = (
        f"fails with {_code(f'{symptom.error}: {symptom.detail}')}"
        if symptom.detail
        else (
            f"raises `{symptom.error}`"
            if symptom.error != "AssertionError"
            else "returns a wrong result"
        )
    )
    if level == "easy":
        return f"- The test `{symptom.test}` fails: it exercises {api} and {what}."
    if level == "medium":
        return f"- Using {api}: {what}."
    verb = (
        f"raises `{symptom.error}`" if symptom.error != "AssertionError" else "gives a wrong result"
    )
    return f"- {api.capitalize() if api == 'the library' else api} {verb} on some inputs."


def template_report(
    rng: random.Random,
    *,
    project: str,
    version: str,
    level: str,
    symptoms: list[Symptom],
    run_command: str,
) -> str:
    apis = [a for s in symptoms for a in s.api]
    headline = f"`{apis[0]}`" if apis else "the library"
    title = rng.choice(_TITLES).format(api=headline, project=project, version=version)
    lines = [f"# {title}", "", rng.choice(_OPENINGS).format(project=project, version=version), ""]
    lines.append(
        {
            "easy": "Some of the project's tests fail:",
            "medium": "What I see:",
            "hard": "Several things are off; what we noticed (there may be more than one cause):",
        }[level]
    )
    lines.append("")
    lines += [symptom_line(s, level) for s in symptoms]
    lines += ["", rng.choice(_ASKS), ""]
    lines += rules(run_command)
    return "\n".join(lines) + "\n"


def rules(run_command: str) -> list[str]:
    return [
        "Notes:",
        "",
        f"- The project's tests run with `{run_command}`; tests that pass now must keep passing.",
        "- Fix the library code. Do not edit, delete or skip the project's existing tests and do",
        "  not change its test configuration (conftest files, pytest settings).",
        "- Your fix will also be checked with tests you cannot see.",
    ]


# --- the LLM report ------------------------------------------------------------------------------
def llm_configured() -> bool:
    return bool(os.environ.get("FACTORY_LLM_BASE_URL") and os.environ.get("FACTORY_LLM_MODEL"))


def llm_report(
    *,
    project: str,
    version: str,
    level: str,
    symptoms: list[Symptom],
    run_command: str,
    forbidden: Forbidden,
    seed: int,
    client=None,
) -> str | None:
    """An issue report written by the configured LLM, or None (no endpoint, a failure, or a
    reply that names a location or misses the symptoms): the caller then uses the template."""
    if client is None:
        if not llm_configured():
            return None
        from factory.llm import LlmClient, LlmSettings, api_key_from_env

        from .projects import cache_root

        client = LlmClient(
            LlmSettings(
                base_url=os.environ["FACTORY_LLM_BASE_URL"],
                model=os.environ["FACTORY_LLM_MODEL"],
                api_key=api_key_from_env("FACTORY_LLM_API_KEY"),
                concurrency=2,
                cache_dir=cache_root() / "llm",
            )
        )
    facts = "\n".join(
        f"- public API involved: {', '.join(s.api) or 'unknown'}; failure: {s.error}"
        + (f": {s.detail}" if s.detail else "")
        + (f" (seen in test {s.test})" if level == "easy" else "")
        for s in symptoms
    )
    messages = [
        {
            "role": "system",
            "content": "You write GitHub issue reports as a user of a Python library. Describe "
            "only what the user observes (calls, inputs, wrong outputs, exceptions). Never name a "
            "source file, a module path, a line number, or how to fix the bug. Markdown, at most "
            "180 words, a title line starting with '# '.",
        },
        {
            "role": "user",
            "content": f"Library: {project} {version}.\nObserved failures:\n{facts}\n"
            f"Write the issue report ({'brief, symptoms only' if level == 'hard' else 'clear'}).",
        },
    ]
    try:
        reply = client.complete(messages, temperature=0.3, max_tokens=500, seed=seed).text
    except Exception as exc:  # noqa: BLE001 - any failure falls back to the template
        log.warning("repo-bug: the LLM report failed (%s); using the template", exc)
        return None
    body = reply.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("markdown").strip()
    mentioned = any(a in body for s in symptoms for a in s.api) or any(
        s.error in body for s in symptoms
    )
    if not body.startswith("# ") or not 20 <= len(body.split()) <= 400 or not mentioned:
        return None
    if forbidden.problems(body):
        return None
    return body + "\n\n" + "\n".join(rules(run_command)) + "\n"
