"""The egress filter of factory's container network: the internet yes, the host and private
addresses no.

Containers that may use the network (task containers with ``network_mode = "public"``, and
image builds) are attached to one dedicated bridge, :data:`BRIDGE`. Two iptables chains keyed on
that interface drop what must never be reached from a container:

* ``FACTORY-INPUT`` (jumped to from ``INPUT``): anything addressed to the host itself, on any of
  its addresses (the bridge's gateway, docker0's gateway, the host's own interfaces);
* ``FACTORY-EGRESS`` (jumped to from Docker's ``DOCKER-USER``): private and special ranges
  (RFC 1918, 100.64/10 carrier-grade NAT, 169.254/16 link-local and cloud metadata, 127/8,
  multicast, the host's own subnets and every Docker network's subnet), except DNS to the
  resolvers the engine forwards to.

Replies to connections a container opened are let through (conntrack), so registries and
mirrors stay reachable. The rules can only be installed by root on the engine's own host; the
caller falls back to no network at all when they cannot be (an ``internal`` Docker network is no
substitute: its containers still reach the host through the gateway address).
"""

from __future__ import annotations

import fcntl
import hashlib
import ipaddress
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

BRIDGE = "factory0"
"""The Linux bridge interface of factory's network."""
EGRESS_CHAIN = "FACTORY-EGRESS"
INPUT_CHAIN = "FACTORY-INPUT"
BLOCKED_RANGES = (
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "224.0.0.0/4",
    "240.0.0.0/4",
)
"""Never reachable from a container (plus the host's subnets and Docker's, found at install)."""
_LOCK = Path("/run/factory-egress.lock")
_REJECT = ["-j", "REJECT", "--reject-with", "icmp-admin-prohibited"]


class EgressError(Exception):
    """The filter could not be installed; the message says why."""


def _iptables(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        ["iptables", "-w", "10", *args], capture_output=True, text=True, timeout=30
    )
    if check and result.returncode != 0:
        raise EgressError(f"iptables {' '.join(args)}: {result.stderr.strip()[:200]}")
    return result


def _ip6tables(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["ip6tables", "-w", "10", *args], capture_output=True, text=True, timeout=30
    )


def drop_ipv6(interface: str) -> None:
    """Drop every IPv6 packet that comes in on ``interface`` (iptables' ``name+`` wildcard
    too), to the host and through it. A container's own IPv6 is off on factory's networks, but
    a root process with ``CAP_NET_RAW`` (in Docker's default set) writes whole Ethernet frames:
    the host answered such a frame on its bridge's link-local address (``fe80::``), whatever
    the IPv4 rules say. Nothing to do where the host has no IPv6; raises
    :class:`EgressError` where it has and the rule cannot be installed."""
    if not Path("/proc/net/if_inet6").exists():
        return
    if shutil.which("ip6tables") is None:
        raise EgressError("ip6tables is not installed (the host has IPv6)")
    for chain in ("INPUT", "FORWARD"):
        rule = [chain, "-i", interface, "-j", "DROP"]
        if _ip6tables("-C", *rule).returncode != 0:
            added = _ip6tables("-I", chain, "1", *rule[1:])
            if added.returncode != 0:
                raise EgressError(f"ip6tables -I {' '.join(rule)}: {added.stderr.strip()[:200]}")


def ipv6_dropped(interface: str) -> bool:
    """Whether :func:`drop_ipv6`'s rules are in place (True on a host without IPv6)."""
    if not Path("/proc/net/if_inet6").exists():
        return True
    if shutil.which("ip6tables") is None:
        return False
    return all(
        _ip6tables("-C", chain, "-i", interface, "-j", "DROP").returncode == 0
        for chain in ("INPUT", "FORWARD")
    )


def host_resolvers(resolv_conf: Path = Path("/etc/resolv.conf")) -> list[str]:
    """IPv4 nameservers of the host (those Docker's embedded DNS forwards to), loopback
    excluded (Docker replaces a loopback resolver by public ones)."""
    found: list[str] = []
    try:
        lines = resolv_conf.read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "nameserver":
            try:
                address = ipaddress.ip_address(parts[1])
            except ValueError:
                continue
            if address.version == 4 and not address.is_loopback and parts[1] not in found:
                found.append(parts[1])
    return found


def host_subnets() -> list[str]:
    """The IPv4 subnets the host is directly attached to (its LANs), from the routing table."""
    try:
        text = subprocess.run(
            ["ip", "-4", "route", "show", "scope", "link"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    subnets = []
    for line in text.splitlines():
        first = line.split()[0] if line.split() else ""
        try:
            network = ipaddress.ip_network(first, strict=False)
        except ValueError:
            continue
        if network.version == 4 and network.prefixlen > 0:
            subnets.append(str(network))
    return subnets


def egress_rules(resolvers: Iterable[str], extra_blocked: Iterable[str]) -> list[list[str]]:
    """The rules of :data:`EGRESS_CHAIN`, in order (each a list of iptables arguments)."""
    rules = [["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"]]
    for resolver in resolvers:
        for proto in ("udp", "tcp"):
            rules.append(["-d", f"{resolver}/32", "-p", proto, "--dport", "53", "-j", "RETURN"])
    blocked: list[str] = []
    for cidr in (*BLOCKED_RANGES, *extra_blocked):
        network = str(ipaddress.ip_network(cidr, strict=False))
        if network not in blocked:
            blocked.append(network)
    rules += [["-d", cidr, *_REJECT] for cidr in blocked]
    rules.append(["-j", "RETURN"])
    return rules


def input_rules() -> list[list[str]]:
    """The rules of :data:`INPUT_CHAIN`: nothing new from a container to the host."""
    return [
        ["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"],
        [*_REJECT],
    ]


def _listed(chain: str) -> list[str]:
    lines = _iptables("-S", chain).stdout.splitlines()
    return [line for line in lines if line.startswith("-A ")]


def _sync_chain(chain: str, rules: list[list[str]]) -> None:
    """Make ``chain`` hold exactly ``rules`` (marked by their hash, so an unchanged chain is
    left alone). While it is rewritten its first rule rejects everything: a container never
    sees a moment without the filter."""
    marker = "factory:" + hashlib.sha256(repr(rules).encode()).hexdigest()[:16]
    if _iptables("-n", "-L", chain, check=False).returncode != 0:
        _iptables("-N", chain)
    current = _listed(chain)
    if current and marker in current[0]:
        return
    _iptables("-I", chain, "1", *_REJECT)
    for _ in current:
        _iptables("-D", chain, "2")
    _iptables("-A", chain, "-m", "comment", "--comment", marker)
    for rule in rules:
        _iptables("-A", chain, *rule)
    _iptables("-D", chain, "1")


def _ensure_jump(parent: str, chain: str, *, position: int = 1) -> None:
    jump = ["-i", BRIDGE, "-j", chain]
    if _iptables("-C", parent, *jump, check=False).returncode != 0:
        _iptables("-I", parent, str(position), *jump)


def install(docker_subnets: Iterable[str] = ()) -> None:
    """Install (or refresh) the filter for :data:`BRIDGE`; raises :class:`EgressError`."""
    if shutil.which("iptables") is None:
        raise EgressError("iptables is not installed")
    resolvers = host_resolvers()
    blocked = [*host_subnets(), *docker_subnets]
    _LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # several factory processes may start at once
        _sync_chain(EGRESS_CHAIN, egress_rules(resolvers, blocked))
        _sync_chain(INPUT_CHAIN, input_rules())
        if _iptables("-n", "-L", "DOCKER-USER", check=False).returncode != 0:
            raise EgressError("the DOCKER-USER chain is missing (is Docker's iptables off?)")
        _ensure_jump("DOCKER-USER", EGRESS_CHAIN)
        _ensure_jump("INPUT", INPUT_CHAIN)
        drop_ipv6(BRIDGE)


def protect_bridges(pattern: str) -> None:
    """Reject anything new from the interfaces matching ``pattern`` (iptables' ``name+``
    wildcard) to the host itself: the input chain of the egress filter, jumped to for them
    (raises :class:`EgressError`). Task networks are internal, so nothing leaves them
    otherwise; this closes the one way left, the host's own addresses (IPv6 included:
    :func:`drop_ipv6`)."""
    if shutil.which("iptables") is None:
        raise EgressError("iptables is not installed")
    _LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _sync_chain(INPUT_CHAIN, input_rules())
        jump = ["-i", pattern, "-j", INPUT_CHAIN]
        if _iptables("-C", "INPUT", *jump, check=False).returncode != 0:
            _iptables("-I", "INPUT", "1", *jump)
        drop_ipv6(pattern)


def installed() -> bool:
    """Whether the jumps to both chains are in place (a cheap check for a second caller)."""
    if shutil.which("iptables") is None:
        return False
    return all(
        _iptables("-C", parent, "-i", BRIDGE, "-j", chain, check=False).returncode == 0
        for parent, chain in (("DOCKER-USER", EGRESS_CHAIN), ("INPUT", INPUT_CHAIN))
    ) and ipv6_dropped(BRIDGE)
