"""GPU time per kernel, from timestamp queries (`Executable.run(..., profile=True)`).

```python
exe = vyre_xdsl.compile(text, backend="wgpu")
exe.run(inputs, profile=True)
print(exe.last_profile)                 # one line per kernel, then the total
exe.last_profile.kernels[0].seconds
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vyre_xdsl.diagnostics import VyreError


class ProfilingUnsupportedError(VyreError, RuntimeError):
    """The adapter (or backend) cannot time kernels: no `timestamp-query` feature."""


@dataclass(frozen=True)
class KernelTime:
    """GPU time of one kernel of a run."""

    name: str  # the program (or fused group) the kernel runs
    seconds: float


@dataclass(frozen=True)
class RunProfile:
    """GPU time of each kernel of one run, in dispatch order. Each kernel is
    timed in its own compute pass (begin/end timestamps), so the profiled run
    has one pass per kernel where an unprofiled run shares one."""

    kernels: tuple[KernelTime, ...]
    adapter: str

    @property
    def total_seconds(self) -> float:
        return sum(k.seconds for k in self.kernels)

    def __str__(self) -> str:
        width = max([len(k.name) for k in self.kernels] + [5])
        lines = [f"{k.name:<{width}}  {k.seconds * 1e3:10.4f} ms" for k in self.kernels]
        lines.append(
            f"{'total':<{width}}  {self.total_seconds * 1e3:10.4f} ms  (GPU time, {self.adapter})"
        )
        return "\n".join(lines)


def run_profile(names: Sequence[str], kernel_ns: Sequence[float], adapter: str) -> RunProfile:
    return RunProfile(tuple(KernelTime(n, ns * 1e-9) for n, ns in zip(names, kernel_ns)), adapter)
