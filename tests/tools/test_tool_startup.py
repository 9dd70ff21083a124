"""How the tools start and end. Each launch pays for every module it imports (a
FileCheck suite launches `vyre-opt` about a hundred times), so a module that only
some inputs or options need is imported when they need it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AXPY = str(ROOT / "examples" / "axpy.mlir")
MATMUL_SCF = str(ROOT / "examples" / "matmul_scf.mlir")

#: imported only for standard-MLIR input (the converter and the dialects it maps from)
CONVERSION = (
    "vyre_xdsl.conversion.function",
    "vyre_xdsl.conversion.checks",
    "xdsl.dialects.linalg",
    "vyre_xdsl.conversion.linalg_named",
)
#: the named pipelines (they import every pass they compose), the WGSL backend,
#: the GPU runtime and bfloat16 (most of a second)
PIPELINES = ("vyre_xdsl.passes.pipeline", "vyre_xdsl.passes.kernel_coarsen")
BACKEND = ("vyre_xdsl.backends.wgsl.compile",)
RUNTIME = ("wgpu", "ml_dtypes")


def _loaded_after(code: str) -> set[str]:
    """The modules loaded once `code` ran in a fresh interpreter."""
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def _vyre_opt(*args: str) -> str:
    return (
        "import contextlib, io\n"
        "from vyre_xdsl.tools.vyre_opt import VyreOptMain, run_tool\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert run_tool(VyreOptMain, {list(args)!r}) == 0\n"
    )


def test_importing_vyre_opt_imports_no_converter_pipeline_backend_or_runtime():
    loaded = _loaded_after("import vyre_xdsl.tools.vyre_opt")
    assert "xdsl.xdsl_opt_main" in loaded  # the check sees what was imported
    assert loaded.isdisjoint(CONVERSION + PIPELINES + BACKEND + RUNTIME)


def test_vyre_input_without_passes_loads_only_the_vyre_dialect():
    loaded = _loaded_after(_vyre_opt(AXPY))
    assert "vyre_xdsl.dialects.vyre" in loaded
    assert loaded.isdisjoint(CONVERSION + PIPELINES + BACKEND + RUNTIME)


@pytest.mark.parametrize(
    ("args", "needed"),
    [
        ((AXPY, "--lower", "-t", "wgsl"), PIPELINES[:1] + BACKEND),
        ((MATMUL_SCF, "-p", "convert-to-vyre"), CONVERSION),
        ((MATMUL_SCF, "--lower"), CONVERSION),
    ],
)
def test_what_an_option_or_input_needs_is_imported_when_it_is_used(args, needed):
    loaded = _loaded_after(_vyre_opt(*args))
    assert set(needed) <= loaded
    assert loaded.isdisjoint(RUNTIME)


def test_importing_vyre_run_does_not_import_bfloat16_or_wgpu():
    loaded = _loaded_after("import vyre_xdsl.tools.vyre_run")
    assert "vyre_xdsl.runtime.arrays" in loaded
    assert loaded.isdisjoint(RUNTIME)


def _console_script(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def test_vyre_opt_process_flushes_its_output_and_exit_status():
    """The console script exits without the collector's shutdown passes: what it
    printed must still all arrive, with its status."""
    axpy = Path(AXPY).read_text()
    text = "\n".join(axpy.replace("@axpy", f"@p{i}") for i in range(200))
    done = subprocess.run(
        [_console_script("vyre-opt"), "-"], input=text, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("vyre.program @p") == 200
    assert done.stdout.rstrip().endswith("}")
    bad = subprocess.run(
        [_console_script("vyre-opt"), "-"],
        input="vyre.program @p workgroup_size [0, 1, 1] {\n}\n",
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1
    assert "workgroup_size axis x is 0" in bad.stderr


BAD_STORE = str(ROOT / "filecheck_tests" / "tools" / "Inputs" / "bad-store.mlir")


def test_vyre_run_reports_bad_input_before_looking_for_a_gpu():
    """The default backend starts wgpu to look for an adapter: a module that fails
    to verify is reported without it."""
    loaded = _loaded_after(
        "import contextlib, io\n"
        "from vyre_xdsl.tools.vyre_run import main\n"
        "with contextlib.redirect_stderr(io.StringIO()) as err:\n"
        f"    assert main([{BAD_STORE!r}, '--random-inputs', '0']) == 1\n"
        "assert 'store to read_only buffer @x' in err.getvalue()\n"
    )
    assert "vyre_xdsl.tools.vyre_run" in loaded
    assert "wgpu" not in loaded
