"""Checks of /srv/app's owners, modes and contents. The verifier runs in a fresh container:
what the tests read of the agent's tree (owners, groups, modes, contents, the deploy account)
comes from the snapshot the task's collect hook took in the agent's container."""

import json
from pathlib import Path

import pytest

SNAPSHOT = Path("/var/lib/factory-verifier/deploy-tree.json")

# The files of the tree and the sha256 of their contents: nothing may be added, removed or edited.
FILES = {
    "VERSION": "6d850e3ac42d0dd06bfdcce9151c1e6b40f4cf5272778f63eececea27c78f0b6",
    "bin/README.txt": "d272f3c999e12022de6b3b834a5530af358ef1281471e71b1122a58a186ee885",
    "bin/rotate-logs.sh": "b5be061ddba02782d1c524c54fadcc2d5337e6f11d34b1ffd9e4154bff7cd7c1",
    "bin/start.sh": "c2283d4d143f475803f413f9ff470d1edccdc5323328e58f96602a4530880f26",
    "bin/stop.sh": "bb38f046a1bedddb02322c3dde97e7706effae6bf6dd79d6094c480a5b5afc2c",
    "config/app.conf": "653fc5b7999c19bad927c9f3d347164a5acd785b06f50eacefe46f67bbeaad3f",
    "config/logging.conf": "fc3c70df567a6b57659cba0a9476c785b162c3fb86b8bee0315f1b279bc7ec34",
    "config/secrets.env": "723a2e392f63d80d300151ee463ca350faa30be5a0240deea4403b4f1e973635",
    "lib/orders.py": "2c1ef828df2b1cd45da0e4a8aa09c0b2d2f050a05d160e57d378e42210428321",
    "logs/orders.log": "b902a525c72ae17cc469951f7c4eaa1b11beb39c090ca89de7b4e2e77f0688cb",
}
DIRS = {".", "bin", "config", "lib", "logs"}

EXPECTED_MODES = {
    ".": 0o750,
    "bin": 0o750,
    "config": 0o750,
    "lib": 0o750,
    "logs": 0o2770,
    "VERSION": 0o640,
    "bin/README.txt": 0o640,
    "bin/rotate-logs.sh": 0o750,
    "bin/start.sh": 0o750,
    "bin/stop.sh": 0o750,
    "config/app.conf": 0o640,
    "config/logging.conf": 0o640,
    "config/secrets.env": 0o600,
    "lib/orders.py": 0o640,
    "logs/orders.log": 0o660,
}


def _snapshot():
    assert SNAPSHOT.is_file(), "the verifier's snapshot of /srv/app is missing"
    return json.loads(SNAPSHOT.read_text())


def _entry(rel):
    entry = _snapshot()["entries"].get(rel)
    assert entry is not None, f"{rel} is missing"
    return entry


def test_tree_unchanged():
    snapshot = _snapshot()
    assert set(snapshot["files"]) == set(FILES), "files were added or removed"
    assert set(snapshot["dirs"]) == DIRS, "directories were added or removed"
    for rel, digest in FILES.items():
        entry = snapshot["entries"][rel]
        assert not entry["link"], f"{rel} was replaced by a symlink"
        assert entry.get("sha") == digest, f"{rel} was modified"


@pytest.mark.parametrize("rel", sorted(EXPECTED_MODES))
def test_owner_and_group(rel):
    entry = _entry(rel)
    assert entry["user"] == "deploy", f"{rel}: owner uid {entry['uid']}"
    assert entry["group"] == "deploy", f"{rel}: group gid {entry['gid']}"


@pytest.mark.parametrize("rel", sorted(EXPECTED_MODES))
def test_mode(rel):
    got = _entry(rel)["mode"]
    assert got == EXPECTED_MODES[rel], f"{rel}: mode {got:o}, expected {EXPECTED_MODES[rel]:o}"


def test_deploy_account_untouched():
    deploy = _snapshot()["deploy"]
    assert deploy is not None, "the deploy account is gone"
    assert deploy["uid"] == 1500
    assert deploy["group"] == "deploy"
