"""Wrong solutions the family author did not write: variations of the reference solution and
model-written ones (through the stub endpoint)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from fixtures.llm_stub import Stub, reply

from factory.errors import FactoryError
from factory.llm import LlmClient, LlmSettings
from factory.validate.independent import VARIATIONS, model_wrong_solutions, variation_scripts


def run(script: str, tmp_path) -> subprocess.CompletedProcess:
    path = tmp_path / "solve.sh"
    path.write_text(script)
    return subprocess.run(["bash", str(path)], capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(shutil.which("python3") is None, reason="needs python3 on PATH")
def test_each_variation_changes_what_the_output_says(tmp_path):
    out = tmp_path / "report.txt"
    reference = f"printf '# header\\nalpha 1\\nbeta 2\\ngamma 3\\n\\n# end\\n' > {out}\n"
    scripts = variation_scripts(reference, [str(tmp_path / "missing.txt"), str(out)])
    assert sorted(scripts) == sorted(f"variation-{v}" for v in VARIATIONS)
    expected = {
        "drop-last-record": "# header\nalpha 1\nbeta 2\n\n# end\n",
        "glue-records": "# header\nalpha 1\nbeta 2gamma 3\n\n# end\n",
        "truncate-output": "# header\nalpha 1\nbe",
    }
    for kind, text in expected.items():
        result = run(scripts[f"variation-{kind}"], tmp_path)
        assert result.returncode == 0, result.stderr
        assert out.read_text() == text, kind


def test_an_output_without_records_is_removed(tmp_path):
    out = tmp_path / "only-comments.conf"
    scripts = variation_scripts(f"printf '# nothing\\n' > {out}\n", [str(out)])
    run(scripts["variation-glue-records"], tmp_path)
    assert not out.exists()


def test_a_program_output_is_removed_not_shortened(tmp_path):
    # dropping a script's last line (exit 0) would leave a correct program: no wrong solution
    out = tmp_path / "tool.sh"
    reference = f"printf '#!/bin/bash\\necho hi\\nexit 0\\n' > {out}\n"
    for kind in VARIATIONS:
        run(variation_scripts(reference, [str(out)])[f"variation-{kind}"], tmp_path)
        assert not out.exists(), kind


def test_a_folder_output_is_removed_never_left_as_the_reference_left_it(tmp_path):
    # file-permissions declares its tree (a folder): a variation that altered nothing would be
    # the reference itself, and the tests that rightly accept it would be called weak
    tree = tmp_path / "srv" / "app"
    reference = f"mkdir -p {tree}/conf && echo x > {tree}/conf/a && chmod 640 {tree}/conf/a\n"
    for kind in VARIATIONS:
        run(variation_scripts(reference, [str(tree)])[f"variation-{kind}"], tmp_path)
        assert not tree.exists(), kind


def test_no_declared_output_no_variation():
    assert variation_scripts("true\n", []) == {}
    assert variation_scripts("true\n", ["/srv/out/"]) == {}


def test_source_modules_get_no_variation(tmp_path):
    # a repo-bug fix edits a module; losing its last line (an untested helper) can still be a
    # right fix, so such a variation would call a sound test suite weak
    assert variation_scripts("true\n", ["/app/inflection/__init__.py", "/app/src/Lib.JAVA"]) == {}
    data = tmp_path / "out.csv"
    scripts = variation_scripts(f"printf 'a\\nb\\n' > {data}\n", ["/app/fix.py", str(data)])
    run(scripts["variation-drop-last-record"], tmp_path)
    assert data.read_text() == "a\n"  # the data output is still varied


@pytest.fixture
def stub():
    server = Stub()
    yield server
    server.server.shutdown()


def test_model_wrong_solutions_from_the_endpoint(stub):
    reference = "#!/bin/bash\n# fix it\nchmod 640 /etc/x\n"
    stub.queue = [
        reply(
            "```bash\n# off by one\nchmod 644 /etc/x\n```\n"
            "```bash\n# same as the reference\nchmod 640 /etc/x\n```\n"
            "```sh\n#!/bin/sh\n# forgot it\ntrue\n```\n"
            "```bash\n```\n"
        )
    ]
    client = LlmClient(LlmSettings(base_url=stub.url, model="m", max_retries=0))
    found = model_wrong_solutions(client, "Make /etc/x private.", reference, n=3)
    assert list(found) == ["model-wrong-1", "model-wrong-2"]
    assert found["model-wrong-1"] == "#!/bin/bash\n# off by one\nchmod 644 /etc/x\n"
    assert found["model-wrong-2"].startswith("#!/bin/sh\n")
    prompt = stub.requests[0]["messages"][0]["content"]
    assert "Make /etc/x private." in prompt and "chmod 640 /etc/x" in prompt


def test_a_failing_endpoint_gives_no_model_solutions(stub):
    stub.queue = [(500, {"error": {"message": "down"}})] * 3
    client = LlmClient(LlmSettings(base_url=stub.url, model="m", max_retries=0))
    assert model_wrong_solutions(client, "x", "true\n") == {}


def test_families_try_wants_both_llm_flags_or_neither(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from factory.cli import app

    monkeypatch.delenv("FACTORY_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("FACTORY_LLM_MODEL", raising=False)
    args = ["families", "try", "shell-basics", "-o", str(tmp_path), "--llm-model", "m"]
    result = CliRunner().invoke(app, args)
    assert isinstance(result.exception, FactoryError)  # the CLI prints it as one line
    assert "--llm-base-url" in str(result.exception)
    assert not (tmp_path / "validation").exists()  # refused before any container


def test_certify_trial_probes_the_model_written_solutions(stub, tmp_path, monkeypatch):
    from factory.generate import trial as trial_module
    from factory.generate.taxonomy import Difficulty

    stub.queue = [reply("```bash\n# forgot the last line\nhead -n 1 /x > /y\n```\n")]
    client = LlmClient(LlmSettings(base_url=stub.url, model="m", max_retries=0))
    seen: dict[str, dict] = {}

    def fake_certify(path, validator, *, mutations, independent, **_):
        seen.update(mutations=mutations, independent=independent)
        return "certificate"

    monkeypatch.setattr(trial_module, "certify", fake_certify)
    trial = trial_module.render_trial("csv-json-wrangle", Difficulty.EASY, 1, tmp_path)
    trial_module.certify_trial(trial, validator=None, llm=client)
    # the family's near misses count in verifier strength; the others are reported beside them
    assert seen["mutations"] == dict(trial.spec.mutations)
    assert seen["independent"]["model-wrong-1"].endswith("head -n 1 /x > /y\n")
    assert {f"variation-{v}" for v in VARIATIONS} <= set(seen["independent"])


def test_independent_probes_are_reported_not_counted_in_strength():
    from factory.validate.probes import INDEPENDENT, ProbeResult, verifier_strength

    near_miss = ProbeResult("wrong-fix", "mutation", 0.0, True, "", "")
    accepted = ProbeResult("variation-glue-records", INDEPENDENT, 1.0, False, "", "")
    assert verifier_strength([near_miss, accepted]) == 1.0
    assert verifier_strength([accepted]) is None
