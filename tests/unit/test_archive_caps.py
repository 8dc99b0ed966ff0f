"""Downloads from a container are streamed with caps: a huge verifier log costs neither its
size in memory nor an unbounded wait, small files (rewards) always survive, and every cut is
recorded."""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Iterator

from factory.archive import SMALL_FILE, extract_capped


class _Zeros(io.RawIOBase):
    """``size`` zero bytes, produced on demand (never held in memory)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = b"\0" * n
        self.left -= n
        return n


class _Pipe(io.RawIOBase):
    """Collects what tarfile writes, for the generator below to hand out in chunks."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.chunks.append(bytes(data))
        return len(data)


def _stream(files: list[tuple[str, int | bytes]]) -> Iterator[bytes]:
    """A tar stream like the engine's get_archive: entries under a top folder, produced
    lazily in chunks, so a multi-gigabyte entry never exists in memory."""
    pipe = _Pipe()
    with tarfile.open(fileobj=pipe, mode="w|") as archive:
        top = tarfile.TarInfo("verifier")
        top.type = tarfile.DIRTYPE
        archive.addfile(top)
        for name, content in files:
            info = tarfile.TarInfo(f"verifier/{name}")
            if isinstance(content, bytes):
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
            else:
                info.size = content
                archive.addfile(info, io.BufferedReader(_Zeros(content), 1 << 20))
            yield from pipe.chunks
            pipe.chunks.clear()
    yield from pipe.chunks


def test_a_huge_file_is_cut_and_the_reward_after_it_survives():
    files = extract_capped(
        _stream([("big.log", 64 << 20), ("reward.txt", b"1\n")]),
        file_cap=1 << 20,
        total_cap=4 << 20,
    )
    assert files["reward.txt"] == b"1\n"
    assert len(files["big.log"]) == 1 << 20
    assert files.truncated == [f"big.log: kept the first {1 << 20} of {64 << 20} bytes"]


def test_the_total_cap_skips_large_files_but_keeps_small_ones():
    files = extract_capped(
        _stream([("a.log", 3000), ("b.log", 9000), ("c.log", 9000), ("reward.json", b"{}")]),
        file_cap=8000,
        total_cap=10_000,
    )
    assert len(files["a.log"]) == 3000
    assert len(files["b.log"]) == 7000  # what was left of the total
    assert "c.log" not in files
    assert files["reward.json"] == b"{}"
    assert "b.log: kept the first 7000 of 9000 bytes" in files.truncated
    assert "c.log: skipped (9000 bytes, total cap)" in files.truncated
    assert len(b"{}") <= SMALL_FILE


def test_untouched_downloads_record_nothing():
    files = extract_capped(_stream([("reward.txt", b"0.5\n"), ("out/x.txt", b"x")]))
    assert dict(files) == {"reward.txt": b"0.5\n", "out/x.txt": b"x"}
    assert files.truncated == []


def test_a_stalled_stream_stops_at_its_deadline():
    def stalled() -> Iterator[bytes]:
        chunks = _stream([("reward.txt", b"1\n"), ("slow.log", 1 << 20)])
        yield next(chunks)
        for chunk in chunks:
            time.sleep(0.2)
            yield chunk

    files = extract_capped(stalled(), timeout_sec=0.1)
    assert any("deadline" in note for note in files.truncated)
