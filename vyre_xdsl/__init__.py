"""vyre_xdsl: a GPU compute compiler on xDSL.

```python
import vyre_xdsl
module = vyre_xdsl.parse(text)
outputs = vyre_xdsl.run(module, inputs={...}, backend="reference", fuse=True)
exe = vyre_xdsl.compile(module, backend="wgpu", fuse=True)   # compile once
outputs = exe.run({...})                                       # run many times
```
"""

from vyre_xdsl.api import Executable, compile, parse, run

__all__ = ["Executable", "compile", "parse", "run"]
