"""The wgpu device the WGSL tests run their kernels on."""

import pytest
import wgpu

#: the optional features the runtime requests when the adapter offers them
RUNTIME_FEATURES = ("subgroup", "shader-f16", "shader-f64", "shader-int64")


@pytest.fixture(scope="module")
def device(request) -> wgpu.GPUDevice:
    """A device of the high-performance adapter (lavapipe here) with its largest
    storage-buffer limit per shader stage, one per test module.

    A module that sets `DEVICE_FEATURES = True` gets the optional features the
    runtime requests too (kernels with subgroup ops need them); any other gets a
    plain device, which refuses WGSL that enables a feature it was not given."""
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    limit = adapter.limits["max-storage-buffers-per-shader-stage"]
    features = getattr(request.module, "DEVICE_FEATURES", False)
    return adapter.request_device_sync(
        required_limits={"max-storage-buffers-per-shader-stage": limit},
        required_features=[f for f in RUNTIME_FEATURES if features and f in adapter.features],
    )
