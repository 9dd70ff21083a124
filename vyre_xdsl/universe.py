"""Makes the vyre dialects, passes and WGSL target visible to stock `xdsl-opt`.

Registered in pyproject.toml under the `xdsl.universe` entry-point group. The
WGSL target is exported as `vyre-wgsl` because xDSL ships a toy `wgsl` target
of its own; `vyre-opt -t wgsl` means ours.
"""

from xdsl.universe import Universe

from vyre_xdsl.backends import get_all_targets
from vyre_xdsl.dialects import get_all_dialects
from vyre_xdsl.passes import get_all_passes


def _universe_target(name: str):
    # the target class must carry the name it is registered under (`from_spec`
    # checks it), so the universe gets the `vyre-` subclass
    def factory():
        from vyre_xdsl.backends.wgsl.target import VyreWGSLTarget

        assert name == "wgsl"
        return VyreWGSLTarget

    return factory


VYRE_UNIVERSE = Universe(
    all_dialects=get_all_dialects(),
    all_passes=get_all_passes(),
    all_targets={f"vyre-{name}": _universe_target(name) for name in get_all_targets()},
)
