"""Run commands whose stderr reader has gone away and print each one's exit status.

python closed_pipe.py "vyre-opt bad.mlir"   # like `vyre-opt bad.mlir 2>&1 >/dev/null | head -0`
"""

import os
import shlex
import subprocess
import sys

for command in sys.argv[1:]:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader leaves before the tool writes its error
    words = shlex.split(command)
    status = subprocess.run(words, stdout=subprocess.DEVNULL, stderr=write_end).returncode
    os.close(write_end)
    print(f"{words[0]}: exit {status}")
