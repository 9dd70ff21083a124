"""The target profile: the device limits lowering, `kernel-verify` and the WGSL
backend all read (a shared contract, below every layer that uses it).

The wgpu runtime compiles for its device's own limits
(`TargetProfile.from_limits(device.limits)`: 1024 invocations per workgroup on
lavapipe and NVIDIA GPUs). The defaults here form the *portable* profile
(`PORTABLE_PROFILE`): the WebGPU default device limits for workgroups, which
every WebGPU device meets (`[256, 256, 64]`, 256 invocations, 16 KiB of
workgroup storage; upstream's wgpu profile), and the storage-buffer count that
the runtime requests from the adapter (32 on lavapipe and common desktop
drivers). `vyre-opt` and `vyre-compile` (offline artifacts) use it unless pass
options say otherwise; `vyre_xdsl.compile(..., portable=True)` uses it at run
time too, to check that a module would run on any device.

```python
from vyre_xdsl.target_profile import TargetProfile
profile = TargetProfile(subgroup_size=8, max_storage_buffers=16)
```
"""

from __future__ import annotations

from abc import ABC
from dataclasses import dataclass

from xdsl.passes import ModulePass


@dataclass(frozen=True)
class TargetProfile:
    """Device limits and the facts the workgroup-size heuristic needs."""

    max_workgroup_size: tuple[int, int, int] = (256, 256, 64)
    max_invocations: int = 256
    max_storage_buffers: int = 32
    max_workgroup_storage_bytes: int = 16384
    #: the device's minimum subgroup size; 0 when unknown (the heuristic then uses 32)
    subgroup_size: int = 0
    #: about how many workgroups the device runs at once: `vyre-coarsen-reductions`
    #: leaves at least this many (its `min-workgroups`). WebGPU reports no count of
    #: compute units; 1024 fills a GPU of the H200's size (132 SMs x 8 workgroups
    #: of 256), and the wgpu runtime gives a CPU adapter 4 per CPU thread
    resident_workgroups: int = 1024
    #: the device runs subgroup ops (WebGPU's "subgroups" feature): passes may
    #: emit them (`vyre-coarsen-reductions` scans on subgroup shuffles)
    subgroups: bool = False

    @classmethod
    def from_limits(
        cls,
        limits: dict[str, int],
        subgroup_size: int = 0,
        resident_workgroups: int = 1024,
        subgroups: bool = False,
    ) -> TargetProfile:
        """A profile from a wgpu device's `limits` mapping (hyphenated keys)."""
        default = cls()
        return cls(
            max_workgroup_size=(
                limits.get("max-compute-workgroup-size-x", default.max_workgroup_size[0]),
                limits.get("max-compute-workgroup-size-y", default.max_workgroup_size[1]),
                limits.get("max-compute-workgroup-size-z", default.max_workgroup_size[2]),
            ),
            max_invocations=limits.get(
                "max-compute-invocations-per-workgroup", default.max_invocations
            ),
            max_storage_buffers=limits.get(
                "max-storage-buffers-per-shader-stage", default.max_storage_buffers
            ),
            max_workgroup_storage_bytes=limits.get(
                "max-compute-workgroup-storage-size", default.max_workgroup_storage_bytes
            ),
            subgroup_size=subgroup_size,
            resident_workgroups=resident_workgroups,
            subgroups=subgroups,
        )


DEFAULT_PROFILE = TargetProfile()
#: the WebGPU default limits every device meets (the profile's defaults)
PORTABLE_PROFILE = DEFAULT_PROFILE


@dataclass(frozen=True)
class ProfilePass(ModulePass, ABC):
    """A pass whose options are a target profile (`vyre-lower`, `kernel-verify`):
    `-p 'vyre-lower{max-invocations=1024 subgroup-size=32}'`."""

    subgroup_size: int = 0
    max_workgroup_size_x: int = 256
    max_workgroup_size_y: int = 256
    max_workgroup_size_z: int = 64
    max_invocations: int = 256
    max_storage_buffers: int = 32
    max_workgroup_storage: int = 16384

    def profile(self) -> TargetProfile:
        return TargetProfile(
            max_workgroup_size=(
                self.max_workgroup_size_x,
                self.max_workgroup_size_y,
                self.max_workgroup_size_z,
            ),
            max_invocations=self.max_invocations,
            max_storage_buffers=self.max_storage_buffers,
            max_workgroup_storage_bytes=self.max_workgroup_storage,
            subgroup_size=self.subgroup_size,
        )
