"""vyre-opt with one deliberately broken test pass, `test-make-read-only`: it turns
every buffer read_only, so a program that stores leaves IR that fails to verify.

    python broken_pass_opt.py -p test-make-read-only in.mlir
"""

import sys
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr
from xdsl.passes import ModulePass

from vyre_xdsl.dialects.vyre import BufferOp
from vyre_xdsl.tools.vyre_opt import VyreOptMain, run_tool


@dataclass(frozen=True)
class MakeReadOnlyPass(ModulePass):
    """Marks every buffer read_only (breaks any program that stores)."""

    name = "test-make-read-only"

    def apply(self, ctx, op):
        for buffer in op.walk():
            if isinstance(buffer, BufferOp):
                buffer.properties["access"] = StringAttr("read_only")


class BrokenOptMain(VyreOptMain):
    def register_all_passes(self):
        super().register_all_passes()
        self.register_pass(MakeReadOnlyPass.name, lambda: MakeReadOnlyPass)


if __name__ == "__main__":
    sys.exit(run_tool(BrokenOptMain))
