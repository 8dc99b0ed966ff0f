"""Web family: an admin panel (directory accounts, groups, role-based permissions, invitations,
account status)."""

from __future__ import annotations

import datetime
import random

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.web.webfamily import WebFamily, WebScenario
from factory.vocabulary import Difficulty

WORDS = ["amber", "birch", "cedar", "delta", "ember", "fjord", "glade", "heron", "islet", "jasper"]
DEPARTMENTS = ["Finance", "Engineering", "Sales", "Support", "People", "Legal", "Operations"]
DOMAINS = ["northwind.example", "acme-corp.example", "bluepeak.example", "lumen.example"]
OUTSIDE = ["contractors-r-us.example", "freelance-hub.example", "tempstaff.example"]
GROUPS = {
    "Finance Team": "Bookkeeping and invoices",
    "Developers": "Product engineering",
    "Sales Reps": "Customer-facing sales",
    "Helpdesk": "First-line support",
    "HR Partners": "People operations",
    "Interns": "Summer interns",
    "Contractors": "External contractors",
    "Release Managers": "Ship to production",
    "Auditors": "Read-only compliance review",
}
PERMISSIONS = {
    "invoices.view": "See invoices",
    "invoices.approve": "Approve invoices",
    "payroll.view": "See payroll",
    "payroll.edit": "Change payroll",
    "reports.view": "See reports",
    "reports.export": "Export reports",
    "users.view": "See user directory",
    "users.manage": "Manage users",
    "deploy.staging": "Deploy to staging",
    "deploy.production": "Deploy to production",
    "tickets.view": "See tickets",
    "tickets.assign": "Assign tickets",
    "crm.view": "See CRM",
    "crm.edit": "Edit CRM records",
}
START = datetime.date(2023, 6, 1)


def _day(n: int) -> str:
    return (START + datetime.timedelta(days=n)).isoformat()


@register
class WebAdmin(WebFamily):
    """Administer an organisation's accounts through an admin panel: sign in, search and filter
    a paginated account list, fill validated forms with check boxes. Easy: create an account in
    exactly the given groups (the form pre-ticks "Everyone"). Medium: bring two groups'
    permissions in line with a written access policy (grant and revoke) and create an account
    whose preferred username is taken (fallback rule). Hard: suspend the active accounts of a
    department not seen since a date (never-logged-in included, break-glass members exempt),
    spread over pages, and revoke the pending invitations to an outside domain."""

    name = "web-admin"
    title = "Manage accounts, groups and permissions in an admin panel"
    category = "web-admin"

    def scenario(self, rng: random.Random, difficulty: Difficulty) -> WebScenario:
        people = rng.sample([(f, s) for f in FIRST for s in LAST], 48)
        operator = {
            "id": 1,
            "username": f"it.{rng.choice(WORDS)}{rng.randrange(10, 99)}",
            "password": f"{rng.choice(WORDS)}-{rng.randrange(1000, 9999)}",
            "display_name": "IT Administrator",
            "role": "admin",
        }
        auditor = {
            "id": 2,
            "username": f"audit{rng.randrange(10, 99)}",
            "password": f"{rng.choice(WORDS)}-{rng.randrange(1000, 9999)}",
            "display_name": "Compliance Auditor",
            "role": "auditor",
        }
        domain = rng.choice(DOMAINS)
        names = ["Everyone", "Break-glass", *rng.sample(list(GROUPS), 6)]
        rng.shuffle(names)
        groups = [
            {
                "id": i + 1,
                "name": n,
                "description": {
                    "Everyone": "All staff",
                    "Break-glass": "Emergency accounts - never suspend",
                }.get(n, GROUPS.get(n, "")),
            }
            for i, n in enumerate(names)
        ]
        gid = {g["name"]: g["id"] for g in groups}
        codes = sorted(PERMISSIONS)
        grants = {g["id"]: set(rng.sample(codes, rng.randint(2, 5))) for g in groups}
        grants[gid["Everyone"]] = {"users.view", "tickets.view"}
        depts = rng.sample(DEPARTMENTS, 5)
        accounts = []
        members: set[tuple[int, int]] = set()
        for i, (first, last) in enumerate(people[:40]):
            username = f"{first[0].lower()}{last.lower()}"
            if any(a["username"] == username for a in accounts):
                username = f"{first.lower()}.{last.lower()}"
            login = None if rng.random() < 0.1 else _day(rng.randrange(0, 300))
            accounts.append(
                {
                    "id": i + 1,
                    "username": username,
                    "email": f"{username}@{domain}",
                    "full_name": f"{first} {last}",
                    "department": rng.choice(depts),
                    "status": "suspended" if rng.random() < 0.12 else "active",
                    "last_login": login,
                }
            )
            members.add((i + 1, gid["Everyone"]))
            for g in rng.sample(
                [g for g in groups if g["name"] not in ("Everyone", "Break-glass")], 2
            ):
                if rng.random() < 0.7:
                    members.add((i + 1, g["id"]))
        invitations = []
        for i in range(rng.randint(9, 13)):
            first, last = people[40 + i % 8]
            where = rng.choice(OUTSIDE + [domain, domain])
            invitations.append(
                {
                    "id": i + 1,
                    "email": f"{first.lower()}.{last.lower()}{i}@{where}",
                    "group_id": rng.choice(groups)["id"],
                    "sent": _day(rng.randrange(200, 330)),
                    "status": rng.choice(["pending", "pending", "accepted"]),
                }
            )
        ctx: dict = {"operator": operator, "domain": domain, "groups": gid}
        steps: list[dict] = []
        near: dict[str, dict] = {}
        new_account = None
        other_groups = [g for g in groups if g["name"] not in ("Everyone", "Break-glass")]

        def newcomer(taken: bool) -> tuple[dict, dict]:
            used = {a["username"] for a in accounts} | {a["email"] for a in accounts}
            for first, last in people[40:]:
                preferred = f"{first[0].lower()}{last.lower()}"
                if not {preferred, preferred + "2", preferred + "1"} & used:
                    break
            if taken:
                accounts.append(
                    {
                        "id": len(accounts) + 1,
                        "username": preferred,
                        "email": f"{preferred}@{domain}",
                        "full_name": f"{first[0]}. {last}",
                        "department": depts[0],
                        "status": "active",
                        "last_login": _day(250),
                    }
                )
                members.add((len(accounts), gid["Everyone"]))
            username = preferred + "2" if taken else preferred
            in_groups = rng.sample(other_groups, 2)
            spec = {
                "full_name": f"{first} {last}",
                "department": rng.choice(depts),
                "email": f"{first.lower()}.{last.lower()}@{domain}",
                "groups": sorted(g["id"] for g in in_groups),
            }
            step = {"op": "create", "usernames": [preferred, username], **spec}
            ctx.update(
                preferred=preferred,
                new=spec,
                new_username=username,
                new_groups=[g["name"] for g in in_groups],
            )
            return step, {"username": username, **spec}

        if difficulty is Difficulty.EASY:
            step, new_account = newcomer(False)
            step["usernames"] = step["usernames"][:1]
            steps = [step]
            near = {
                "keeps-default-everyone": {
                    "steps": [{**step, "groups": sorted([*step["groups"], gid["Everyone"]])}]
                },
                "misses-second-group": {"steps": [{**step, "groups": step["groups"][:1]}]},
            }
        elif difficulty is Difficulty.MEDIUM:
            step, new_account = newcomer(True)
            a, b = rng.sample(other_groups, 2)
            policy = {}
            for g in (a, b):
                have = sorted(grants[g["id"]])
                keep = rng.sample(have, max(1, len(have) - 2))
                add = rng.sample([c for c in codes if c not in have], 2)
                policy[g["id"]] = sorted(keep + add)
            perm_steps = [{"op": "perms", "group": g, "codes": c} for g, c in policy.items()]
            steps = [*perm_steps, step]
            first = perm_steps[0]
            near = {
                "only-grants-never-revokes": {
                    "steps": [
                        {**first, "codes": sorted(set(first["codes"]) | grants[first["group"]])},
                        perm_steps[1],
                        step,
                    ]
                },
                "skips-second-group": {"steps": [first, step]},
                "wrong-username-fallback": {
                    "steps": [*perm_steps, {**step, "usernames": [step["usernames"][0] + "1"]}]
                },
            }
            ctx["policy"] = [
                {"group": next(x["name"] for x in groups if x["id"] == g), "codes": c}
                for g, c in policy.items()
            ]
        else:
            dept = rng.choice(depts)
            cutoff = _day(rng.randrange(150, 200))
            pool = [a for a in accounts if a["department"] == dept]
            while len(pool) < 12:  # make the department big enough to span pages
                extra = rng.choice([a for a in accounts if a["department"] != dept])
                extra["department"] = dept
                pool.append(extra)
            rng.shuffle(pool)
            never, edge, glass = pool[0], pool[1], pool[2]
            never.update(status="active", last_login=None)
            edge.update(status="active", last_login=cutoff)
            for acc in pool[2:6]:
                acc.update(status="active", last_login=_day(rng.randrange(0, 140)))
            members.add((glass["id"], gid["Break-glass"]))
            targets = sorted(
                [
                    a
                    for a in pool
                    if a is not glass
                    and a["status"] == "active"
                    and (a["last_login"] is None or a["last_login"] < cutoff)
                ],
                key=lambda a: a["username"],
            )
            outside = rng.choice(OUTSIDE)
            for inv in rng.sample(invitations, 3):
                inv["email"] = inv["email"].split("@")[0] + "@" + outside
                inv["status"] = "pending"
            revokes = [
                i
                for i in invitations
                if i["email"].endswith("@" + outside) and i["status"] == "pending"
            ]
            sus = [{"op": "status", "account": a["id"], "status": "suspended"} for a in targets]
            rev = [{"op": "revoke", "invitation": i["id"]} for i in revokes]
            steps = [*sus, *rev]
            near = {
                "misses-last-page": {"steps": [*sus[:-1], *rev]},
                "suspends-break-glass-member": {
                    "steps": [
                        *sus,
                        {"op": "status", "account": glass["id"], "status": "suspended"},
                        *rev,
                    ]
                },
                "suspends-login-on-cutoff-day": {
                    "steps": [
                        *sus,
                        {"op": "status", "account": edge["id"], "status": "suspended"},
                        *rev,
                    ]
                },
                "skips-never-logged-in": {
                    "steps": [*[s for s in sus if s["account"] != never["id"]], *rev]
                },
                "leaves-one-invitation": {"steps": [*sus, *rev[1:]]},
            }
            ctx.update(dept=dept, cutoff=cutoff, outside=outside)
        status = {a["id"]: a["status"] for a in accounts}
        grant_after = {g: set(c) for g, c in grants.items()}
        inv_after = {i["id"]: i["status"] for i in invitations}
        for step in steps:
            if step["op"] == "status":
                status[step["account"]] = step["status"]
            elif step["op"] == "perms":
                grant_after[step["group"]] = set(step["codes"])
            elif step["op"] == "revoke":
                inv_after[step["invitation"]] = "revoked"
        ctx.update(
            steps=steps,
            strict=True,
            new_account=new_account,
            max_account=len(accounts),
            expected_status=status,
            expected_grants=sorted([g, c] for g, cs in grant_after.items() for c in cs),
            expected_members=sorted([a, g] for a, g in members),
            expected_invitations=inv_after,
            status_changed=sorted(a["id"] for a in accounts if status[a["id"]] != a["status"]),
            grants_changed=sorted(g for g in grants if grant_after[g] != grants[g]),
            revoked=sorted(i for i, s in inv_after.items() if s == "revoked"),
        )
        for overrides in near.values():
            overrides["strict"] = False
        seed = {
            "users": [operator, auditor],
            "accounts": accounts,
            "groups": groups,
            "permissions": [{"code": c, "description": d} for c, d in PERMISSIONS.items()],
            "grants": [
                {"group_id": g, "code": c} for g, cs in sorted(grants.items()) for c in sorted(cs)
            ],
            "memberships": [{"account_id": a, "group_id": g} for a, g in sorted(members)],
            "invitations": invitations,
        }
        return WebScenario(
            seed=seed, context=ctx, near_misses=near, tags=["admin", "forms", "permissions"]
        )
