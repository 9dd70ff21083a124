# The plugin's FileCheck tests, configured by the lit support vyre_xdsl exposes.
import os

from vyre_xdsl.testing.lit_support import configure

configure(
    config,  # noqa: F821 - defined by lit
    name="vyre-plugin-example",
    test_source_root=os.path.dirname(os.path.abspath(__file__)),
)
