"""`-o` targets that are not regular files (`/dev/null`, FIFOs) are written in place:
renaming a temporary file over them would replace the device with a file (as root,
`vyre-opt -o /dev/null` once turned /dev/null into a regular file)."""

import os
import stat
import threading

from vyre_xdsl.tools.common import write_atomically


def test_fifo_stays_a_fifo_and_gets_the_data(tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_atomically(str(fifo), "builtin.module {}\n")
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received == [b"builtin.module {}\n"]


def test_regular_file_is_replaced_atomically(tmp_path):
    target = tmp_path / "out.mlir"
    target.write_text("old")
    write_atomically(str(target), "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]
