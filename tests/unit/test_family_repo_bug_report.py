"""repo-bug issue reports: symptoms from the outside, never a file, module or line; the
optional LLM report is used only when it passes the same checks (stub server)."""

from __future__ import annotations

import random

import pytest
from fixtures.llm_stub import Stub, reply

from factory.families.terminal.repo_bug.report import (
    Forbidden,
    Symptom,
    called_names,
    clean_message,
    llm_report,
    public_names,
    template_report,
)
from factory.llm import LlmClient, LlmSettings

FILES = ["src/shapes/__init__.py", "src/shapes/geometry.py", "tests/test_geometry.py", "README.md"]
FORBIDDEN = Forbidden.of(FILES, "shapes", "src")
SYMPTOMS = [
    Symptom("test_area_of_square", ["area"], "AssertionError", "assert 12 == 16"),
    Symptom("test_scale_negative", ["scale", "Shape"], "ValueError", "factor must be positive"),
]


@pytest.mark.parametrize(
    "text",
    [
        "the bug is in src/shapes/geometry.py",
        "look at geometry.py",
        "shapes.geometry.area is wrong",
        "see line 42",
        "File geometry.py:42 raises",
        "tests/test_geometry.py fails",
    ],
)
def test_locations_are_found(text):
    assert FORBIDDEN.problems(text)


@pytest.mark.parametrize(
    "text",
    [
        "`area(square(4))` returns 12 instead of 16",
        "the shapes package raises ValueError",
        "run the tests in tests",
        "README-like wording, version 1.2.3",
    ],
)
def test_symptoms_are_not_locations(text):
    assert FORBIDDEN.problems(text) == []


def test_clean_message_keeps_the_symptom_and_drops_locations():
    assert clean_message("AssertionError: assert 12 == 16\n+ where 12 = area()", FORBIDDEN) == (
        "AssertionError",
        "assert 12 == 16",
    )
    assert clean_message("KeyError: 'x'", FORBIDDEN) == ("KeyError", "'x'")
    assert clean_message("shapes.errors.ShapeError: bad", FORBIDDEN) == ("ShapeError", "bad")
    error, detail = clean_message("ValueError: failed in src/shapes/geometry.py line 3", FORBIDDEN)
    assert (error, detail) == ("ValueError", "")
    assert clean_message("AssertionError: <Shape at 0x7f00aa> != 1", FORBIDDEN)[1] == "<Shape> != 1"


def test_public_and_called_names():
    sources = {
        "src/shapes/geometry.py": "def area(s):\n    pass\n\ndef _hidden():\n    pass\n\nclass Shape:\n    pass\n"
    }
    public = public_names(sources)
    assert public == {"area", "Shape"}
    test = "class TestA:\n    def test_x(self):\n        assert area(Shape()) == 1\n        _hidden()\n"
    assert called_names(test, "tests/test_geometry.py::TestA::test_x[1]", public) == [
        "area",
        "Shape",
    ]
    assert called_names(test, "tests/test_geometry.py::TestA::missing", public) == []


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_template_report_names_no_location_and_shows_the_symptom(level):
    text = template_report(
        random.Random(3),
        project="shapes",
        version="1.0",
        level=level,
        symptoms=SYMPTOMS,
        run_command="cd /app && python3 -m pytest -q -o addopts= tests",
    )
    assert FORBIDDEN.problems(text) == []
    assert "`area`" in text and "shapes 1.0" in text
    assert ("test_area_of_square" in text) is (level == "easy")
    assert ("assert 12 == 16" in text) is (level != "hard")
    assert "Do not edit, delete or skip" in text


def _client(stub: Stub) -> LlmClient:
    return LlmClient(LlmSettings(base_url=stub.url, model="m", max_retries=0))


def _llm(stub: Stub | None, level: str = "medium") -> str | None:
    """The LLM report of SYMPTOMS, written through ``stub``'s server, or through the configured
    endpoint when there is no stub."""
    return llm_report(
        project="shapes",
        version="1.0",
        level=level,
        symptoms=SYMPTOMS,
        run_command="cd /app && python3 -m pytest -q",
        forbidden=FORBIDDEN,
        seed=1,
        client=_client(stub) if stub is not None else None,
    )


def test_llm_report_is_used_when_it_passes_the_checks():
    stub = Stub()
    stub.queue.append(
        reply(
            "# area() is off for squares\n\nCalling `area` on a 4x4 square gives 12, not 16; "
            "`scale` with a negative factor raises ValueError although the docs allow it."
        )
    )
    text = _llm(stub)
    assert text is not None and text.startswith("# area() is off")
    assert "Do not edit, delete or skip" in text  # the rules are always the template's
    prompt = stub.requests[0]["messages"][1]["content"]
    assert "area" in prompt and "ValueError" in prompt and "test_area_of_square" not in prompt


@pytest.mark.parametrize(
    "answer",
    [
        "# Bug\n\nThe problem is in src/shapes/geometry.py where area multiplies wrongly, fix it.",
        "# Bug\n\nshapes.geometry has an off-by-one on line 12 when computing the area of shapes.",
        "no title line, but otherwise a long enough answer about area being wrong for squares",
        "# Too short",
        "# Unrelated\n\nThe documentation website has a broken stylesheet and renders badly today.",
    ],
)
def test_llm_report_that_names_a_location_or_misses_the_symptom_is_refused(answer):
    stub = Stub()
    stub.queue.append(reply(answer))
    assert _llm(stub) is None


def test_llm_failure_falls_back():
    stub = Stub()
    stub.queue.append((400, {"error": {"message": "bad request"}}))
    assert _llm(stub) is None


def test_no_endpoint_means_no_llm_report(monkeypatch):
    monkeypatch.delenv("FACTORY_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("FACTORY_LLM_MODEL", raising=False)
    assert _llm(None, "easy") is None
