"""The dialects of vyre_xdsl, registered lazily (the xDSL way)."""

from collections.abc import Callable
from importlib.util import find_spec

from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    def get_vyre():
        from vyre_xdsl.dialects.vyre import Vyre

        return Vyre

    def get_kernel():
        from vyre_xdsl.dialects.kernel import Kernel

        return Kernel

    dialects: dict[str, Callable[[], Dialect]] = {"vyre": get_vyre}
    if find_spec("vyre_xdsl.dialects.kernel") is not None:
        dialects["kernel"] = get_kernel
    return dialects
