"""A lit configuration for FileCheck tests of vyre IR, for this project and for plugins.

A plugin's `lit.cfg.py` (lit runs it with `config` and `lit_config` defined):

```python
import os
from vyre_xdsl.testing.lit_support import configure

configure(config, name="my-plugin", test_source_root=os.path.dirname(os.path.abspath(__file__)))
```

Then RUN lines can use `vyre-opt`, `xdsl-opt`, `vyre-run`, `vyre-compile` and
`filecheck` (every pass and dialect registered through an `xdsl.universe` entry
point is visible to both `-opt` drivers), and these substitutions:

| substitution | expands to |
| --- | --- |
| `%python` | the Python interpreter running lit (the one vyre_xdsl is installed in) |
| `VYRE_ROUNDTRIP` | `vyre-opt %s \\| vyre-opt \\| filecheck %s` |
| `VYRE_GENERIC_ROUNDTRIP` | the same through the generic op form |

(Both round trips run their two `vyre-opt`s in one process; `python -m
vyre_xdsl.testing.cli_batch` runs many tool command lines of one test file in one
process, which keeps large suites fast.)

Each test's processes use one BLAS thread (`OPENBLAS_NUM_THREADS=1` unless the
caller sets it): numpy's OpenBLAS otherwise starts a spinning thread per core at
import, which takes the cores that lit's parallel workers need.

Nothing depends on where the project's sources are: the tools are found next to
the running interpreter (its `bin/` folder comes first on `PATH`), and
`PYTHONPATH` is passed through as the caller set it, with `python_paths`
prepended when given.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

#: environment variables the tests see as the caller set them (GPU runs need the first four)
PASSED_THROUGH = (
    "XDG_RUNTIME_DIR",
    "WGPU_BACKEND_TYPE",
    "VK_DRIVER_FILES",
    "VK_ICD_FILENAMES",
    "HOME",
)

#: the BLAS threads of each test's processes: one, unless the caller sets it
BLAS_THREADS = "OPENBLAS_NUM_THREADS"


def configure(
    config,
    *,
    name: str,
    test_source_root: str,
    test_exec_root: str | None = None,
    suffixes: Sequence[str] = (".mlir", ".test"),
    python_paths: Sequence[str] = (),
    excludes: Sequence[str] = (),
) -> None:
    """Fill in a lit `config` for FileCheck tests of vyre IR.

    `test_exec_root` defaults to `<test_source_root>/.lit-out`. `python_paths`
    are prepended to the caller's `PYTHONPATH` (never replacing it).
    """
    import lit.formats

    config.name = name
    config.test_format = lit.formats.ShTest(execute_external=False)
    config.suffixes = list(suffixes)
    config.test_source_root = test_source_root
    config.test_exec_root = test_exec_root or os.path.join(test_source_root, ".lit-out")
    config.excludes = [*getattr(config, "excludes", []), ".lit-out", *excludes]
    bindir = os.path.dirname(sys.executable)
    config.environment["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])
    python_path = [*python_paths, *filter(None, [os.environ.get("PYTHONPATH")])]
    if python_path:
        config.environment["PYTHONPATH"] = os.pathsep.join(python_path)
    for var in PASSED_THROUGH:
        if var in os.environ:
            config.environment[var] = os.environ[var]
    # numpy's OpenBLAS starts a thread per core at import, which spins on the cores
    # that lit's other workers need: about 0.09 s of CPU per tool launch, for linear
    # algebra the tools never do
    config.environment[BLAS_THREADS] = os.environ.get(BLAS_THREADS, "1")
    config.substitutions.append(("%python", sys.executable))
    # custom -> generic -> custom round trip (the xDSL suites' XDSL_GENERIC_ROUNDTRIP); both
    # vyre-opt runs share one process (vyre_xdsl.testing.cli_batch), which keeps lit fast
    batch = f"{sys.executable} -m vyre_xdsl.testing.cli_batch --run"
    config.substitutions.append(
        (
            "VYRE_GENERIC_ROUNDTRIP",
            f"{batch} 'vyre-opt %s --print-op-generic | vyre-opt' | filecheck %s",
        )
    )
    config.substitutions.append(
        ("VYRE_ROUNDTRIP", f"{batch} 'vyre-opt %s | vyre-opt' | filecheck %s")
    )
