"""git-repair's generation logic, without Docker: the repository model computes every commit id
in Python; replaying the plan with the real git (the image's own make_repo.py, run on the host)
must produce exactly those ids and branches, and leave each scenario's breakage in place."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from factory.families import registry
from factory.vocabulary import Difficulty

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git binary")

FAMILY = registry.get("git-repair")
MAKE_REPO = FAMILY.templates / "environment" / "make_repo.py"


def draft(difficulty: Difficulty, seed: int):
    return FAMILY.draft(random.Random(seed), difficulty, {})


def replay(d, tmp_path: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """Build the task's repository under tmp_path with make_repo.py, as the image does."""
    plan = json.loads(d.files["environment/plan.json"])
    tmp_path.mkdir(parents=True, exist_ok=True)
    repo = tmp_path / "repo"
    plan["ops"][0]["path"] = str(repo)
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    config = tmp_path / "gitconfig"
    config.write_text(
        f"[user]\n\tname = {d.context['user_name']}\n\temail = {d.context['user_email']}\n"
        f"[init]\n\tdefaultBranch = {d.context['main']}\n[advice]\n\tdetachedHead = false\n"
    )
    env = {"GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        ["python3", str(MAKE_REPO), str(tmp_path / "plan.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return repo, run


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.parametrize("difficulty", list(Difficulty))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_real_git_reproduces_every_commit_id_and_branch(difficulty, seed, tmp_path):
    d = draft(difficulty, seed)
    repo, run = replay(d, tmp_path)
    # make_repo.py exits non-zero when git's id of a commit differs from the model's
    assert run.returncode == 0, run.stderr + run.stdout
    refs = git(repo, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
    branches = dict(line.split() for line in refs.splitlines())
    assert branches == d.context["branches"]


def test_each_scenario_leaves_its_breakage(tmp_path):
    easy = draft(Difficulty.EASY, 5)
    repo, run = replay(easy, tmp_path / "easy")
    assert run.returncode == 0, run.stderr
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "HEAD"  # detached
    assert easy.context["info"]["work"][-1] == git(repo, "rev-parse", "HEAD")

    medium = draft(Difficulty.MEDIUM, 5)
    repo, run = replay(medium, tmp_path / "medium")
    assert run.returncode == 0, run.stderr
    assert (repo / ".git" / "MERGE_HEAD").is_file()  # stopped at conflicts
    assert git(repo, "diff", "--name-only", "--diff-filter=U")

    hard = draft(Difficulty.HARD, 5)
    repo, run = replay(hard, tmp_path / "hard")
    assert run.returncode == 0, run.stderr
    lost = hard.context["info"]["lost"]
    reachable = git(repo, "rev-list", "--all").split()
    assert lost not in reachable  # only git fsck finds it
    assert git(repo, "cat-file", "-t", lost) == "commit"
    assert hard.context["info"]["topic_tip"] not in reachable


def test_same_seed_same_plan_and_secrets_stay_out_of_the_instruction():
    one, two = draft(Difficulty.HARD, 7), draft(Difficulty.HARD, 7)
    assert one.files == two.files and one.secrets == two.secrets
    assert draft(Difficulty.HARD, 8).files != one.files
    assert all(len(s) == 40 for s in one.secrets)  # commit ids the agent must find
