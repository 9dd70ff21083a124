"""Megakernel artifacts (SPEC section 7, docs/megakernel.md): the program graph of
a module, the planner that picks fusion groups and stages, the neutral artifact,
and the target-module bundle that `vyre-compile` writes and `vyre-run` executes.

```python
from vyre_xdsl.megakernel import TargetModuleBundle, compile_module, run_bundle

envelope = compile_module(module)             # plan, fuse, lower, print WGSL
data = envelope.bundle_bytes()                # the .vkb file
bundle = TargetModuleBundle.from_bytes(data)  # every check of the seed
outputs = run_bundle(bundle, {"x": x})        # one submit, stage by stage
```
"""

from vyre_xdsl.megakernel.artifact import Artifact, ArtifactError, build_artifact
from vyre_xdsl.megakernel.bundle import BundleError, TargetModuleBundle, TargetModuleImage
from vyre_xdsl.megakernel.compile import (
    TargetCompileError,
    compile_module,
    compile_selected_modules,
)
from vyre_xdsl.megakernel.envelope import ArtifactEnvelope, TargetPayload
from vyre_xdsl.megakernel.graph import ProgramGraph
from vyre_xdsl.megakernel.planner import Plan, plan
from vyre_xdsl.megakernel.run import run_bundle

__all__ = [
    "Artifact",
    "ArtifactEnvelope",
    "ArtifactError",
    "BundleError",
    "Plan",
    "ProgramGraph",
    "TargetCompileError",
    "TargetModuleBundle",
    "TargetModuleImage",
    "TargetPayload",
    "build_artifact",
    "compile_module",
    "compile_selected_modules",
    "plan",
    "run_bundle",
]
