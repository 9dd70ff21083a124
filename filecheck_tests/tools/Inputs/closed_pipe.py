"""Run a command whose stderr reader has gone away and print its exit status.

    python closed_pipe.py vyre-opt bad.mlir      # like `vyre-opt bad.mlir 2>&1 >/dev/null | head -0`
"""

import os
import subprocess
import sys

read_end, write_end = os.pipe()
os.close(read_end)  # the reader leaves before the tool writes its error
status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=write_end).returncode
os.close(write_end)
print("exit", status)
