from collections import Counter
from pathlib import Path

LOG = Path("/var/log/webapp/access.log")
REPORT = Path("/app/report.txt")


def _requests():
    lines = LOG.read_text().splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def _expected():
    reqs = _requests()
    ips = Counter()
    statuses = Counter()
    for line in reqs:
        ip = line.split(" ", 1)[0]
        # status is the first field after the closing quote of the request line
        after_request = line.split('"', 2)[2].split()
        status = int(after_request[0])
        ips[ip] += 1
        statuses[status] += 1
    top = sorted(ips.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    out = [
        f"total_requests: {len(reqs)}",
        f"unique_ips: {len(ips)}",
        f"server_errors: {sum(c for s, c in statuses.items() if 500 <= s <= 599)}",
        "top_ips:",
        *[f"{ip} {count}" for ip, count in top],
        "status_counts:",
        *[f"{s} {c}" for s, c in sorted(statuses.items())],
    ]
    return out


def _report_lines():
    assert REPORT.is_file(), "/app/report.txt does not exist"
    text = REPORT.read_text()
    assert text.strip(), "/app/report.txt is empty"
    return text.rstrip("\n").split("\n")


def test_log_untouched():
    lines = LOG.read_text().splitlines()
    assert len(lines) == 2404
    assert len(_requests()) == 2400


def test_summary_lines():
    got = _report_lines()
    want = _expected()
    assert got[:3] == want[:3]


def test_top_ips():
    got = _report_lines()
    want = _expected()
    assert "top_ips:" in got, "missing 'top_ips:' line"
    start = got.index("top_ips:")
    assert got[start + 1 : start + 11] == want[4:14]


def test_status_counts():
    got = _report_lines()
    want = _expected()
    assert "status_counts:" in got, "missing 'status_counts:' line"
    start = got.index("status_counts:")
    assert got[start + 1 :] == want[15:]


def test_whole_report_exact():
    assert _report_lines() == _expected()
