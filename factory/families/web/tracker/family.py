"""Web family: an issue tracker (projects, issues with status / priority / assignee / labels,
comments, search and filters over pages, issue creation with validation)."""

from __future__ import annotations

import copy
import random

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.web.webfamily import WebFamily, WebScenario, app_user
from factory.vocabulary import Difficulty

PROJECTS = [
    ("WEB", "Website"),
    ("API", "Public API"),
    ("OPS", "Operations"),
    ("MOB", "Mobile app"),
    ("DATA", "Data platform"),
    ("PAY", "Payments"),
]
THINGS = [
    "invoice export",
    "dashboard",
    "user profile",
    "search results",
    "settings page",
    "monthly report",
    "login form",
    "notification email",
    "checkout",
    "calendar sync",
    "password reset",
    "file upload",
    "audit log",
    "team invites",
    "billing page",
]
PROBLEMS = [
    "{} fails with a timeout",
    "{} shows the wrong totals",
    "Crash when opening {}",
    "{} is very slow",
    "Typo on the {}",
    "{} ignores the time zone",
    "Add keyboard shortcuts to {}",
    "{} breaks on small screens",
    "Translate the {}",
    "{} returns error 500",
]
LABELS = [
    "bug",
    "feature",
    "docs",
    "needs-triage",
    "duplicate",
    "regression",
    "ui",
    "performance",
    "security",
]
PRIORITIES = ["low", "medium", "high", "critical"]
WORDS = ["amber", "birch", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "iris"]


def _op(issue: dict, **changes) -> dict:
    op = {
        "id": issue["id"],
        "status": issue["status"],
        "priority": issue["priority"],
        "assignee": issue["assignee"],
        "comment": "",
        "add": [],
        "remove": [],
    }
    op.update(changes)
    return op


def _apply(state: dict, ops: list[dict]) -> dict:
    state = copy.deepcopy(state)
    for op in ops:
        row = state[op["id"]]
        row[0], row[1], row[2] = op["status"], op["priority"], op["assignee"]
        row[3] = sorted((set(row[3]) - set(op["remove"])) | set(op["add"]))
    return state


@register
class WebTracker(WebFamily):
    """Work an issue tracker: easy files a new issue with every field right (the priority is
    a validated free-text field, labels are check boxes); medium triages a project - every
    open, unassigned bug of high or critical priority gets an assignee and goes in progress
    (decoys differ in one criterion, results span pages unless filtered well); hard closes the
    duplicates of an issue found by searching a phrase, each with a comment naming the
    original, relabelled from needs-triage to duplicate, leaving the original and look-alikes
    in other projects alone."""

    name = "web-tracker"
    title = "Create, triage and close issues in a web issue tracker"
    category = "web-productivity"

    def scenario(self, rng: random.Random, difficulty: Difficulty) -> WebScenario:
        people = rng.sample([f"{f} {s}" for f in FIRST for s in LAST], 7)
        users = [app_user(rng, i + 1, p, "member", WORDS) for i, p in enumerate(people)]
        me, assignee = users[0], rng.choice(users[1:])
        projects = [
            {"id": i + 1, "key": k, "name": n} for i, (k, n) in enumerate(rng.sample(PROJECTS, 3))
        ]
        home, other = projects[0], projects[1]
        keyword = rng.choice(THINGS)
        fillers = [t for t in THINGS if t != keyword]
        issues: list[dict] = []

        def add(
            project: dict, title: str, *, status=None, priority=None, assignee=..., labels=None
        ) -> dict:
            issue = {
                "id": len(issues) + 1,
                "project_id": project["id"],
                "title": title,
                "description": f"Reported by a customer: {title.lower()}.",
                "status": status or rng.choice(["open", "open", "in_progress", "closed"]),
                "priority": priority or rng.choice(PRIORITIES),
                "assignee": rng.choice([None, *[u["username"] for u in users]])
                if assignee is ...
                else assignee,
                "labels": labels
                if labels is not None
                else rng.sample([x for x in LABELS if x != "duplicate"], rng.randint(0, 2)),
                "reporter_id": rng.choice(users)["id"],
            }
            issues.append(issue)
            return issue

        for _ in range(rng.randint(34, 40)):
            project = home if rng.random() < 0.6 else rng.choice(projects[1:])
            add(project, rng.choice(PROBLEMS).format(rng.choice(fillers)).capitalize())
        ops: list[dict] = []
        near: dict[str, list[dict]] = {}
        create = None
        context: dict = {}
        if difficulty is Difficulty.EASY:
            create = {
                "project": rng.choice(projects)["key"],
                "title": rng.choice(PROBLEMS).format(keyword).capitalize(),
                "description": f"Steps: open the {keyword} and wait. Seen by {rng.randint(2, 9)} "
                "customers this week.",
                "priority": rng.choice(["high", "critical", "low"]),
                "assignee": assignee["username"],
                "labels": sorted(
                    rng.sample(["bug", "regression", "ui", "performance", "security"], 2)
                ),
            }
            wrong_project = next(p["key"] for p in projects if p["key"] != create["project"])
            near = {
                "wrong-priority": {"create": {**create, "priority": "medium"}},
                "missing-label": {"create": {**create, "labels": create["labels"][:1]}},
                "wrong-project": {"create": {**create, "project": wrong_project}},
                "unassigned": {"create": {**create, "assignee": ""}},
            }
        elif difficulty is Difficulty.MEDIUM:

            def bugs(n, project=home, **kw):
                out = []
                for _ in range(n):
                    base = dict(
                        status="open",
                        priority=rng.choice(["high", "critical"]),
                        assignee=None,
                        labels=sorted({"bug", *rng.sample(["ui", "regression"], 1)}),
                    )
                    base.update(kw)
                    out.append(
                        add(
                            project,
                            rng.choice(PROBLEMS).format(rng.choice(fillers)).capitalize(),
                            **base,
                        )
                    )
                return out

            for issue in [i for i in issues if i["project_id"] == home["id"]]:
                if "bug" in issue["labels"] and issue["status"] == "open":
                    issue["assignee"] = rng.choice(users[1:])["username"]  # no stray matches
            matches = bugs(2, priority="high") + bugs(rng.randint(1, 2), priority="critical")
            taken = bugs(2, assignee=rng.choice(users[1:])["username"])
            bugs(1, status="in_progress")
            elsewhere = bugs(2, project=other)
            bugs(1, priority="medium")
            bugs(1, labels=["feature"])
            rng.shuffle(issues)
            for i, issue in enumerate(issues):
                issue["id"] = i + 1
            ops = [_op(i, status="in_progress", assignee=assignee["username"]) for i in matches]
            near = {
                "critical-only": [
                    o for o, i in zip(ops, matches, strict=True) if i["priority"] == "critical"
                ],
                "also-reassigns-taken": ops
                + [_op(i, status="in_progress", assignee=assignee["username"]) for i in taken],
                "status-unchanged": [{**o, "status": "open"} for o in ops],
                "other-project-too": ops
                + [_op(i, status="in_progress", assignee=assignee["username"]) for i in elsewhere],
            }
        else:
            problem = rng.choice(PROBLEMS)
            original = add(
                home,
                problem.format(keyword).capitalize(),
                status="open",
                priority="high",
                labels=["bug", "needs-triage"],
            )
            variants = [
                f"{keyword} broken again",
                f"Problem with {keyword}",
                f"{keyword}: same error as last week",
                f"Customer reports {keyword} issue",
                f"{keyword} not working since the update",
            ]
            rng.shuffle(variants)
            dups = [
                add(
                    home,
                    v.capitalize() if not v.startswith(keyword) else v[0].upper() + v[1:],
                    status="open",
                    labels=["needs-triage"],
                    assignee=None,
                )
                for v in variants[: rng.randint(3, 4)]
            ]
            done = add(
                home, f"Old report: {keyword} glitch", status="closed", labels=["needs-triage"]
            )
            look = [
                add(
                    other,
                    f"{keyword[0].upper() + keyword[1:]} question from a customer",
                    status="open",
                    labels=["needs-triage"],
                )
            ]
            del done
            rng.shuffle(issues)
            for i, issue in enumerate(issues):
                issue["id"] = i + 1
            ref = f"{home['key']}-{original['id']}"
            comment = f"Duplicate of {ref}"
            context.update(keyword=keyword, original=ref, original_title=original["title"])
            ops = [
                _op(i, status="closed", comment=comment, add=["duplicate"], remove=["needs-triage"])
                for i in dups
            ]
            near = {
                "closes-original": ops
                + [
                    _op(
                        original,
                        status="closed",
                        comment=comment,
                        add=["duplicate"],
                        remove=["needs-triage"],
                    )
                ],
                "keeps-triage-label": [{**o, "remove": []} for o in ops],
                "other-project-too": ops
                + [
                    _op(
                        i,
                        status="closed",
                        comment=comment,
                        add=["duplicate"],
                        remove=["needs-triage"],
                    )
                    for i in look
                ],
                "vague-comment": [{**o, "comment": "Duplicate"} for o in ops],
                "misses-one": ops[:-1],
            }
        state = {
            i["id"]: [i["status"], i["priority"], i["assignee"], sorted(i["labels"])]
            for i in issues
        }
        user_ids = {u["username"]: u["id"] for u in users}
        seed = {
            "users": users,
            "projects": projects,
            "labels": [{"id": i + 1, "name": n} for i, n in enumerate(LABELS)],
            "issues": [
                {k: v for k, v in i.items() if k not in ("labels", "assignee")}
                | {"assignee_id": user_ids.get(i["assignee"])}
                for i in sorted(issues, key=lambda i: i["id"])
            ],
            "issue_labels": [
                {"issue_id": i["id"], "label_id": LABELS.index(n) + 1}
                for i in issues
                for n in sorted(set(i["labels"]))
            ],
        }
        context.update(
            {
                "user": me,
                "assignee": {
                    "username": assignee["username"],
                    "display_name": assignee["display_name"],
                },
                "home": home,
                "other": other,
                "ops": ops,
                "create": create,
                "expected": _apply(state, ops),
                "max_id": len(issues),
                "comments": {o["id"]: o["comment"] for o in ops if o["comment"]},
            }
        )
        overrides = {name: ({"ops": v} if isinstance(v, list) else v) for name, v in near.items()}
        tags = ["issues", "forms"] + (
            ["pagination", "search"] if difficulty is not Difficulty.EASY else ["validation"]
        )
        return WebScenario(seed=seed, context=context, near_misses=overrides, tags=tags)
