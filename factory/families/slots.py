"""Slots: the content a model may write for a procedural family (the hybrid ``mode: scenario``).

A family that opens slots sets ``slots`` to a subclass of :class:`Slots`, a pydantic model:
the model (a language model behind an endpoint) writes only that content (the scenario and
persona, names, themes, record vocabularies, column names, file text) as one small JSON
object, and the family's own code builds the task from it exactly as from its seeded
content: the data, the solution and the tests are computed from the data, never written by
the model.

Every string of a slot set has a pattern whose longest match is bounded and every list a
maximum number of items (build fields with :func:`text`, :func:`words` and friends), so the
JSON schema the reply is held to (grammar-constrained decoding) admits only short objects:
even a small model cannot run away, and a known token budget always suffices
(:func:`max_json_chars`). Field validators add what a schema cannot say (names distinct, an
identifier that is no SQL keyword); their messages go back to the model when it got
something wrong.

A family reads the content with ``self.filled("name", default)`` (see
:class:`factory.families.base.Family`); a family whose draft finds the content unusable for
the data it drew raises :class:`ContentError`, whose message also goes back to the model.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator
from pydantic.fields import FieldInfo

try:  # the regular-expression parser, to bound each pattern's longest match
    import re._parser as _sre_parse  # type: ignore[import-not-found]  # Python >= 3.11
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre_parse  # type: ignore[no-redef]


class ContentError(ValueError):
    """A family cannot build a task from the content it was given (the message says why, in
    words a model can act on). ``slot``: the slot whose value is at fault, when one is (the
    backend then drafts that slot from the family's own vocabulary instead)."""

    def __init__(self, message: str, slot: str | None = None) -> None:
        super().__init__(message)
        self.slot = slot


def pattern_width(pattern: str) -> tuple[int, int | None]:
    """The shortest and longest match of a regular expression (None: unbounded)."""
    low, high = _sre_parse.parse(pattern).getwidth()
    return low, (None if high >= _sre_parse.MAXREPEAT else high)


# --- bounded field types ---------------------------------------------------------------------


def text(pattern: str) -> Any:
    """A string type held to ``pattern`` (anchored, with a bounded longest match, e.g.
    ``^[a-z][a-z0-9-]{2,15}$``); its maxLength is that longest match. Give a field of this
    type its description and examples with ``Field(description=..., examples=[...])``."""
    if not (pattern.startswith("^") and pattern.endswith("$")):
        raise ValueError(f"slot pattern {pattern!r} must start with ^ and end with $")
    longest = pattern_width(pattern)[1]
    if longest is None:
        raise ValueError(f"slot pattern {pattern!r} has no bounded longest match")
    return Annotated[str, Field(pattern=pattern, max_length=longest)]


Slug = text(r"^[a-z][a-z0-9-]{1,14}[a-z0-9]$")
"""A lowercase name with dashes, 3-16 characters (a service, an app, a share)."""
Ident = text(r"^[a-z][a-z_]{1,18}[a-z]$")
"""A lowercase identifier with underscores, 3-20 characters (a table or column name)."""
Word = text(r"^[a-z]{3,12}$")
"""One lowercase word, 3-12 letters."""
CapWord = text(r"^[A-Z][a-z]{2,11}$")
"""One capitalised word (a first or last name, a city), 3-12 letters."""
Phrase = text(r"^[A-Z][a-z]{1,11}( [A-Za-z][a-z]{1,11}){0,3}$")
"""Up to four words, the first capitalised (a product, a title)."""
Sentence = text(r"^[A-Z][a-z]{0,11}( [a-z]{1,12}){3,16}$")
"""A plain sentence of 4-17 words without digits or punctuation (no answer can hide in it)."""
Persona = text(r"^[a-z]{1,12}( [a-z]{1,12}){1,4}$")
"""Who asks, lowercase, 2-5 words ("a payroll clerk")."""


class Slots(BaseModel):
    """Base of every family's slot set: the scenario and the persona, which frame the
    instruction (``Context: ...`` and ``This request comes from ...``), and the family's own
    fields. Every list of strings must hold different items (compared case-insensitively)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    scenario: Sentence = Field(
        description="one plain sentence without digits that sets the scene",
        examples=["The night shift found the export twice as large as usual"],
    )
    persona: Persona = Field(
        description="who asks for the task, in lowercase",
        examples=["a payroll clerk", "the new site reliability engineer"],
    )

    @field_validator("*", mode="after")
    @classmethod
    def _distinct(cls, value: Any) -> Any:
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            seen: set[str] = set()
            for item in value:
                if item.casefold() in seen:
                    raise ValueError(f"'{item}' appears twice; every item must be different")
                seen.add(item.casefold())
        return value

    def check_not_copied(self, title: str = "") -> None:
        """Raise :class:`ContentError` when a text of two or more words only repeats words of
        its slot's description or of the task's ``title``: a small model often echoes the
        prompt ("who asks for the task") instead of inventing content."""
        for name in type(self).model_fields:
            problem = type(self).copied(name, getattr(self, name), title)
            if problem:
                raise ContentError(problem)

    @classmethod
    def copied(cls, name: str, value: Any, title: str = "") -> str | None:
        """Why slot ``name``'s ``value`` only echoes the prompt (see :meth:`check_not_copied`),
        or None: a text of two or more words all taken from the slot's description, from the
        title, or from the prompt's words about the family and its slots together (a persona
        "one plain sentence without digits" copies the scenario's description)."""
        titled = set(words_of(title))
        described = set(words_of(cls.model_fields[name].description or ""))
        prompt = titled | set(words_of(cls.__doc__ or ""))
        for field in cls.model_fields.values():
            prompt |= set(words_of(field.description or ""))
        sources = (
            ("the field's description", described),
            ("the title", titled),
            ("the prompt", prompt),
        )
        for item in value if isinstance(value, list) else [value]:
            words = set(words_of(item) if isinstance(item, str) else [])
            if len(words) < 2:
                continue
            for source, known in sources:
                if words <= known:
                    return f"{name}: '{item}' repeats {source}; write a concrete value of your own"
        return None

    @classmethod
    def salvage(cls, data: Any, title: str = "") -> Salvage:
        """The slots of a reply (``data``, the parsed JSON) that a family can use, each checked
        on its own, and why each other one cannot be used.

        A reply is not all or nothing: one slot that is missing, refused by its validators or
        only an echo of the prompt (:meth:`copied`) leaves the others usable, and the family
        drafts that slot from its own vocabulary (:meth:`Family.filled`). Lists are mended
        first where nothing is invented: items repeated (case-insensitively) are dropped after
        their first occurrence, and so are items that fail the item pattern, as long as the
        list keeps its minimum length."""
        found = data if isinstance(data, dict) else {}
        values: dict[str, Any] = {}
        problems: dict[str, str] = {}
        for name, field in cls.model_fields.items():
            if name not in found:
                problems[name] = f"{name}: missing"
                continue
            value, mended = _mend_list(field, found[name])
            mended = f"{name}: {mended}" if mended else ""
            try:
                checked = _check_field(cls, name, value)
            except ValidationError as exc:
                problems[name] = describe_error(exc) + (f"; {mended}" if mended else "")
                continue
            echo = cls.copied(name, checked, title)
            if echo and isinstance(checked, list):  # leave the echoed items out, if it can
                kept = [item for item in checked if not cls.copied(name, [item], title)]
                with contextlib.suppress(ValidationError):
                    checked, echo = _check_field(cls, name, kept), None
            if echo:
                problems[name] = echo
            else:
                values[name] = checked
        return Salvage(values, problems)

    @classmethod
    def slot_names(cls) -> list[str]:
        """The names of the slots, in order."""
        return list(cls.model_fields)

    @classmethod
    def bounded_schema(cls) -> dict[str, Any]:
        """The JSON schema the model's reply is held to, references inlined."""
        return inline_refs(cls.model_json_schema())


@dataclass(frozen=True)
class Salvage:
    """What :meth:`Slots.salvage` kept of a reply."""

    values: dict[str, Any]
    """Slot name -> the model's value, checked (only the usable slots)."""
    problems: dict[str, str]
    """Slot name -> why the model's value cannot be used (in words a model can act on)."""


def _check_field(slots: type[Slots], name: str, value: Any) -> Any:
    """``value`` validated as slot ``name`` alone (its type, bounds and field validators)."""
    holder = slots.model_construct()
    slots.__pydantic_validator__.validate_assignment(holder, name, value)
    return getattr(holder, name)


def _mend_list(field: FieldInfo, value: Any) -> tuple[Any, str]:
    """A list of strings without repeated items and items that fail the item type, and,
    when that was needed, what was wrong (for the model, should the list end up too short)."""
    if not (isinstance(value, list) and all(isinstance(item, str) for item in value)):
        return value, ""
    args = get_args(field.annotation)
    item_type = TypeAdapter(args[0]) if get_origin(field.annotation) is list and args else None
    kept: list[str] = []
    notes: list[str] = []
    seen: set[str] = set()
    for item in (raw.strip() for raw in value):
        key = item.casefold()
        if key in seen:
            notes.append(f"'{item}' appears twice; every item must be different")
            continue
        if item_type is not None:
            try:
                item_type.validate_python(item)
            except ValidationError as exc:
                notes.append(f"'{item}': {exc.errors()[0].get('msg')}")
                continue
        seen.add(key)
        kept.append(item)
    if not notes:
        return value, ""
    low = next((m.min_length for m in field.metadata if hasattr(m, "min_length")), 0) or 0
    need = f" ({low} usable different items needed, {len(kept)} left)" if len(kept) < low else ""
    return kept, f"{notes[0]}{need}"


def describe_error(exc: ValidationError) -> str:
    """The first error of ``exc`` in one line: where, what, and the value given."""
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
    value: Any = first.get("input")
    shown = f" (you wrote {value!r:.80})" if isinstance(value, str | int | list) else ""
    return f"{loc}: {first.get('msg')}{shown}"


# --- schema bounds ---------------------------------------------------------------------------


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every local ``$ref`` replaced by the definition it names."""
    defs = schema.get("$defs", {})

    def visit(node: Any) -> Any:
        if isinstance(node, list):
            return [visit(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = dict(defs[ref.split("/")[-1]])
            target.update({k: v for k, v in node.items() if k != "$ref"})
            return visit(target)
        return {k: visit(v) for k, v in node.items() if k != "$defs"}

    return visit(schema)


class UnboundedSchemaError(ValueError):
    """A slot schema leaves some string or list without an upper bound."""


def max_json_chars(schema: dict[str, Any], path: str = "$") -> int:
    """The most characters a JSON value that satisfies ``schema`` can take when written as a
    grammar-constrained server writes it (at most one space around each separator), with no
    escapes (slot patterns admit no quote or backslash). A reply is never longer, so this many
    completion tokens always suffice: a token holds at least one character."""
    space = 1
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"]) + space
    if "const" in schema:
        return len(json.dumps(schema["const"])) + space
    kind = schema.get("type")
    if kind == "object":
        total = 2 + 2 * space
        for name, sub in schema.get("properties", {}).items():
            total += len(json.dumps(name)) + 1 + 1 + 2 * space
            total += max_json_chars(sub, f"{path}.{name}")
        if schema.get("additionalProperties") not in (False, None):
            raise UnboundedSchemaError(f"{path}: additional properties are not bounded")
        return total
    if kind == "array":
        high = schema.get("maxItems")
        if high is None:
            raise UnboundedSchemaError(f"{path}: a list without maxItems")
        item = max_json_chars(schema.get("items", {}), f"{path}[]")
        return 2 + 2 * space + high * (item + 1 + space)
    if kind == "string":
        longest = schema.get("maxLength")
        if "pattern" in schema:
            width = pattern_width(schema["pattern"])[1]
            longest = width if longest is None else min(longest, width or longest)
        if longest is None:
            raise UnboundedSchemaError(f"{path}: a string without a pattern or maxLength")
        if "pattern" not in schema:
            longest *= 6  # a free string may hold \uXXXX escapes
        return 2 + longest + space
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is None or high is None:
            raise UnboundedSchemaError(f"{path}: an integer without minimum and maximum")
        return max(len(str(low)), len(str(high))) + space
    if kind == "boolean":
        return 5 + space
    raise UnboundedSchemaError(f"{path}: type {kind!r} is not allowed in a slot schema")


def slot_lines(slots: type[Slots]) -> list[dict[str, Any]]:
    """One entry per slot for a prompt: ``name``, ``description``, ``examples``, ``choices``
    (an enum's values), ``items`` (a list's (min, max) or None) and ``fields`` (an object's, or
    a list of objects', fields with their descriptions)."""
    out = []
    for name, sub in slots.bounded_schema()["properties"].items():
        item = sub.get("items", {}) if sub.get("type") == "array" else sub
        out.append(
            {
                "name": name,
                "description": sub.get("description", ""),
                "examples": sub.get("examples") or [],
                "choices": list(item.get("enum", [])),
                "items": (sub.get("minItems", 0), sub["maxItems"]) if item is not sub else None,
                "fields": [
                    {"name": key, "description": value.get("description", "")}
                    for key, value in item.get("properties", {}).items()
                ],
            }
        )
    return out


SQL_KEYWORDS = frozenset(
    [
        "abort",
        "action",
        "add",
        "all",
        "alter",
        "analyze",
        "and",
        "as",
        "asc",
        "attach",
        "begin",
        "between",
        "by",
        "cascade",
        "case",
        "cast",
        "check",
        "collate",
        "column",
        "commit",
        "constraint",
        "create",
        "cross",
        "current",
        "default",
        "deferred",
        "delete",
        "desc",
        "distinct",
        "drop",
        "each",
        "else",
        "end",
        "escape",
        "except",
        "exists",
        "explain",
        "fail",
        "filter",
        "for",
        "foreign",
        "from",
        "full",
        "glob",
        "group",
        "having",
        "if",
        "in",
        "index",
        "inner",
        "insert",
        "instead",
        "intersect",
        "into",
        "is",
        "join",
        "key",
        "left",
        "like",
        "limit",
        "match",
        "natural",
        "no",
        "not",
        "null",
        "of",
        "offset",
        "on",
        "or",
        "order",
        "outer",
        "over",
        "plan",
        "pragma",
        "primary",
        "query",
        "raise",
        "range",
        "recursive",
        "references",
        "regexp",
        "reindex",
        "release",
        "rename",
        "replace",
        "restrict",
        "right",
        "rollback",
        "row",
        "rows",
        "savepoint",
        "select",
        "set",
        "table",
        "temp",
        "then",
        "to",
        "transaction",
        "trigger",
        "union",
        "unique",
        "update",
        "using",
        "vacuum",
        "values",
        "view",
        "virtual",
        "when",
        "where",
        "window",
        "with",
        "without",
    ]
)


def not_sql_keyword(value: str) -> str:
    """``value`` unless it is an SQL keyword (a table or column named ``order`` breaks
    unquoted SQL)."""
    if value.lower() in SQL_KEYWORDS:
        raise ValueError(f"'{value}' is an SQL keyword; choose another name")
    return value


SYSTEM_ACCOUNTS = frozenset(
    [
        "root",
        "daemon",
        "bin",
        "sys",
        "sync",
        "games",
        "man",
        "lp",
        "mail",
        "news",
        "uucp",
        "proxy",
        "www-data",
        "backup",
        "list",
        "irc",
        "gnats",
        "nobody",
        "systemd-network",
        "systemd-resolve",
        "messagebus",
        "sshd",
        "adm",
        "tty",
        "disk",
        "kmem",
        "dialout",
        "fax",
        "voice",
        "cdrom",
        "floppy",
        "tape",
        "sudo",
        "audio",
        "dip",
        "operator",
        "src",
        "shadow",
        "utmp",
        "video",
        "sasl",
        "plugdev",
        "staff",
        "users",
        "nogroup",
        "input",
        "sgx",
        "kvm",
        "render",
        "crontab",
        "ntp",
        "postgres",
        "mysql",
        "redis",
        "nginx",
        "apache",
        "user",
        "app",
        "appgroup",
        "staff-app",
        "systemd-journal",
        "systemd-timesync",
        "ssl-cert",
        "netdev",
        "uuidd",
        "tss",
        "lastlog",
        "ftp",
        "polkitd",
        "ubuntu",
        "wheel",
        "docker",
    ]
)
"""Account and group names a Debian image (or the families' own fixtures) already has."""


def not_system_account(value: str) -> str:
    """``value`` unless it names an account or group that already exists in the image
    (``useradd`` fails on those)."""
    if value.lower() in SYSTEM_ACCOUNTS:
        raise ValueError(f"'{value}' is an account the system already has; choose another name")
    return value


def words_of(text_value: str) -> list[str]:
    """The lowercase words of a slot text."""
    return re.findall(r"[a-z0-9]+", text_value.lower())
