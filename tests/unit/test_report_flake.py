"""The suite report shows the verifier flake rate where `--flake-runs` measured it."""

from __future__ import annotations

from publish_suite import make_suite

from factory.publish.report import collect, render
from factory.tasks.model import load_task_config


def test_report_lists_flaky_verifiers(tmp_path):
    suite = make_suite(tmp_path, edge_cases=False)
    tasks = sorted((suite / "tasks").iterdir())
    for task, rate in zip(tasks[:2], (0.25, 0.0), strict=True):
        config = load_task_config(task / "task.toml")
        config.set_provenance(config.provenance.model_copy(update={"flake_rate": rate}))
        (task / "task.toml").write_text(config.to_toml())
    data = collect(suite)
    assert sorted(t.flake_rate for t in data.tasks if t.flake_rate is not None) == [0.0, 0.25]
    html = render(data, tmp_path / "r.html")
    assert 'id="flake"' in html and "measured for 2 tasks: 1 flaky, highest 0.25" in html
    assert f"<td>{tasks[0].name}</td>" in html


def test_report_without_flake_rates_stays_as_it_was(tmp_path):
    html = render(collect(make_suite(tmp_path, edge_cases=False)), tmp_path / "r.html")
    assert 'id="flake"' not in html
