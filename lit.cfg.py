# lit configuration for the FileCheck suites under filecheck_tests/: the one the
# project exposes to plugins (vyre_xdsl/testing/lit_support.py), plus %examples.
import os

from vyre_xdsl.testing.lit_support import configure

root = os.path.dirname(os.path.abspath(__file__))
# Run as `lit filecheck_tests`; only that folder holds tests.
configure(
    config,  # noqa: F821 - defined by lit
    name="vyre_xdsl",
    test_source_root=root,
    python_paths=[root],
    excludes=["Inputs", "examples", ".venv", "docs", "tests", "bench", "vyre_xdsl"],
)
config.substitutions.append(("%examples", os.path.join(root, "examples")))  # noqa: F821
# The tools' persistent compile cache stays off: lit never writes to the user's cache.
config.environment["VYRE_CACHE_DIR"] = "off"  # noqa: F821
