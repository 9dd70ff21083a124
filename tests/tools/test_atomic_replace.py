"""`write_files_atomically` replaces a file in one rename: a reader never finds
the path missing or holding a partial file while it is rewritten, and writers
that rewrite the same files at the same time never fail."""

from __future__ import annotations

import threading

from vyre_xdsl.tools import common

OLD, NEW = b"o" * 65536, b"n" * 65536


def rewrite_while_reading(path, writers: int, rounds: int) -> tuple[list[str], list[str]]:
    """(what the reader saw that was wrong, errors the writers raised)."""
    stop = threading.Event()
    seen: list[str] = []
    errors: list[str] = []

    def read() -> None:
        while not stop.is_set():
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                seen.append("missing")
                continue
            if data not in (OLD, NEW):
                seen.append(f"partial file of {len(data)} bytes")

    def write() -> None:
        for i in range(rounds):
            try:
                common.write_files_atomically({str(path): NEW if i % 2 else OLD})
            except common.OutputFileError as error:
                errors.append(str(error))

    path.write_bytes(OLD)
    reader = threading.Thread(target=read)
    reader.start()
    threads = [threading.Thread(target=write) for _ in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    reader.join()
    return seen, errors


def test_a_reader_never_sees_a_missing_or_partial_file(tmp_path):
    seen, errors = rewrite_while_reading(tmp_path / "out.bin", writers=1, rounds=400)
    assert seen == [] and errors == []


def test_two_concurrent_writers_never_fail_and_leave_no_temporary_file(tmp_path):
    seen, errors = rewrite_while_reading(tmp_path / "out.bin", writers=2, rounds=400)
    assert errors == [] and seen == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]
