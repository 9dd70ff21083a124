"""Paths and small helpers shared by the test files (import with `from ..support import ...`)."""

import pathlib

#: the repository root
ROOT = pathlib.Path(__file__).resolve().parent.parent
#: the bundled example programs
EXAMPLES = ROOT / "examples"
