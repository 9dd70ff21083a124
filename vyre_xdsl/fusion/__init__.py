"""Shared-buffer fusion of vyre programs (SPEC section 4, docs/fusion.md).

```python
from vyre_xdsl.fusion import fuse_programs
fused = fuse_programs([producer, consumer], intermediates={"tmp"})
```

`vyre_xdsl.passes.vyre_fuse.VyreFusePass` (`-p vyre-fuse`) applies it to all
programs of a module; the megakernel planner calls it per fusion group.
"""

from vyre_xdsl.fusion.fuse import fuse_programs, fused_name
from vyre_xdsl.fusion.merge import join_access

__all__ = ["fuse_programs", "fused_name", "join_access"]
