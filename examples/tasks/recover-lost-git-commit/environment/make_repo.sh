#!/bin/bash
# Build /srv/fetcher: a repository whose newest feature commit was lost by a hard reset.
set -euo pipefail
mkdir -p /srv/fetcher && cd /srv/fetcher
git init -q -b main .

commit() {  # commit <date> <message>
  GIT_AUTHOR_DATE="$1" GIT_COMMITTER_DATE="$1" git commit -q -m "$2"
}

cat > fetcher.py <<'EOF'
"""Fetch documents over HTTP."""
import urllib.request


def fetch(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return resp.read()
EOF
cat > README.md <<'EOF'
# fetcher

A tiny HTTP fetching helper.
EOF
git add . && commit "2024-03-01T09:00:00+00:00" "Initial commit: fetcher skeleton"

cat > config.py <<'EOF'
"""Configuration for fetcher."""
import json

DEFAULTS = {"timeout": 10, "retries": 3, "backoff": 0.5}


def load(path):
    with open(path) as fh:
        return {**DEFAULTS, **json.load(fh)}
EOF
git add config.py && commit "2024-03-02T10:15:00+00:00" "Add configuration loader"

# The feature commit: first a WIP version, then amended into the final one.
cat >> fetcher.py <<'EOF'


def fetch_with_retry(url, retries=3):
    # TODO: backoff
    for _ in range(retries):
        try:
            return fetch(url)
        except OSError:
            pass
EOF
git add fetcher.py && commit "2024-03-04T16:40:00+00:00" "WIP: retry"

cat > fetcher.py <<'EOF'
"""Fetch documents over HTTP."""
import time
import urllib.request


def fetch(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return resp.read()


def fetch_with_retry(url, retries=3, backoff=0.5, timeout=10):
    """Fetch ``url``, retrying on network errors with exponential backoff."""
    last_error = None
    for attempt in range(retries):
        try:
            return fetch(url, timeout=timeout)
        except OSError as exc:
            last_error = exc
            time.sleep(backoff * (2 ** attempt))
    raise last_error
EOF
mkdir -p tests
cat > tests/test_retry.py <<'EOF'
import fetcher


def test_retry_gives_up(monkeypatch):
    calls = []

    def boom(url, timeout=10):
        calls.append(url)
        raise OSError("down")

    monkeypatch.setattr(fetcher, "fetch", boom)
    monkeypatch.setattr(fetcher.time, "sleep", lambda s: None)
    try:
        fetcher.fetch_with_retry("http://x", retries=4)
    except OSError:
        pass
    assert len(calls) == 4
EOF
git add fetcher.py tests/test_retry.py
GIT_AUTHOR_DATE="2024-03-05T11:20:00+00:00" GIT_COMMITTER_DATE="2024-03-05T11:20:00+00:00" \
  git commit -q --amend -m "Add retry logic to fetcher"

# The accident: the feature commit is thrown away...
GIT_COMMITTER_DATE="2024-03-05T17:00:00+00:00" git reset -q --hard HEAD~1

# ...work goes on...
cat >> README.md <<'EOF'

## Usage

    from fetcher import fetch
    body = fetch("https://example.org/")
EOF
git add README.md && commit "2024-03-06T08:30:00+00:00" "Document usage in README"

# ...and the reflog is cleaned, so only the object database still has the lost commits.
git reflog expire --expire=now --all
