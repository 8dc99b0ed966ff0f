import json
from pathlib import Path

EXPECTED = {
    "server": {
        "port": 9090,
        "host": "127.0.0.1",
        "tls": {"enabled": True, "cert": "/etc/ssl/svc.pem"},
    },
    "features": ["c"],
    "name": "svc",
    "debug": False,
}


def test_merged_file_exists():
    assert Path("/app/merged.json").is_file()


def test_merged_content():
    assert json.loads(Path("/app/merged.json").read_text()) == EXPECTED


def test_inputs_untouched():
    assert len(list(Path("/app/conf.d").glob("*.json"))) == 3
