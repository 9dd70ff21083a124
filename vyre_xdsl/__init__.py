"""vyre_xdsl: a GPU compute compiler on xDSL.

```python
import vyre_xdsl
module = vyre_xdsl.parse(text)
outputs = vyre_xdsl.run(module, inputs={...}, backend="reference", fuse=True)
```
"""

from vyre_xdsl.api import parse, run

__all__ = ["parse", "run"]
