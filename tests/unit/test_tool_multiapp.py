"""Multi-app tool families (no Docker): the suite that serves several domains as one
(``toolenv/suite.py``), the cross-app rules of the workspace (CRM + calendar + drive) and the
order desk (CRM + store), and the families' tasks: every part spans apps, the verifier's
expectation covers every app, each near miss (one app left undone, one wrong record) and each
trap fails, and the files shipped to the container serve the suite on their own."""

from __future__ import annotations

import copy
import datetime
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from factory.toolenv.core import HANDOVER_TOOL, Environment, load_domain
from factory.toolenv.domains import crm, files
from factory.toolenv.suite import App, compose

from factory.families import registry
from factory.families.tool.orderdesk import plan as orderdesk_plan
from factory.families.tool.scenario import script_calls
from factory.families.tool.toolfamily import KIT_FILES
from factory.families.tool.workspace import plan as workspace_plan
from factory.generate.taxonomy import Difficulty

FAMILIES = {"tool-workspace": ("crm", "calendar", "drive"), "tool-orderdesk": ("crm", "store")}
SEEDS = range(1, 9)


def draft(name: str, difficulty: Difficulty, seed: int, **params: str):
    family = registry.get(name)
    return family.draft(random.Random(seed), difficulty, {**family.default_params, **params})


def states(d) -> tuple[dict, dict]:
    initial = json.loads(d.files["environment/state.json"])
    expected = d.files.get("tests/expected_state.json", d.files["environment/state.json"])
    return initial, json.loads(expected)


def run(domain_name: str, state: dict, script: str) -> Environment:
    env = Environment(load_domain(domain_name), state)
    for name, arguments in script_calls(script):
        env.call(name, arguments)
    return env


# --- the suite --------------------------------------------------------------------------------
def test_a_suite_serves_each_app_under_its_prefix_on_its_own_state():
    suite = compose("pair", "Pair", "# Pair policy", [App("crm", crm.DOMAIN, crm.POLICY)])
    family = registry.get("tool-crm")
    app = family.seed_state(random.Random(5), Difficulty.EASY)
    env = Environment(suite, {"crm": app})
    me = env.call("crm_get_account", {})
    assert me["ok"] and me["result"]["user"]["user_id"] == app["acting_user"]
    assert "get_account" not in suite.tools and list(suite.tools)[-1] == HANDOVER_TOOL
    # the app's own rule, on the app's own part of the state
    theirs = next(d for d in app["deals"] if d["owner"] != app["acting_user"])
    refused = env.call("crm_update_deal", {"deal_id": theirs["deal_id"], "amount": 1})
    assert "violation" in refused and env.state == {"crm": app}
    # the app's handover reasons, once, recorded at the suite's top level
    assert set(suite.handovers) == set(crm.HANDOVERS)
    env.call(HANDOVER_TOOL, {"reason": "billing_dispute", "summary": "invoice"})
    assert env.state["handovers"] == [{"reason": "billing_dispute"}]
    # the policy: the suite's own first, then the app's, its tool names prefixed
    assert suite.policy.startswith("# Pair policy")
    assert "`crm_get_account`" in suite.policy and "`get_account`" not in suite.policy


def test_a_suite_refuses_clashing_handover_reasons():
    twin = copy.copy(crm.DOMAIN)
    with pytest.raises(ValueError, match="clash"):
        compose("x", "X", "", [App("a", crm.DOMAIN, ""), App("b", twin, "")])


def test_an_apps_rule_judges_only_that_apps_calls():
    """The drive's rule against dropping a confidential tag judges drive_untag_file, and not a
    call of the same name under another app's prefix (the rules are scoped by prefix)."""
    suite = load_domain("workspace")
    state = registry.get("tool-workspace").seed_state(random.Random(2), Difficulty.EASY)
    drive = state["drive"]
    secret = {"file_id": "", "tag": "confidential"}
    for file in drive["files"]:
        if file["owner"] == drive["acting_user"] and not file["trashed"]:
            file["tags"] = sorted({*file["tags"], "confidential"})
            secret["file_id"] = file["file_id"]
            break

    def judged(tool: str) -> list[str]:
        return [m for m in (rule(state, tool, secret) for rule in suite.rules) if m]

    assert judged("drive_untag_file") and not judged("crm_untag_file")
    assert not judged("calendar_untag_file") and not judged("untag_file")


# --- the workspace: CRM + calendar + drive --------------------------------------------------
@pytest.fixture
def workspace():
    return registry.get("tool-workspace").seed_state(random.Random(7), Difficulty.MEDIUM)


def test_the_workspace_is_one_company_on_one_day(workspace):
    crm_state, calendar, drive = workspace["crm"], workspace["calendar"], workspace["drive"]
    assert crm_state["today"] == calendar["today"] == drive["today"]
    assert drive["company_domain"] == crm_state["seller_domain"]
    staff = [(u["name"], u["email"]) for u in crm_state["users"]]
    for app in (calendar, drive):
        assert [(u["name"], u["email"]) for u in app["users"][: len(staff)]] == staff
        assert all(u["email"].endswith("@" + crm_state["seller_domain"]) for u in app["users"])
        assert len({u["name"] for u in app["users"]}) == len(app["users"])
    # ids differ across apps: people are matched by name or email
    assert not {u["user_id"] for u in drive["users"]} & {u["user_id"] for u in calendar["users"]}
    # the calendar moved by whole weeks: its events are still on weekdays, none before today
    for event in calendar["events"]:
        day = datetime.date.fromisoformat(event["date"])
        assert day.weekday() < 5 and event["date"] >= calendar["today"]


def test_a_deal_is_signed_only_with_its_signed_contract_in_the_drive(workspace):
    crm_state, drive = workspace["crm"], workspace["drive"]
    me = crm_state["acting_user"]
    deal = next(d for d in crm_state["deals"] if d["owner"] == me and d["stage"] == "proposal")
    deal["signed"] = False
    env = Environment(load_domain("workspace"), workspace)
    sign = {"deal_id": deal["deal_id"], "signed": True}
    refused = env.call("crm_update_deal", sign)
    assert "no contract of it tagged signed" in refused["violation"]
    mine = next(
        f for f in drive["files"] if f["owner"] == drive["acting_user"] and not f["trashed"]
    )
    for tag in (deal["deal_id"], "signed"):
        if tag not in mine["tags"]:
            assert env.call("drive_tag_file", {"file_id": mine["file_id"], "tag": tag})["ok"]
    assert env.call("crm_update_deal", sign)["ok"]
    # a contract in the trash does not count
    env = Environment(load_domain("workspace"), env.state)
    env.state["crm"]["deals"][crm_state["deals"].index(deal)]["signed"] = False
    assert env.call("drive_delete_file", {"file_id": mine["file_id"]})["ok"]
    assert "violation" in env.call("crm_update_deal", sign)


# --- the order desk: CRM + store -----------------------------------------------------------
def test_the_store_works_only_for_the_reps_own_accounts():
    state = registry.get("tool-orderdesk").seed_state(random.Random(4), Difficulty.EASY)
    crm_state, store = state["crm"], state["store"]
    me = crm_state["acting_user"]
    accounts = {c["name"]: c for c in crm_state["companies"]}
    customer = store["customers"][0]
    company = accounts[customer["name"]]
    product = next(p for p in store["products"] if p["stock"][customer["home_warehouse"]] > 0)
    order = {
        "customer_id": customer["customer_id"],
        "warehouse_id": customer["home_warehouse"],
        "lines": [{"sku": product["sku"], "quantity": 1}],
    }
    company["owner"] = next(u["user_id"] for u in crm_state["users"] if u["user_id"] != me)
    env = Environment(load_domain("orderdesk"), state)
    refused = env.call("store_create_order", order)
    assert "owns in the CRM" in refused["violation"]
    theirs = [o for o in store["orders"] if o["customer_id"] == customer["customer_id"]]
    pending = [o for o in theirs if o["status"] == "pending"]
    for order_ in pending:  # tools that name an order: its customer's account
        shipped = env.call("store_ship_order", {"order_id": order_["order_id"]})
        assert "owns in the CRM" in shipped["violation"]
    # reads stay open to everyone; the rep's own account may order
    assert env.call("store_list_orders", {"customer_id": customer["customer_id"]})["ok"]
    company["owner"] = me
    env = Environment(load_domain("orderdesk"), state)
    assert env.call("store_create_order", order)["ok"]


# --- the families' tasks ----------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(FAMILIES))
@pytest.mark.parametrize("difficulty", list(Difficulty))
def test_every_task_spans_apps_and_every_near_miss_and_trap_fails(name, difficulty):
    domain = registry.get(name).toolenv_domain
    for seed in SEEDS:
        d = draft(name, difficulty, seed)
        initial, expected = states(d)
        assert set(initial) >= set(FAMILIES[name])
        changed = {app for app in FAMILIES[name] if initial[app] != expected[app]}
        if "refusal" in d.tags:
            assert expected == initial
        else:
            # a cross-app part changes one app from what it read in another: the calls touch
            # at least two apps, and the reference chain leaves a change behind
            touched = {c.name.split("_")[0] for c in d.context["calls"]} & set(FAMILIES[name])
            assert len(touched) >= 2, (seed, touched)
            assert changed or "handover" in d.tags
        # the reference solution reaches the expectation without a violation ...
        env = run(domain, initial, _solve(d))
        assert env.state == expected and not env.violations()
        # ... and every near miss misses it, or breaks the policy
        for mutation, script in d.mutations.items():
            if mutation in ("silent-refusal", "vague-refusal"):
                continue  # judged on the reply
            wrong = run(domain, initial, script)
            assert wrong.state != expected or wrong.violations(), (seed, mutation)


def _solve(d) -> str:
    """The reference chain as a script (the template renders the same lines)."""
    return "\n".join(c.line for c in d.context["calls"])


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_near_misses_leave_one_app_undone(name):
    """The "did it in one app but not the other" near misses exist and differ from the right
    end state in exactly the app they skip."""
    domain = registry.get(name).toolenv_domain
    wanted = {
        "tool-workspace": {
            "crm-only": "drive",
            "drive-only": "crm",
            "link-never-emailed": "crm",
            "kickoff-without-contract": "drive",
            "contract-without-kickoff": "calendar",
        },
        "tool-orderdesk": {
            "order-never-confirmed": "crm",
            "deal-left-open": "crm",
            "shipped-not-logged": "crm",
            "logged-not-shipped": "store",
        },
    }[name]
    seen: set[str] = set()
    for seed in range(1, 40):
        d = draft(name, Difficulty.MEDIUM, seed, shape="task")
        initial, expected = states(d)
        for mutation, app in wanted.items():
            if mutation not in d.mutations:
                continue
            got = run(domain, initial, d.mutations[mutation]).state
            differ = {k for k in expected if got.get(k) != expected[k]}
            assert differ == {app}, (seed, mutation, differ)
            seen.add(mutation)
    assert seen == set(wanted)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_harder_tasks_have_more_cross_app_steps(name):
    def steps(difficulty: Difficulty) -> float:
        counts = []
        for seed in range(1, 13):
            d = draft(name, difficulty, seed, shape="task")
            counts.append(len([t for t in d.tags if t in PART_TAGS]))
        return sum(counts) / len(counts)

    assert steps(Difficulty.EASY) == 1
    assert steps(Difficulty.EASY) < steps(Difficulty.MEDIUM) < steps(Difficulty.HARD)


PART_TAGS = {*orderdesk_plan.PART_TAGS, *workspace_plan.PART_TAGS}
"""The tags of the suites' cross-app parts (each family's plan names its own)."""


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_traps_span_apps_and_the_suites_own_rule(name):
    """Across seeds, the traps break rules of more than one app, the suite's own included."""
    prefixes: set[str] = set()
    own = {"tool-workspace": "trap-unsigned-contract", "tool-orderdesk": "trap-colleague-account"}
    tags: set[str] = set()
    for seed in range(1, 30):
        d = draft(name, Difficulty.HARD, seed)
        initial, expected = states(d)
        tags.update(d.tags)
        for i in range(1, 4):
            script = d.mutations.get(f"breaks-policy-{i}")
            if script:
                name_, _ = script_calls(script)[-1]
                prefixes.add(name_.split("_")[0])
    assert prefixes >= set(FAMILIES[name]) - ({"drive"} if name == "tool-orderdesk" else set())
    assert own[name] in tags


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_shipped_server_files_serve_the_suite(name, tmp_path):
    """The container gets only the files the draft ships: with them alone (no factory on the
    path), the real server starts with the suite and answers a cross-app call."""
    d = draft(name, Difficulty.EASY, 3)
    shipped = {p: c for p, c in d.files.items() if p.startswith("environment/toolenv/")}
    assert {f"environment/toolenv/{k}" for k in KIT_FILES} <= set(shipped)
    for path, content in shipped.items():
        target = tmp_path / "opt" / "toolenv" / path.removeprefix("environment/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
    state = tmp_path / "state.json"
    state.write_text(d.files["environment/state.json"])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    domain = registry.get(name).toolenv_domain
    server = subprocess.Popen(
        [sys.executable, "-m", "toolenv.server", "--domain", domain, "--state", str(state)]
        + ["--port", str(port), "--log", str(tmp_path / "calls.jsonl")],
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(tmp_path / "opt" / "toolenv")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                tools = json.loads(urllib.request.urlopen(base + "/tools", timeout=2).read())
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                time.sleep(0.05)
        names = {t["function"]["name"] for t in tools["tools"]}
        assert {n.split("_")[0] for n in names} >= set(FAMILIES[name])
        first = d.context["calls"][0]
        body = json.dumps({"name": first.name, "arguments": first.arguments}).encode()
        answer = json.loads(urllib.request.urlopen(base + "/call", data=body, timeout=5).read())
        assert answer["ok"], answer
    finally:
        server.kill()
        server.wait()
    logged = Path(tmp_path / "calls.jsonl").read_text().splitlines()
    assert json.loads(logged[-1])["tool"] == first.name


def test_single_app_families_ship_only_their_own_domain():
    """A single-app family ships what it always shipped: the kit and its one domain module."""
    d = draft("tool-crm", Difficulty.EASY, 1)
    shipped = {p for p in d.files if p.startswith("environment/toolenv/")}
    assert shipped == {f"environment/toolenv/{k}" for k in (*KIT_FILES, "domains/crm.py")}
    assert not any("suite" in p for p in d.files)
    assert files.DOMAIN.name == "files"


@pytest.mark.parametrize(
    ("name", "part", "fact"),
    [
        ("tool-orderdesk", "won-deal-order", "new order number"),
        ("tool-workspace", "send-document", "new share link"),
    ],
)
def test_a_simulated_rep_is_told_what_the_request_created(name, part, fact):
    for seed in range(1, 40):
        d = draft(name, Difficulty.MEDIUM, seed, user="simulated", shape="task")
        if part in d.tags:
            break
    else:
        pytest.fail(f"no {part} in 39 seeds")
    told = [f for f in d.context["communicate"] if f["fact"] == fact]
    assert told and "untold-facts" in d.mutations
    initial, expected = states(d)
    assert all(f["any_of"][0] not in json.dumps(initial) for f in told)
    assert all(f["any_of"][0] in json.dumps(expected) for f in told)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_an_agent_episode_in_process_scores_the_whole_suite(name, tmp_path):
    """Played in process (the training loop's episodes): the reference scores 1; the same calls
    with one app's part left out score 0."""
    from factory.agent.backends import InProcessEpisodes
    from factory.agent.harness import HarnessConfig
    from factory.agent.suite import load_suite_tasks
    from factory.generate.trial import render_trial

    render_trial(name, Difficulty.MEDIUM, 5, tmp_path / "tasks", {"shape": "task"})
    (entry,) = load_suite_tasks(tmp_path)
    solve = (entry.task.root / "solution" / "solve.sh").read_text().splitlines()
    calls = [line for line in solve if line.startswith("tool ")]
    suite = load_domain(registry.get(name).toolenv_domain)
    crm_changes = [
        i
        for i, line in enumerate(calls)
        if line.split()[2].startswith("crm_") and suite.tools[line.split()[2]].mutates
    ]
    assert crm_changes
    skip_app = [line for i, line in enumerate(calls) if i not in crm_changes]
    rewards = []
    for commands in (calls, skip_app):
        backend = InProcessEpisodes()
        backend.prepare([entry])
        episode = backend.episode(entry, HarnessConfig(max_turns=4, max_observation_chars=2000))
        episode.start()
        for reply in ("```bash\n" + "\n".join(commands) + "\n```", "DONE"):
            episode.observe(reply)
        result = episode.finish()
        assert result.infra_error is None
        rewards.append(result.reward)
    assert rewards == [1.0, 0.0]


def test_suite_helpers_move_dates_rename_whole_values_and_open_requests():
    from factory.families.tool.suite import move_to, rename, request

    app = {"today": "2026-03-04", "rows": [{"d": "2026-03-06", "n": "2026-03-06 notes"}]}
    moved = move_to(app, "2026-03-09", whole_weeks=True)  # 5 days -> one whole week
    assert moved == {"today": "2026-03-09", "rows": [{"d": "2026-03-13", "n": "2026-03-06 notes"}]}
    assert move_to(app, "2026-03-09")["rows"][0]["d"] == "2026-03-11"
    assert rename({"a": ["u-1", "u-10", "x u-1"]}, {"u-1": "u-7"}) == {
        "a": ["u-7", "u-10", "x u-1"]
    }
    assert request("Hi.", ["And cancel it.", "And this."], "Bye") == "Hi. Cancel it. And this. Bye"
    assert request("Hi.", ["Also, I'd like it."], "Bye") == "Hi. I'd like it. Bye"
    assert request("Hi.", ["Andrew asked."], "Bye") == "Hi. Andrew asked. Bye"
