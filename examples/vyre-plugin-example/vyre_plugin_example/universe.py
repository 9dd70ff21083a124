"""What this package adds to xDSL: found through the `xdsl.universe` entry point
in pyproject.toml, so `xdsl-opt -p example-redundant-loads` and
`vyre-opt -p example-redundant-loads` both work once the package is installed."""

from xdsl.universe import Universe


def _redundant_loads_pass():
    # imported on first use, so listing the universe stays cheap
    from vyre_plugin_example.redundant_loads import RedundantLoadsPass

    return RedundantLoadsPass


UNIVERSE = Universe(all_passes={"example-redundant-loads": _redundant_loads_pass})
