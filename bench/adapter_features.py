"""Print each wgpu adapter's name and whether it offers the features vyre_xdsl can use:
subgroups (`vyre.subgroup_*` ops), shader-f16, shader-f64 (float64) and timestamp-query
(`vyre-run --time`, `profile=True`), plus the subgroup sizes it reports.

    python bench/adapter_features.py

It only asks the adapters (no kernel runs); record the outcome in docs/runtime.md.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")

import wgpu  # noqa: E402

FEATURES = ("subgroup", "subgroup-barrier", "shader-f16", "shader-f64", "timestamp-query")
SUBGROUP_LIMITS = ("min-subgroup-size", "max-subgroup-size")


def report(adapter) -> list[str]:
    info = adapter.info
    lines = [
        f"{info.get('device', '?')} ({info.get('adapter_type', '?')}, {info.get('backend_type', '?')})"
    ]
    for feature in FEATURES:
        lines.append(f"  {feature:<18} {'yes' if feature in adapter.features else 'no'}")
    for limit in SUBGROUP_LIMITS:
        if limit in adapter.limits:
            lines.append(f"  {limit:<18} {adapter.limits[limit]}")
    return lines


def main() -> int:
    adapters = wgpu.gpu.enumerate_adapters_sync()
    if not adapters:
        print("no wgpu adapter found")
        return 1
    for adapter in adapters:
        print("\n".join(report(adapter)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
