"""`VyreTrap`, as the interpreter raises it; defined with the rest of the trap
record in `vyre_xdsl.traps` (every backend raises the same class)."""

from vyre_xdsl.traps import VyreTrap

__all__ = ["VyreTrap"]
