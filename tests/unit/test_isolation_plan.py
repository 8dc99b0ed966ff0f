"""What the harness restores or removes before a verifier runs (pure planning, no Docker)."""

from __future__ import annotations

from factory.validate.isolation import Change, ChangeKind, plan_repairs
from factory.validate.probes import ATTACK_ORDER, attack_scripts, cheat_scripts, tamper_script

M, A, D = ChangeKind.MODIFIED, ChangeKind.ADDED, ChangeKind.DELETED
PATH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]

IMAGE = {
    "/usr": "dir",
    "/usr/bin": "dir",
    "/usr/bin/python3": "file",
    "/usr/bin/bash": "file",
    "/usr/bin/pytest": "file",
    "/usr/lib/python3.11/json/__init__.py": "file",
    "/etc/nginx/nginx.conf": "file",
    "/usr/share/nginx/html/index.html": "file",
    "/usr/lib/python3/dist-packages/numpy/__init__.py": "file",
    "/usr/lib/python3/dist-packages/_pytest/runner.py": "file",
}


def plan(changes, live=None):
    return plan_repairs(
        [Change(p, k) for p, k in changes],
        path_dirs=PATH,
        image_kind=IMAGE.get,
        live_text=lambda p: (live or {}).get(p, ""),
    )


def test_an_honest_agents_changes_are_left_alone():
    result = plan(
        [
            ("/app", M),
            ("/app/out.json", A),
            ("/etc/nginx/nginx.conf", M),
            ("/usr/share/nginx/html/index.html", M),
            ("/usr/local/bin/backup.sh", A),  # a new command, shadows nothing
            ("/usr/lib/python3/dist-packages/numpy/__init__.py", M),  # an upgrade: its business
            ("/usr/local/lib/python3.11/dist-packages/requests/__init__.py", A),
            ("/root/.bash_history", A),
        ]
    )
    assert not result
    assert result.restore == [] and result.remove == []


def test_replaced_interpreter_and_shell_are_restored_not_their_folders():
    result = plan([("/usr", M), ("/usr/bin", M), ("/usr/bin/python3", M), ("/usr/bin/bash", D)])
    assert result.restore == ["/usr/bin/bash", "/usr/bin/python3"]
    assert result.reasons["/usr/bin/bash"] == "deleted"


def test_the_test_runner_is_protected_inside_package_folders():
    result = plan(
        [
            ("/usr/lib/python3/dist-packages/_pytest/runner.py", M),
            ("/usr/local/lib/python3.11/dist-packages/pytest", A),
            ("/usr/local/lib/python3.11/dist-packages/pytest/__init__.py", A),
            ("/usr/local/lib/python3.11/dist-packages/pluggy-9.0.dist-info", A),
        ]
    )
    assert result.restore == ["/usr/lib/python3/dist-packages/_pytest/runner.py"]
    assert result.remove == [
        "/usr/local/lib/python3.11/dist-packages/pluggy-9.0.dist-info",
        "/usr/local/lib/python3.11/dist-packages/pytest",
    ]


def test_planted_hooks_are_removed():
    live = {
        "/usr/lib/python3/dist-packages/evil-1.0.dist-info/entry_points.txt": "[pytest11]\nx = y\n",
        "/usr/lib/python3/dist-packages/fine-1.0.dist-info/entry_points.txt": "[console_scripts]",
    }
    result = plan(
        [
            ("/etc/ld.so.preload", A),
            ("/conftest.py", A),
            ("/pytest.ini", A),
            ("/usr/lib/python3/dist-packages/zz.pth", A),
            ("/app/sitecustomize.py", A),
            ("/usr/lib/python3.11/pytest.py", A),
            ("/usr/lib/python3.11/__pycache__/json.cpython-311.pyc", A),
            ("/usr/local/bin/python3", A),  # shadows /usr/bin/python3 on PATH
            ("/usr/lib/python3/dist-packages/evil-1.0.dist-info/entry_points.txt", A),
            ("/usr/lib/python3/dist-packages/fine-1.0.dist-info/entry_points.txt", A),
        ],
        live,
    )
    assert set(result.remove) == {
        "/etc/ld.so.preload",
        "/conftest.py",
        "/pytest.ini",
        "/usr/lib/python3/dist-packages/zz.pth",
        "/app/sitecustomize.py",
        "/usr/lib/python3.11/pytest.py",
        "/usr/lib/python3.11/__pycache__/json.cpython-311.pyc",
        "/usr/local/bin/python3",
        "/usr/lib/python3/dist-packages/evil-1.0.dist-info/entry_points.txt",
    }
    assert "shadows /usr/bin/python3" in result.reasons["/usr/local/bin/python3"]


def test_a_removed_folder_covers_what_is_below_it():
    result = plan([("/usr/lib/python3.11/evil", A), ("/usr/lib/python3.11/evil/x.py", A)])
    assert result.remove == ["/usr/lib/python3.11/evil"]


def test_attacks_are_all_in_the_combined_probe_in_order():
    scripts = attack_scripts()
    assert set(ATTACK_ORDER) <= set(scripts)
    combined = tamper_script()
    positions = [combined.index(f"# --- {name}") for name in scripts]
    assert positions == sorted(positions)
    assert set(cheat_scripts((), attacks="each")) >= set(ATTACK_ORDER) | {"exit-0", "fake-reward"}
    assert "tamper" in cheat_scripts(())
