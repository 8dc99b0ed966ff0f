"""What a build log says about hosts the build could not reach (no internet here)."""

from __future__ import annotations

from factory.images.build_log import missing_packages, unreachable_hosts

LOG = """Step 4/9 : RUN curl --proto '=https' -sSf https://sh.rustup.rs | sh -s -- -y
curl: (6) Could not resolve host: sh.rustup.rs
Step 5/9 : RUN wget -q https://github.com/x/y/archive/v1.tar.gz || true
wget: unable to resolve host address 'github.com'
fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: github.com
curl: (7) Failed to connect to example.org port 443 after 3 ms: Couldn't connect to server
Err:1 http://ppa.launchpad.net jammy InRelease
  Could not resolve 'ppa.launchpad.net'
Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]
Successfully installed pytest-8.3.4
"""


def test_unreachable_hosts_in_order_once_each():
    assert unreachable_hosts(LOG) == [
        "sh.rustup.rs",
        "github.com",
        "example.org",
        "ppa.launchpad.net",
    ]


def test_a_clean_log_names_no_host():
    assert (
        unreachable_hosts("Step 1/2 : FROM factory/base:bookworm\nGet:1 http://deb.debian.org\n")
        == []
    )


def test_missing_packages_reads_each_apt_message_once() -> None:
    log = (
        "#7 1.2 E: Unable to locate package openjdk-21-jdk\n"
        "#7 1.2 E: Package 'python3.12' has no installation candidate\n"
        "E: Couldn't find any package by glob 'libfoo*'\n"
        "E: Version '1.0' for 'bar' was not found\n"
        "#8 E: Unable to locate package openjdk-21-jdk\n"
    )
    assert missing_packages(log) == ["openjdk-21-jdk", "python3.12", "libfoo*", "bar"]
    assert missing_packages("E: Sub-process /usr/bin/dpkg returned an error code (1)") == []
