"""git-repair: bring a broken git repository back into the state a colleague describes
(commits stranded on a detached HEAD, a half-done merge, a lost branch). The repository is
modelled in :mod:`.repo`, so the hidden tests know every commit id in advance."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from factory.families.base import Draft, Family, register
from factory.vocabulary import Difficulty

from .project import (
    DOMAINS,
    HOSTS,
    NOUNS,
    PACKAGES,
    SETTING_KEYS,
    VERBS,
    Project,
    changelog,
    draw_people,
    ini_text,
    module_text,
    py_function,
)
from .repo import Repo


def _git_easy(rng: random.Random, repo: Repo, proj: Project, people) -> dict[str, Any]:
    """Detached HEAD with commits on it (and maybe uncommitted work) to bring onto a branch."""
    me = people[0]
    n_base = rng.randint(3, 5)
    files = proj.initial()
    repo.commit(rng, "Initial commit", rng.choice(people), files)
    for i in range(n_base - 1):
        write, subject = (
            proj.add_function(repo.files(), rng.randrange(3)) if i % 2 == 0 else proj.add_doc()
        )
        repo.commit(rng, subject, rng.choice(people), write)
    rebase = rng.random() < 0.5
    tag = f"v{rng.randint(0, 3)}.{rng.randint(1, 9)}.{rng.randint(0, 9)}"
    base = repo.tip
    repo.tag(tag, base)
    other = rng.choice(["release", "staging", "hotfix", "experiment"])
    repo.create_branch(other, repo.commits[base].parents[0])
    moved: list[str] = []
    if rebase:
        # main moved on after the tag; those commits only touch docs/ and README
        for _ in range(rng.randint(1, 2)):
            write, subject = proj.readme_section(repo.files()) if not moved else proj.add_doc()
            moved.append(repo.commit(rng, subject, rng.choice(people), write))
    main_before = repo.tip
    repo.detach(base)
    work: list[str] = []
    n_work = rng.randint(2, 3)
    indexes = rng.sample(range(3), 2) + [3]
    for i in range(n_work):
        write, subject = proj.add_function(repo.files(), indexes[i % len(indexes)])
        work.append(repo.commit(rng, subject, me, write))
    pending = None
    if rng.random() < 0.6:
        path = proj.module_path(indexes[0])
        name, code = py_function(rng, proj.taken)
        content = repo.files()[path].rstrip("\n") + "\n\n\n" + code
        repo.worktree({path: content})
        pending = {
            "path": path,
            "content": content,
            "subject": f"Add {name} to {proj.modules[indexes[0]]}",
        }
    # main's files plus what the detached work changed (the two touch different files)
    base_files, tip_files = repo.files(base), repo.files(work[-1])
    expected = repo.files(main_before)
    expected.update({p: c for p, c in tip_files.items() if base_files.get(p) != c})
    if pending:
        expected[pending["path"]] = pending["content"]
    subjects = [repo.commits[s].subject for s in reversed(work)]
    history = ([pending["subject"]] if pending else []) + subjects
    history += [repo.commits[s].subject for s in _ancestry(repo, main_before)]
    changes = []
    for sha in work:
        before, after = repo.files(repo.commits[sha].parents[0]), repo.commits[sha].files
        changes.append(sorted(p for p in after if before.get(p) != after[p]))
    return {
        "main_subjects": history,
        "work_changes": changes,
        "rebase": rebase,
        "tag": tag,
        "tag_sha": base,
        "other": other,
        "other_sha": repo.branches[other],
        "main_before": main_before,
        "work": work,
        "work_subjects": subjects,
        "work_author": list(me),
        "pending": pending,
        "expected_files": expected,
        "moved_count": len(moved),
    }


# Conflict resolution rules of the medium scenario.
MERGE_RULES = ["theirs", "ours", "max", "union-sorted", "concat"]


def _git_medium(rng: random.Random, repo: Repo, proj: Project, people) -> dict[str, Any]:
    """An interrupted merge with conflicts to resolve by stated rules."""
    feature = (
        rng.choice(["feature", "topic", "wip", "dev"])
        + "/"
        + rng.choice(["tuning", "limits", "rollout", "cleanup", "hardening", "refresh", "sync"])
    )
    rules = rng.sample(MERGE_RULES, 3)
    ini_path = f"config/{rng.choice(['service', 'runtime', 'worker', 'limits'])}.ini"
    list_path = rng.choice(["allowed_hosts.txt", "requirements.txt"])
    log_path = rng.choice(["CHANGELOG.md", "NEWS.md", "HISTORY.md"])
    pyconst_path = f"{proj.pkg}/{rng.choice(['constants', 'defaults', 'settings'])}.py"
    files = proj.initial()
    keys = rng.sample(SETTING_KEYS, 7)
    ini = {k: rng.randint(2, 60) * 5 for k in keys}
    section = proj.name
    files[ini_path] = ini_text(ini, section)
    if list_path == "requirements.txt":
        pool = sorted(f"{p}>={rng.randint(1, 9)}.{rng.randint(0, 20)}" for p in PACKAGES)
    else:
        pool = sorted(f"{h}.{d}" for h in HOSTS for d in DOMAINS)
    chosen = sorted(rng.sample(pool, 14))
    base_list, spare = chosen[::2], chosen[1::2]
    files[list_path] = "".join(f"{x}\n" for x in base_list)
    log_entries = [f"{rng.choice(VERBS).capitalize()} {rng.choice(NOUNS)} handling" for _ in "ab"]
    files[log_path] = changelog(log_entries)
    consts = {k.upper(): rng.randint(1, 40) * 10 for k in rng.sample(SETTING_KEYS, 4)}
    files[pyconst_path] = '"""Tunable constants."""\n\n' + "".join(
        f"{k} = {v}\n" for k, v in consts.items()
    )
    repo.commit(rng, "Initial import", rng.choice(people), files)
    for _ in range(rng.randint(1, 3)):
        write, subject = proj.add_function(repo.files(), rng.randrange(3))
        repo.commit(rng, subject, rng.choice(people), write)
    base_files = repo.files()
    repo.create_branch(feature)

    changed_keys = rng.sample(keys, rng.randint(2, 4))
    vals: dict[str, dict[str, int]] = {"ours": {}, "theirs": {}}
    for i, k in enumerate(changed_keys):
        a, b = sorted(rng.sample([v for v in range(10, 400, 5) if v != ini[k]], 2))
        # each side wins at least one setting, so "larger" differs from both whole files
        if i == 1 or (i > 1 and rng.random() < 0.5):
            a, b = b, a
        vals["ours"][k], vals["theirs"][k] = a, b
    # list: both sides add at the same spot (a guaranteed conflict) plus elsewhere
    add_ours = set(rng.sample(spare, 3))
    add_theirs = set(rng.sample(spare, 3))
    while add_ours <= add_theirs or add_theirs <= add_ours:
        add_theirs = set(rng.sample(spare, 3))
    log_ours = [f"{rng.choice(VERBS).capitalize()} the {rng.choice(NOUNS)} cache" for _ in "ab"]
    log_theirs = [
        f"{rng.choice(VERBS).capitalize()} {rng.choice(NOUNS)} limits"
        for _ in range(rng.randint(1, 2))
    ]
    const_keys = list(consts)
    ck = rng.sample(const_keys, 2)

    def side(which: str) -> dict[str, str]:
        out: dict[str, str] = {}
        mine = {**ini, **vals[which]}
        out[ini_path] = ini_text(mine, section)
        extra = add_ours if which == "ours" else add_theirs
        out[list_path] = "".join(f"{x}\n" for x in sorted(set(base_list) | extra))
        news = log_ours if which == "ours" else log_theirs
        out[log_path] = changelog(news + log_entries)
        c = dict(consts)
        for i, k in enumerate(ck):
            c[k] = consts[k] + (10 * (i + 1) if which == "ours" else -5 * (i + 1))
        if which == "theirs":
            c[f"{rng.choice(NOUNS).upper()}_LIMIT"] = rng.randint(2, 90)
        out[pyconst_path] = '"""Tunable constants."""\n\n' + "".join(
            f"{k} = {v}\n" for k, v in c.items()
        )
        return out

    theirs_files = side("theirs")
    ours_files = side("ours")

    def diverge(
        branch: str,
        first: Callable[[], tuple[dict[str, str], str]],
        subjects: list[str],
        conflicting: dict[str, str],
    ) -> tuple[dict[str, str], str]:
        """On ``branch``: a commit that merges cleanly (``first()``: its files and subject,
        drawn once the branch is checked out), then the ``conflicting`` one; the files of the
        first and the branch's tip."""
        repo.checkout(branch)
        write, subject = first()
        repo.commit(rng, subject, rng.choice(people), write)
        repo.commit(rng, rng.choice(subjects), rng.choice(people), conflicting)
        return write, repo.tip

    feature_doc, feature_tip = diverge(
        feature,
        proj.add_doc,
        ["Tune limits for the new rollout", "Adjust defaults", "Rework settings"],
        theirs_files,
    )
    main_readme, main_tip = diverge(
        repo.branch,
        lambda: proj.readme_section(repo.files()),
        ["Update production settings", "Raise limits", "Retune configuration"],
        ours_files,
    )
    repo.merge_conflicted(rng, feature, f"Merge branch '{feature}'", people[0])

    # the expected result of the merge
    expected = dict(base_files)
    expected.update(feature_doc)
    expected.update(main_readme)
    rule_of: dict[str, str] = {}
    descriptions: list[str] = []
    paths_by_rule = {
        "max": ini_path,
        "union-sorted": list_path,
        "concat": log_path,
    }
    # theirs/ours apply to whichever conflicted files the other rules do not claim
    free = [p for r, p in paths_by_rule.items() if r not in rules] + [pyconst_path]
    rng.shuffle(free)
    for rule in rules:
        path = paths_by_rule.get(rule) or free.pop()
        rule_of[path] = rule
    for path in free:  # files no rule claimed: take the feature branch's version
        rule_of[path] = "theirs"
    for path, rule in sorted(rule_of.items()):
        if rule == "theirs":
            expected[path] = theirs_files[path]
            descriptions.append(
                f"`{path}`: take the version from `{feature}` as a whole (the entire file "
                f"exactly as it is on `{feature}`)"
            )
        elif rule == "ours":
            expected[path] = ours_files[path]
            descriptions.append(
                f"`{path}`: keep the version from `{repo.branch}` as a whole (the entire file "
                f"exactly as it is on `{repo.branch}`)"
            )
        elif rule == "max":
            merged = dict(ini)
            for k in changed_keys:
                merged[k] = max(vals["ours"][k], vals["theirs"][k])
            expected[path] = ini_text(merged, section)
            descriptions.append(
                f"`{path}`: for every setting that both branches changed, keep the larger "
                "of the two values; every other line as it is on both branches"
            )
        elif rule == "union-sorted":
            union = sorted(set(base_list) | add_ours | add_theirs)
            expected[path] = "".join(f"{x}\n" for x in union)
            descriptions.append(
                f"`{path}`: keep every entry from both branches, one per line, sorted "
                "alphabetically (byte order), each entry only once"
            )
        elif rule == "concat":
            expected[path] = changelog(log_ours + log_theirs + log_entries)
            descriptions.append(
                f"`{path}`: keep the new entries of both branches: first those added on "
                f"`{repo.branch}`, then those added on `{feature}`, followed by the older "
                "entries as before"
            )
    return {
        "feature": feature,
        "feature_tip": feature_tip,
        "main_before": main_tip,
        "rules": descriptions,
        "rule_of": rule_of,
        "expected_files": expected,
        "ours_files": {p: ours_files[p] for p in rule_of},
        "theirs_files": {p: theirs_files[p] for p in rule_of},
    }


def _git_hard(rng: random.Random, repo: Repo, proj: Project, people) -> dict[str, Any]:
    """A deleted branch (its last commit amended once: a decoy) and a commit thrown away by a
    hard reset; the reflog is expired, so only the object database still has them."""
    topic = (
        rng.choice(["feature", "spike", "topic"])
        + "/"
        + rng.choice(
            ["exporter", "retry", "cache-warmup", "audit-log", "bulk-import", "quotas", "webhooks"]
        )
    )
    files = proj.initial()
    repo.commit(rng, "Initial commit", rng.choice(people), files)
    for i in range(rng.randint(2, 3)):
        write, subject = (
            proj.add_function(repo.files(), rng.randrange(3)) if i % 2 else proj.add_doc()
        )
        repo.commit(rng, subject, rng.choice(people), write)
    fork = repo.tip
    dev = people[1]
    # the topic branch: two commits, the last one amended once (the draft is the decoy)
    repo.create_branch(topic)
    repo.checkout(topic)
    write, subject1 = proj.add_function(repo.files(), 3)
    t1 = repo.commit(rng, subject1, dev, write)
    new_mod = proj.module_path(4)
    name, code = py_function(rng, proj.taken)
    subject2 = f"{rng.choice(['Wire up', 'Finish', 'Complete', 'Add'])} {name}"
    draft_files = {new_mod: module_text(f"{proj.modules[4].capitalize()}.", [code])}
    decoy = repo.commit(rng, subject2, dev, draft_files)
    repo.reset_hard(t1)
    name_b, code_b = py_function(rng, proj.taken)
    final_files = {
        new_mod: module_text(f"{proj.modules[4].capitalize()}.", [code, code_b]),
    }
    doc, _ = proj.add_doc()
    final_files.update(doc)
    t2 = repo.commit(rng, subject2, dev, final_files)
    topic_files = repo.files()
    repo.checkout(repo.branch)
    repo.delete_branch(topic)
    # main: a commit that a hard reset throws away, then new work on top
    me = people[2]
    idx = rng.randrange(3)
    write, lost_subject = proj.add_function(repo.files(), idx)
    lost = repo.commit(rng, lost_subject, me, write)
    lost_write = write
    repo.reset_hard(fork)
    after: list[str] = []
    for i in range(rng.randint(1, 2)):
        if i == 0:
            write, subject = proj.readme_section(repo.files())
        else:
            others = [j for j in range(3) if j != idx]
            write, subject = proj.add_function(repo.files(), rng.choice(others))
        after.append(repo.commit(rng, subject, rng.choice(people[3:]), write))
    repo.expire()
    expected = repo.files()
    expected.update(lost_write)
    return {
        "topic": topic,
        "topic_tip": t2,
        "topic_subjects": [subject2, subject1],
        "topic_files": topic_files,
        "lost": lost,
        "lost_subject": lost_subject,
        "lost_author": list(me),
        "main_before": repo.tip,
        "main_subjects": [lost_subject]
        + [repo.commits[s].subject for s in reversed(after)]
        + [repo.commits[s].subject for s in _ancestry(repo, fork)],
        "expected_files": expected,
        "decoy": decoy,
        "lost_changes": sorted(lost_write),
        "fork_subject": repo.commits[fork].subject,
        "topic_author": list(dev),
    }


def _ancestry(repo: Repo, sha: str) -> list[str]:
    out = []
    while sha:
        out.append(sha)
        parents = repo.commits[sha].parents
        sha = parents[0] if parents else ""
    return out


@register
class GitRepair(Family):
    """A repository built in a broken state. easy: work committed on a detached HEAD (maybe
    plus uncommitted changes) to bring onto a branch; medium: an interrupted merge whose
    conflicts must be resolved by stated rules; hard: a deleted branch (with a decoy amended
    draft) and a hard-reset commit, both only findable with ``git fsck``."""

    name = "git-repair"
    title = (
        "Repair a git repository left in a broken state (detached work, half merge, lost commits)"
    )
    category = "version-control"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        proj = Project(rng)
        main = rng.choice(["main", "master", "trunk", "develop"])
        root = rng.choice(["/srv", "/opt", "/home/dev", "/work"])
        path = f"{root}/{proj.name}"
        start = datetime(2023, 1, 1, tzinfo=timezone.utc) + timedelta(days=rng.randint(0, 600))
        repo = Repo(path=path, branch=main, clock=int(start.timestamp()))
        people = draw_people(rng, 6)
        scenario = {"easy": "detached", "medium": "merge", "hard": "lost"}[difficulty.value]
        if scenario == "detached":
            info = _git_easy(rng, repo, proj, people)
            secrets = [info["work"][-1]]
        elif scenario == "merge":
            info = _git_medium(rng, repo, proj, people)
            secrets = []
        else:
            info = _git_hard(rng, repo, proj, people)
            secrets = [info["topic_tip"], info["lost"]]
        plan = {"ops": repo.plan, "end_time": repo.clock + 3600}
        user = people[0]
        return Draft(
            context={
                "scenario": scenario,
                "repo": path,
                "main": main,
                "project": proj.name,
                "user_name": user[0],
                "user_email": user[1],
                "info": info,
                "branches": dict(sorted(repo.branches.items())),
            },
            files={"environment/plan.json": json.dumps(plan, indent=1, sort_keys=True) + "\n"},
            secrets=secrets,
            outputs=[path + "/"],
            separate_verifier=True,
            tags=[
                "git",
                {"detached": "detached-head", "merge": "merge-conflict", "lost": "fsck"}[scenario],
            ],
        )
