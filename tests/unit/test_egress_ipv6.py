"""The host filter covers IPv6: a root process in a container with CAP_NET_RAW reached the
host's bridge link-local address (fe80::) with raw Ethernet frames (ICMPv6 echo answered,
measured with Docker 20.10 on an internal, inhibit_ipv4 task network), whatever the IPv4 rules
said. The iptables calls are recorded here, not run."""

from __future__ import annotations

import subprocess

import pytest

from factory import egress


@pytest.fixture
def recorded(monkeypatch, tmp_path):
    """Every iptables/ip6tables command line; ``-C`` (check) finds no rule, ``-S`` lists none,
    ``-L`` finds the chain."""
    calls: list[list[str]] = []

    def run(argv, **_):
        calls.append(list(argv))
        missing = "-C" in argv
        out = "-N X\n" if "-S" in argv else ""
        return subprocess.CompletedProcess(argv, 1 if missing else 0, out, "")

    monkeypatch.setattr(egress.subprocess, "run", run)
    monkeypatch.setattr(egress.shutil, "which", lambda name: f"/usr/sbin/{name}")
    monkeypatch.setattr(egress, "_LOCK", tmp_path / "egress.lock")
    monkeypatch.setattr(egress, "host_resolvers", lambda: ["192.0.2.53"])
    monkeypatch.setattr(egress, "host_subnets", lambda: ["192.0.2.0/24"])
    return calls


def _ipv6_drops(calls: list[list[str]]) -> set[tuple[str, str]]:
    return {
        (argv[4], argv[7])
        for argv in calls
        if argv[0] == "ip6tables" and argv[3] == "-I" and argv[-2:] == ["-j", "DROP"]
    }


@pytest.mark.skipif(not egress.Path("/proc/net/if_inet6").exists(), reason="host without IPv6")
def test_task_bridges_drop_ipv6_in_and_through_the_host(recorded):
    egress.protect_bridges("fxm+")
    assert _ipv6_drops(recorded) == {("INPUT", "fxm+"), ("FORWARD", "fxm+")}


@pytest.mark.skipif(not egress.Path("/proc/net/if_inet6").exists(), reason="host without IPv6")
def test_the_egress_bridge_drops_ipv6_too(recorded):
    egress.install()
    assert _ipv6_drops(recorded) == {("INPUT", egress.BRIDGE), ("FORWARD", egress.BRIDGE)}
    assert not egress.installed()  # the recorded ip6tables -C finds no rule


def test_a_host_without_ipv6_needs_no_rule(recorded, monkeypatch):
    real = egress.Path

    class NoIPv6(type(real())):
        def exists(self):
            return False if str(self) == "/proc/net/if_inet6" else super().exists()

    monkeypatch.setattr(egress, "Path", NoIPv6)
    egress.protect_bridges("fxm+")
    assert not [argv for argv in recorded if argv[0] == "ip6tables"]
    assert any(argv[0] == "iptables" for argv in recorded)
