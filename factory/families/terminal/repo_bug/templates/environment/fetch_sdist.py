"""Fetch one pinned source distribution from the package index pip is configured for
(PIP_INDEX_URL, else pip's global.index-url, else PyPI) and check its sha256. Used at image
build time only; the sdist is unpacked and deleted in the same build step.

    python3 fetch_sdist.py NAME VERSION SHA256 DEST
"""

import hashlib
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request


def index_url():
    found = os.environ.get("PIP_INDEX_URL")
    if not found:
        run = subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", "global.index-url"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        found = run.stdout.strip() if run.returncode == 0 else ""
    return (found or "https://pypi.org/simple").rstrip("/") + "/"


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def fetch(url, tries=4):
    for attempt in range(tries):
        try:
            with urllib.request.urlopen(url, timeout=120) as response:
                return response.read()
        except OSError as exc:
            if attempt == tries - 1:
                raise SystemExit(f"cannot fetch {url}: {exc}") from None
            time.sleep(2 * (attempt + 1))
    return b""


def main():
    name, version, sha256, dest = sys.argv[1:5]
    page_url = urllib.parse.urljoin(index_url(), normalize(name) + "/")
    page = fetch(page_url).decode("utf-8", errors="replace")
    for href in re.findall(r'href="([^"]+)"', page):
        link = urllib.parse.urljoin(page_url, href.replace("&amp;", "&"))
        filename = urllib.parse.unquote(link.split("#", 1)[0].rsplit("/", 1)[-1])
        stem = filename[: -len(".tar.gz")] if filename.endswith(".tar.gz") else ""
        if stem.endswith("-" + version) and normalize(stem[: -len(version) - 1]) == normalize(name):
            data = fetch(link.split("#", 1)[0])
            if hashlib.sha256(data).hexdigest() != sha256:
                raise SystemExit(f"{filename}: sha256 mismatch (expected {sha256})")
            with open(dest, "wb") as handle:
                handle.write(data)
            print(f"fetched {filename} ({len(data)} bytes), sha256 OK")
            return 0
    raise SystemExit(f"{name}=={version}: no source distribution on {page_url}")


if __name__ == "__main__":
    sys.exit(main())
