# lit configuration for the FileCheck suites under filecheck_tests/.
import os
import sys

import lit.formats

config.name = "vyre_xdsl"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
root = os.path.dirname(os.path.abspath(__file__))
# Run as `lit filecheck_tests`; only that folder holds tests.
config.test_source_root = root
config.test_exec_root = os.path.join(root, ".lit-out")
config.excludes = ["Inputs", "examples", ".venv", "docs", "tests", "bench", "vyre_xdsl", ".lit-out"]
bindir = os.path.dirname(sys.executable)
config.environment["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
config.environment["PYTHONPATH"] = root
for var in ("XDG_RUNTIME_DIR", "WGPU_BACKEND_TYPE", "VK_DRIVER_FILES", "VK_ICD_FILENAMES", "HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%examples", os.path.join(root, "examples")))
# custom -> generic -> custom round trip (the xDSL suites' XDSL_GENERIC_ROUNDTRIP); both
# vyre-opt runs share one process (vyre_xdsl.testing.cli_batch), which keeps lit fast
_batch = sys.executable + " -m vyre_xdsl.testing.cli_batch --run"
config.substitutions.append(
    ("VYRE_GENERIC_ROUNDTRIP", f"{_batch} 'vyre-opt %s --print-op-generic | vyre-opt' | filecheck %s")
)
config.substitutions.append(("VYRE_ROUNDTRIP", f"{_batch} 'vyre-opt %s | vyre-opt' | filecheck %s"))
