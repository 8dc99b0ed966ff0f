"""The page as the agent sees it: Chromium's accessibility tree as indented text (stdlib only).

:func:`render` takes the nodes of CDP's ``Accessibility.getFullAXTree`` and prints one line a
node, its children indented under it::

    [12] link "Products"
    [31] textbox "Quantity" value="1"
    [33] button "Add to cart"
    StaticText "In stock: 12"

The number in brackets is the element's id for actions (``browse click 33``): Chromium's
backend DOM node id, which stays the same for as long as the element is in the page, so ids
from one snapshot still hold after typing or after a script redraws another part of the page;
after a navigation the page is new and so are its ids. Nodes that only group others
(``generic``, ignored nodes) are left out and their children take their place; text that
repeats its parent's name (a link's own label) is printed once.
"""

from __future__ import annotations

from typing import Any

SKIPPED = {"InlineTextBox", "LineBreak", "ListMarker"}
"""Roles never printed, nor their children (text boxes repeat their StaticText; list
bullets say nothing)."""
FLATTENED = {
    "generic",
    "none",
    "presentation",
    "Ignored",
    "IgnoredRole",
    "LabelText",
    "MenuListPopup",
}
"""Roles printed only through their children, unless they carry a name."""
TEXT = {"StaticText"}
STATES = ("checked", "selected", "expanded", "pressed", "disabled", "required", "focused")
"""Properties shown after the name, as ``checked`` or ``checked=mixed``."""
VALUED = {"textbox", "searchbox", "combobox", "spinbutton", "slider", "textarea"}


def _value(field: dict[str, Any] | None) -> Any:
    return None if not field else field.get("value")


def _quote(text: str) -> str:
    return '"' + " ".join(str(text).split()).replace('"', '\\"') + '"'


def node_line(node: dict[str, Any]) -> str:
    """One node as a line (no indent): ``[id] role "name"`` and its value and states."""
    role = _value(node.get("role")) or "unknown"
    name = _value(node.get("name")) or ""
    if role in TEXT:
        return f"StaticText {_quote(name)}"
    parts = []
    if node.get("backendDOMNodeId") is not None:
        parts.append(f"[{node['backendDOMNodeId']}]")
    parts.append(role)
    if name:
        parts.append(_quote(name))
    value = _value(node.get("value"))
    if role in VALUED and value not in (None, ""):
        parts.append(f"value={_quote(value)}")
    props = {p["name"]: _value(p.get("value")) for p in node.get("properties", [])}
    for state in STATES:
        got = props.get(state)
        if got in (None, False, "false"):
            continue
        parts.append(state if got in (True, "true") else f"{state}={got}")
    return " ".join(parts)


def render(nodes: list[dict[str, Any]], *, url: str = "", title: str = "") -> str:
    """The tree of ``nodes`` (``Accessibility.getFullAXTree``'s list) as text, headed by the
    page's URL and title when given."""
    by_id = {n["nodeId"]: n for n in nodes}
    children = {n["nodeId"]: list(n.get("childIds", [])) for n in nodes}
    roots = [n for n in nodes if n.get("parentId") not in by_id]
    lines = []
    if url:
        lines.append(f"URL: {url}")
    if title:
        lines.append(f"Title: {title}")

    def walk(node_id: str, depth: int, parent_name: str) -> None:
        node = by_id.get(node_id)
        if node is None:
            return
        role = _value(node.get("role")) or ""
        name = " ".join(str(_value(node.get("name")) or "").split())
        if role in SKIPPED:
            return
        shown = not node.get("ignored") and not (role in FLATTENED and not name)
        if role in TEXT and (not name or name == parent_name):
            shown = False
        if shown:
            lines.append("  " * depth + node_line(node))
        for child in children.get(node_id, []):
            walk(child, depth + 1 if shown else depth, name if shown else parent_name)

    for root in roots:
        walk(root["nodeId"], 0, "")
    return "\n".join(lines) + "\n"
