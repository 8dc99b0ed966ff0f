"""``browse``: a text browser for agents (stdlib only).

It shows a page as text: headings, paragraphs, table rows, and every interactive element with
a number - links, text boxes, check boxes, selects and buttons. Actions refer to those numbers.
Cookies (the app's session) and history persist between calls in ``$BROWSE_HOME`` (default
``/tmp/.browse``), so each action is one shell command::

    browse open http://127.0.0.1:8000/      go to a URL (relative URLs work too)
    browse view                              show the current page again
    browse click N                           follow link N, press button N, toggle box N
    browse type N "text"                     fill text box N (sent when its form is submitted)
    browse select N "option"                 choose an option of select N (by text or value)
    browse submit N                          submit the form that element N belongs to
    browse back                              go back one page

Typed values are kept until the form is submitted. Pressing a button or submitting sends the
form with its hidden fields (the CSRF token included), like a real browser.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

HOME = Path(os.environ.get("BROWSE_HOME", "/tmp/.browse"))
DEFAULT_ORIGIN = os.environ.get("BROWSE_ORIGIN", "http://127.0.0.1:8000")
TEXT_INPUTS = {"text", "password", "email", "number", "search", "tel", "url", "date", ""}
_BLOCK = {
    "p",
    "div",
    "li",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "form",
    "nav",
    "br",
    "table",
    "ul",
    "ol",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "dt",
    "dd",
}


class Page(HTMLParser):
    """Parse HTML into lines of text and numbered elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.lines: list[str] = []
        self.current = ""
        self.elements: list[dict] = []
        self.forms: list[dict] = []
        self.labels: dict[str, str] = {}
        self._stack: list[str] = []
        self._link: dict | None = None
        self._button: dict | None = None
        self._select: dict | None = None
        self._option: dict | None = None
        self._textarea: dict | None = None
        self._label_for: str | None = None
        self._label_text = ""
        self._label_elements: list[dict] = []
        self._in_title = False
        self._skip = 0

    # --- text -------------------------------------------------------------------------
    def _emit(self, text: str) -> None:
        if self.current and not self.current.endswith((" ", "|")):
            self.current += " "
        self.current += text

    def _break(self) -> None:
        if self.current.strip():
            self.lines.append(self.current.strip())
        self.current = ""

    def _form(self) -> int | None:
        return len(self.forms) - 1 if "form" in self._stack else None

    def _add(self, kind: str, **fields: object) -> dict:
        element = {"id": len(self.elements) + 1, "kind": kind, "form": self._form(), **fields}
        self.elements.append(element)
        if "label" in self._stack:
            self._label_elements.append(element)
        return element

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("script", "style"):
            self._skip += 1
            return
        if tag in _BLOCK:
            self._break()
        if tag not in ("input", "br", "img", "meta", "link", "hr"):
            self._stack.append(tag)
        if tag == "title":
            self._in_title = True
        elif tag in ("h1", "h2", "h3", "h4"):
            self._emit("#" * int(tag[1]))
        elif tag == "li":
            self._emit("-")
        elif tag in ("td", "th") and self.current:
            self._emit("|")
        elif tag == "form":
            self.forms.append({"action": a.get("action", ""), "method": a.get("method", "get")})
        elif tag == "a" and "href" in a:
            self._link = self._add("link", href=a["href"], text="")
        elif tag == "label":
            self._label_for = a.get("for")
            self._label_text = ""
            self._label_elements = []
        elif tag == "button":
            self._button = self._add(
                "button",
                name=a.get("name", ""),
                value=a.get("value", ""),
                text="",
                submit=a.get("type", "submit") == "submit",
            )
        elif tag == "input":
            self._input(a)
        elif tag == "select":
            self._select = self._add(
                "select", name=a.get("name", ""), options=[], label=self._label(a)
            )
        elif tag == "option" and self._select is not None:
            self._option = {"value": a.get("value"), "text": "", "selected": "selected" in a}
            self._select["options"].append(self._option)
        elif tag == "textarea":
            self._textarea = self._add(
                "textbox", name=a.get("name", ""), value="", label=self._label(a), multiline=True
            )

    def _label(self, a: dict) -> str:
        return (
            self.labels.get(a.get("id", ""), "")
            or (self._label_text.strip() if "label" in self._stack else "")
            or a.get("placeholder", "")
            or a.get("aria-label", "")
            or a.get("name", "")
        )

    def _input(self, a: dict) -> None:
        kind = a.get("type", "").lower()
        if kind == "hidden":
            self._add("hidden", name=a.get("name", ""), value=a.get("value", ""))
            return
        if kind in ("submit", "button", "image"):
            element = self._add(
                "button",
                name=a.get("name", ""),
                value=a.get("value", ""),
                text=a.get("value", "Submit"),
                submit=kind != "button",
            )
            self._emit(f'[{element["id"]}] button "{element["text"]}"')
            return
        if kind in ("checkbox", "radio"):
            element = self._add(
                kind,
                name=a.get("name", ""),
                value=a.get("value", "on"),
                checked="checked" in a,
                label=self._label(a),
            )
        else:
            element = self._add(
                "textbox",
                name=a.get("name", ""),
                value=a.get("value", ""),
                label=self._label(a),
                secret=kind == "password",
            )
        element["dom_id"] = a.get("id", "")
        self._emit(f"{{{element['id']}}}")  # placeholder, rendered in view()

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
            return
        if tag in self._stack:
            while self._stack and self._stack.pop() != tag:
                pass
        if tag == "title":
            self._in_title = False
        elif tag == "a" and self._link is not None:
            self._emit(f'[{self._link["id"]}] link "{self._link["text"].strip()}"')
            self._link = None
        elif tag == "button" and self._button is not None:
            self._emit(f'[{self._button["id"]}] button "{self._button["text"].strip()}"')
            self._button = None
        elif tag == "label":
            text = self._label_text.strip()
            for element in self._label_elements:  # <label><input> text</label>
                if text and element["kind"] in ("textbox", "checkbox", "radio", "select"):
                    element["label"] = text
            self._label_elements = []
            if self._label_for:
                self.labels[self._label_for] = self._label_text.strip()
                for element in self.elements:
                    if element.get("dom_id") == self._label_for:
                        element["label"] = self._label_text.strip()
            self._label_for = None
        elif tag == "option":
            self._option = None
        elif tag == "select" and self._select is not None:
            self._emit(f"{{{self._select['id']}}}")
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            self._emit(f"{{{self._textarea['id']}}}")
            self._textarea = None
        if tag in _BLOCK:
            self._break()

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        text = " ".join(data.split())
        if self._in_title:
            self.title += text
            return
        if not text:
            return
        if self._option is not None:
            self._option["text"] += text
        elif self._textarea is not None:
            self._textarea["value"] += data
        elif self._link is not None:
            self._link["text"] += " " + text
        elif self._button is not None:
            self._button["text"] += " " + text
        else:
            if "label" in self._stack:
                self._label_text += " " + text
            self._emit(text)

    def close(self) -> None:
        super().close()
        self._break()


def parse(document: str) -> Page:
    page = Page()
    page.feed(document)
    page.close()
    return page


def _describe(element: dict, typed: dict) -> str:
    value = typed.get(str(element["id"]), element.get("value", ""))
    kind = element["kind"]
    label = element.get("label", "")
    if kind == "textbox":
        shown = "*" * len(value) if element.get("secret") and value else value
        return f'[{element["id"]}] textbox "{label}" value="{shown}"'
    if kind in ("checkbox", "radio"):
        checked = typed.get(str(element["id"]), element["checked"])
        return f'[{element["id"]}] {kind} "{label}" ({"checked" if checked else "unchecked"})'
    if kind == "select":
        chosen = typed.get(str(element["id"]))
        if chosen is None and not any(o["selected"] for o in element["options"]):
            first = element["options"][:1]
            if first:  # browsers show the first option as chosen
                chosen = first[0]["value"] if first[0]["value"] is not None else first[0]["text"]
        options = []
        for option in element["options"]:
            value = option["value"] if option["value"] is not None else option["text"]
            mark = (value == chosen) if chosen is not None else option["selected"]
            options.append(f"{option['text'].strip()}{' (selected)' if mark else ''}")
        return f'[{element["id"]}] select "{label}" options: {" / ".join(options)}'
    return ""


# --- session state --------------------------------------------------------------------------
def _load_state() -> dict:
    path = HOME / "state.json"
    if path.exists():
        return json.loads(path.read_text())
    return {"url": None, "status": None, "history": [], "typed": {}}


def _save_state(state: dict) -> None:
    HOME.mkdir(parents=True, exist_ok=True)
    (HOME / "state.json").write_text(json.dumps(state))


def _opener() -> tuple[urllib.request.OpenerDirector, http.cookiejar.MozillaCookieJar]:
    HOME.mkdir(parents=True, exist_ok=True)
    jar = http.cookiejar.MozillaCookieJar(str(HOME / "cookies.txt"))
    if (HOME / "cookies.txt").exists():
        jar.load(ignore_discard=True, ignore_expires=True)
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar)), jar


def fetch(state: dict, url: str, data: dict | None = None, *, remember: bool = True) -> None:
    """GET (or POST ``data``) ``url``, store the page, print it."""
    base = state["url"] or DEFAULT_ORIGIN + "/"
    url = urllib.parse.urljoin(base, url)
    opener, jar = _opener()
    body = urllib.parse.urlencode(data, doseq=True).encode() if data is not None else None
    try:
        with opener.open(urllib.request.Request(url, data=body), timeout=30) as response:
            status, final, document = response.status, response.geturl(), response.read()
    except urllib.error.HTTPError as exc:
        status, final, document = exc.code, exc.geturl() or url, exc.read()
    except OSError as exc:
        sys.exit(f"browse: cannot load {url}: {exc}")
    jar.save(ignore_discard=True, ignore_expires=True)
    if remember and state["url"]:
        state["history"].append(state["url"])
    state.update(url=final, status=status, typed={})
    (HOME / "page.html").write_bytes(document)
    _save_state(state)
    view(state)


def view(state: dict) -> None:
    if not state["url"]:
        print("No page yet: browse open URL")
        return
    page = parse((HOME / "page.html").read_text(errors="replace"))
    print(f"URL: {state['url']} (status {state['status']})")
    print(f"Title: {page.title}")
    print("-" * 60)
    by_id = {str(e["id"]): e for e in page.elements}
    for line in page.lines:
        for key, element in by_id.items():
            if "{" + key + "}" in line:
                line = line.replace("{" + key + "}", _describe(element, state["typed"]))
        print(line)


def _element(page: Page, number: str) -> dict:
    try:
        element = page.elements[int(number) - 1]
    except (ValueError, IndexError):
        sys.exit(f"browse: no element [{number}] on this page (see `browse view`)")
    if element["kind"] == "hidden":
        sys.exit(f"browse: no element [{number}] on this page (see `browse view`)")
    return element


def submit(state: dict, page: Page, form_index: int | None, button: dict | None) -> None:
    if form_index is None:
        sys.exit("browse: that element is not inside a form")
    form = page.forms[form_index]
    data: list[tuple[str, str]] = []
    for element in page.elements:
        if element["form"] != form_index or not element.get("name"):
            continue
        key = str(element["id"])
        kind = element["kind"]
        if kind in ("hidden", "textbox"):
            data.append((element["name"], state["typed"].get(key, element.get("value", ""))))
        elif kind in ("checkbox", "radio"):
            if state["typed"].get(key, element["checked"]):
                data.append((element["name"], element["value"]))
        elif kind == "select":
            chosen = state["typed"].get(key)
            if chosen is None:
                picked = [o for o in element["options"] if o["selected"]] or element["options"][:1]
                chosen = (
                    picked[0]["value"]
                    if picked and picked[0]["value"] is not None
                    else picked[0]["text"]
                    if picked
                    else ""
                )
            data.append((element["name"], chosen))
    if button is not None and button.get("name"):
        data.append((button["name"], button.get("value", "")))
    action = form["action"] or state["url"]
    if form["method"].lower() == "post":
        fetch(state, action, data)  # type: ignore[arg-type]
    else:
        split = urllib.parse.urlsplit(urllib.parse.urljoin(state["url"], action))
        target = urllib.parse.urlunsplit(split._replace(query=urllib.parse.urlencode(data)))
        fetch(state, target)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        print(__doc__.strip())
        return 0
    state = _load_state()
    action, rest = args[0], args[1:]
    if action == "open" and len(rest) == 1:
        fetch(state, rest[0])
        return 0
    if action == "view":
        view(state)
        return 0
    if action == "back":
        if not state["history"]:
            sys.exit("browse: no earlier page")
        previous = state["history"].pop()
        fetch(state, previous, remember=False)
        return 0
    if not state["url"]:
        sys.exit("browse: open a page first (browse open URL)")
    page = parse((HOME / "page.html").read_text(errors="replace"))
    if action == "click" and len(rest) == 1:
        element = _element(page, rest[0])
        if element["kind"] == "link":
            fetch(state, element["href"])
        elif element["kind"] == "button":
            if not element.get("submit"):
                sys.exit("browse: that button does nothing without JavaScript")
            submit(state, page, element["form"], element)
        elif element["kind"] in ("checkbox", "radio"):
            key = str(element["id"])
            if element["kind"] == "radio":
                for other in page.elements:
                    if other["kind"] == "radio" and other["name"] == element["name"]:
                        state["typed"][str(other["id"])] = False
                state["typed"][key] = True
            else:
                state["typed"][key] = not state["typed"].get(key, element["checked"])
            _save_state(state)
            view(state)
        else:
            sys.exit(f"browse: [{rest[0]}] is a {element['kind']}; use type/select on it")
        return 0
    if action == "type" and len(rest) == 2:
        element = _element(page, rest[0])
        if element["kind"] != "textbox":
            sys.exit(f"browse: [{rest[0]}] is a {element['kind']}, not a text box")
        state["typed"][rest[0]] = rest[1]
        _save_state(state)
        print(f"typed into [{rest[0]}] {element.get('label', '')!r}; submit the form to send it")
        return 0
    if action == "select" and len(rest) == 2:
        element = _element(page, rest[0])
        if element["kind"] != "select":
            sys.exit(f"browse: [{rest[0]}] is a {element['kind']}, not a select")
        for option in element["options"]:
            value = option["value"] if option["value"] is not None else option["text"]
            if rest[1] in (value, option["text"].strip()):
                state["typed"][rest[0]] = value
                _save_state(state)
                print(f"selected {option['text'].strip()!r} in [{rest[0]}]")
                return 0
        sys.exit(f"browse: [{rest[0]}] has no option {rest[1]!r}")
    if action == "submit" and len(rest) == 1:
        element = _element(page, rest[0])
        submit(state, page, element["form"], element if element["kind"] == "button" else None)
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
