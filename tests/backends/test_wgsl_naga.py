"""Every printed WGSL module passes naga's full validation on lavapipe.

`create_shader_module` parses and validates; `create_compute_pipeline` with the
automatic layout runs the rest (uniformity, bindings, entry point). Covered:
every example, unfused and (once the vyre-fuse pass exists) fused, and random
modules from `tests/backends/test_wgsl_programs.py` that exercise every construct the
printer handles.
"""

from __future__ import annotations

from importlib.util import find_spec

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

wgpu = pytest.importorskip("wgpu")

import vyre_xdsl  # noqa: E402
from vyre_xdsl.backends.wgsl import compile_module  # noqa: E402
from vyre_xdsl.context import parse_module  # noqa: E402
from vyre_xdsl.diagnostics import verify_module  # noqa: E402

from .. import support  # noqa: E402
from .test_wgsl_programs import random_module  # noqa: E402

EXAMPLES = sorted(support.EXAMPLES.glob("*.mlir"))
FUSE_AVAILABLE = find_spec("vyre_xdsl.passes.vyre_fuse") is not None
#: the `device` fixture (conftest.py) requests the features the runtime requests
DEVICE_FEATURES = True
VARIANTS = [(p, False) for p in EXAMPLES] + (
    [(p, True) for p in EXAMPLES] if FUSE_AVAILABLE else []
)


def validate(device, wgsl: str, entry: str = "main") -> None:
    module = device.create_shader_module(code=wgsl)
    device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": entry})


def test_examples_exist():
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize(
    "path,fused", VARIANTS, ids=[f"{p.stem}{'-fused' if f else ''}" for p, f in VARIANTS]
)
def test_example_wgsl_validates(device, path, fused):
    module = vyre_xdsl.parse(path.read_text(), path.name)  # standard MLIR is converted
    if fused:
        from vyre_xdsl.api import fuse_module

        module = fuse_module(module)
    kernels = compile_module(module)
    assert kernels
    for kernel in kernels:
        validate(device, kernel.wgsl, kernel.entry_point)


def test_naga_rejects_broken_wgsl(device):
    # the validation above can fail: a module with a type error is refused
    kernel = compile_module(parse_module(EXAMPLES[0].read_text()))[0]
    with pytest.raises(wgpu.GPUError):
        validate(device, kernel.wgsl.replace("0u", "0.5", 1))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_module_wgsl_validates(device, seed):
    module = random_module(seed)
    verify_module(module)
    for kernel in compile_module(module):
        validate(device, kernel.wgsl, kernel.entry_point)
