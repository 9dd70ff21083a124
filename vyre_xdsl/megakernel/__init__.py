"""Megakernel artifacts (SPEC section 7): the program graph of a module, the
planner that picks fusion groups and stages, the neutral artifact, and the
target-module bundle that `vyre-compile` writes and `vyre-run` executes.

```python
from vyre_xdsl.megakernel import compile_module, run_bundle, TargetModuleBundle

envelope = compile_module(module)            # plan, fuse, lower, print WGSL
data = envelope.bundle_bytes()               # the .vkb file
bundle = TargetModuleBundle.from_bytes(data) # every check of the seed
outputs = run_bundle(bundle, {"x": x})       # one submit, stage by stage
```
"""
