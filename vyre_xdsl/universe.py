"""Makes the vyre dialects, passes and WGSL target visible to stock `xdsl-opt`.

Registered in pyproject.toml under the `xdsl.universe` entry-point group. The
WGSL target is exported as `vyre-wgsl` because xDSL ships a toy `wgsl` target
of its own; `vyre-opt -t wgsl` means ours.
"""

from xdsl.universe import Universe

from vyre_xdsl.backends import get_all_targets
from vyre_xdsl.dialects import get_all_dialects
from vyre_xdsl.passes import get_all_passes

VYRE_UNIVERSE = Universe(
    all_dialects=get_all_dialects(),
    all_passes=get_all_passes(),
    all_targets={f"vyre-{name}": factory for name, factory in get_all_targets().items()},
)
