from __future__ import annotations

import base64
import re

import pytest

from factory.errors import ImageBuildError
from factory.images.dockerfile_compat import make_legacy_compatible


def decoded(line: str) -> str:
    return base64.b64decode(re.search(r"echo (\S+) \| base64 -d", line).group(1)).decode()


def test_plain_dockerfile_is_unchanged():
    text = "FROM debian:bookworm\nRUN apt-get update && \\\n    apt-get install -y curl\nCOPY a b\n"
    result = make_legacy_compatible(text)
    assert result.text == text and result.notes == []


def test_run_heredoc_script_uses_the_shell():
    text = 'FROM x\nSHELL ["/bin/bash", "-o", "pipefail", "-c"]\nRUN <<EOF\nset -e\necho "$HOME"\nEOF\nRUN true\n'
    lines = make_legacy_compatible(text).text.splitlines()
    assert lines[2].startswith("RUN echo ") and "/bin/bash /tmp/.factory-heredoc" in lines[2]
    assert decoded(lines[2]) == 'set -e\necho "$HOME"\n'
    assert lines[3] == "RUN true"


def test_run_heredoc_as_stdin_and_tab_stripping():
    text = "FROM x\nRUN python3 <<-'PY'\n\timport sys\n\tprint(sys.version)\n\tPY\n"
    line = make_legacy_compatible(text).text.splitlines()[1]
    assert "python3 < /tmp/.factory-heredoc" in line
    assert decoded(line) == "import sys\nprint(sys.version)\n"


def test_shebang_script_runs_as_itself():
    line = make_legacy_compatible(
        "FROM x\nRUN <<EOF\n#!/usr/bin/env python3\nprint(1)\nEOF\n"
    ).text.splitlines()[1]
    assert "chmod +x /tmp/.factory-heredoc && /tmp/.factory-heredoc" in line


def test_copy_heredoc_writes_the_file():
    text = "FROM x\nWORKDIR /app\nCOPY --chmod=755 <<EOF /app/run.sh\n#!/bin/sh\necho hi\nEOF\n"
    line = make_legacy_compatible(text).text.splitlines()[2]
    assert line.startswith('RUN mkdir -p "$(dirname /app/run.sh)"')
    assert line.endswith("> /app/run.sh && chmod 755 /app/run.sh")
    assert decoded(line) == "#!/bin/sh\necho hi\n"


def test_cache_mounts_and_link_are_dropped():
    text = (
        "FROM x\n"
        "RUN --mount=type=cache,target=/root/.cache/pip \\\n    pip install -r req.txt\n"
        "COPY --link --chmod=644 conf.ini /etc/app/\n"
    )
    result = make_legacy_compatible(text)
    lines = result.text.splitlines()
    assert lines[1] == "RUN pip install -r req.txt"
    assert lines[2] == "COPY conf.ini /etc/app/"
    assert lines[3] == "RUN chmod -R 644 /etc/app/"
    assert len(result.notes) == 3


def test_unemulatable_mounts_are_refused_clearly():
    with pytest.raises(ImageBuildError, match="type=secret"):
        make_legacy_compatible("FROM x\nRUN --mount=type=secret,id=tok cat /run/secrets/tok\n")
