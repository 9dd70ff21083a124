"""The front end: everything a compile does to its input before a backend sees
it, once per compile, in one line that only calls down.

`accept` takes what `vyre_xdsl.compile`, `run` or `cached_executable` was
given and returns a `Source`:

- IR text stays exactly as given (the persistent compile cache keys it by its
  BLAKE3, `runtime.disk_cache.source_key`): it is parsed only when it is
  compiled, so a cache hit needs no parse;
- a module (or text that an override needs parsed) is loaded (`load`: parsed,
  standard MLIR converted by `convert-to-vyre` on a copy, then checked once by
  `diagnostics.check_module`: verified, naming `convert-to-vyre` when that
  pass made it, and runnable), the launch overrides are applied on a copy
  (`launch.with_workgroup_size`, `with_grids`: their values are checked
  against the limits the verifier checks) and printed once, for its IR digest
  (the key of every cache).

On a cache miss `prepare(source, fuse)` does the rest, in order: the text
loaded (or a module `accept` left unchecked checked), a copy of a module its
caller holds, the run signature (`abi.signature`) and memref shapes, and the
fused copy where asked: the named pipeline's fusion steps
(`VyreToKernelPass.fusion_steps`: the tree and scan levels fed only by module
inputs coarsened, then `vyre-fuse`, each verified after), so that the backend,
which runs the rest of the pipeline, sees what `vyre-to-kernel{fuse=true}`
would. It returns a `Prepared`:

```python
source = accept(text, workgroup_size=(128, 1, 1))
prepared = prepare(source, fuse=True)
prepared.module      # verified, runnable and fused: what the backend compiles
prepared.signature   # the run signature of the module as given
```

The front end stands below the runtime and the API: it uses the dialects, the
context, conversion, diagnostics, launch, abi, program_text and the passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from vyre_xdsl.abi import RunSignature, signature
from vyre_xdsl.context import parse_module
from vyre_xdsl.conversion import convert_module, is_standard, memref_shapes
from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError, check_module
from vyre_xdsl.launch import (
    checked_workgroup_size,
    grid_overrides,
    with_grids,
    with_workgroup_size,
)
from vyre_xdsl.program_text import canonical_text, ir_digest, text_digest
from vyre_xdsl.target_profile import TargetProfile

#: the pass that turns standard MLIR into vyre (named in errors about its output)
CONVERT_PASS = "convert-to-vyre"


class ModuleTypeError(VyreError, TypeError):
    """`run`/`compile` got something that is neither IR text nor a `ModuleOp`."""


def load(
    source: ModuleOp | str | bytes,
    name: str = "<input>",
    *,
    runnable: bool = True,
    verify: bool = True,
    own: bool = False,
) -> ModuleOp:
    """`source` as a checked vyre module: text parsed (a parse error is a
    located `VyreDiagnostic`; bytes must be UTF-8), standard MLIR converted
    (`convert-to-vyre`; a module on a copy unless `own`: the caller gives it
    away), then checked once (`diagnostics.check_module`: verified, and
    runnable when `runnable`; its `vyre.memref_shapes`, `memref_shapes`). `verify=False` leaves a module that needed no
    conversion unchecked (the caller checks it later)."""
    if isinstance(source, str | bytes):
        try:
            module = parse_module(source, name)
        except ParseError as error:
            raise VyreDiagnostic([(None, str(error))]) from None
        own = True
    else:
        module = source
    converted = is_standard(module)
    if converted:
        module = module if own else module.clone()
        convert_module(module)
    if verify or converted or module is not source:
        check_module(module, after_pass=CONVERT_PASS if converted else None, runnable=runnable)
        memref_shapes(module)  # checks the shapes a module given as vyre IR states
    return module


def parse(text: str | bytes, name: str = "<input>") -> ModuleOp:
    """Parse and verify vyre IR text (standard MLIR is converted); errors are
    located `VyreDiagnostic`s."""
    return load(text, name, runnable=False)


def fuse_module(module: ModuleOp, *, force: bool = False) -> ModuleOp:
    """A fused copy of `module` (the `vyre-fuse` pass, verified after); `module`
    is unchanged. `force`: fuse every program into one, even where the cost
    model says it loses."""
    from vyre_xdsl.passes.vyre_fuse import fused_copy

    return fused_copy(module, force=force)


def pipeline_fused_copy(
    module: ModuleOp, *, force: bool = False, profile: TargetProfile | None = None
) -> ModuleOp:
    """A copy of `module` after the named pipeline's fusion steps
    (`VyreToKernelPass.fusion_steps`: the levels fed only by module inputs
    coarsened, then `vyre-fuse`; each verified after, naming it): what
    `vyre-to-kernel{fuse=true}` runs before the steps a backend runs, for
    `profile` (the portable one by default). `module` is unchanged. `force`:
    every program fused into one, nothing coarsened first."""
    from vyre_xdsl.context import vyre_context
    from vyre_xdsl.passes import pipeline

    fused = module.clone()
    steps = pipeline.vyre_to_kernel(fuse=True, profile=profile).fusion_steps(force=force)
    pipeline.run_steps(vyre_context(), fused, steps)
    return fused


def module_digest(module: ModuleOp) -> str:
    """The module's IR digest (`vyre_xdsl.program_text.ir_digest`: BLAKE3 of
    its canonical text): equal for modules that differ only in value names,
    spacing or comments."""
    return ir_digest(module)


@dataclass(eq=False)
class Source:
    """One compile's input, accepted (`accept`): IR text exactly as given (parsed
    when it is prepared), or a module."""

    #: the IR text as given, or None (a module; text parsed for an override)
    text: str | bytes | None
    #: the module (None: `text`, not parsed yet)
    module: ModuleOp | None
    name: str = "<input>"
    #: `module` was verified and found runnable
    checked: bool = False
    #: `module` is a copy that no caller holds (else `prepare` compiles a copy)
    own: bool = False
    #: (canonical text, IR digest) of `module`, once printed
    printed: tuple[str, str] | None = None

    @property
    def digest(self) -> str | None:
        """The module's IR digest, when it was printed."""
        return None if self.printed is None else self.printed[1]


@dataclass(frozen=True, eq=False)
class Prepared:
    """A module ready for a backend: what `prepare` returns."""

    #: the checked, runnable module as given, unfused (launch overrides start from it)
    source: ModuleOp
    #: what the backend compiles: `source`, or its fused copy (verified)
    module: ModuleOp
    #: the run signature of `source`
    signature: RunSignature
    #: converted standard MLIR: each memref argument's shape by buffer name ({} else)
    shapes: Mapping[str, tuple[int, ...]]
    #: the IR digest of `source`, when it was printed (or asked for)
    digest: str | None = None
    #: (canonical text, IR digest) of `module`, when it was printed already
    printed: tuple[str, str] | None = None


def accept(
    module_or_text: object,
    *,
    workgroup_size=None,
    grid=None,
    check: bool = True,
    copy: bool = False,
    name: str = "<input>",
) -> Source:
    """What a compile of `module_or_text` starts from (a `Source`). Text stays
    as given unless an override asks to parse it. A module of standard MLIR is
    converted on a copy and checked; another module is checked now, or with
    `check=False` when it is prepared (`run()`'s cache: a hit costs only its
    digest); `copy`: `prepare` compiles a copy of it (its caller may change it).
    `workgroup_size=(X, Y, Z)` replaces every program's workgroup size, `grid`
    gives programs explicit grids (`launch.grid_overrides`), each on a copy;
    an invalid value is a `ValueError`. Anything but text or a `ModuleOp` is a
    `ModuleTypeError`. A module is printed once, for its digest."""
    if not isinstance(module_or_text, str | bytes | ModuleOp):
        raise ModuleTypeError(
            f"expected vyre IR text or a ModuleOp, not {type(module_or_text).__name__}"
        )
    text = module_or_text if isinstance(module_or_text, str | bytes) else None
    module, checked, own, printed = None, False, False, None
    if text is None or workgroup_size is not None or grid is not None:
        size = None if workgroup_size is None else checked_workgroup_size(workgroup_size)
        module = load(module_or_text, name, verify=check)
        checked = check or module is not module_or_text
        own = module is not module_or_text or not copy or size is not None or grid is not None
        if size is not None:
            module = with_workgroup_size(module, size)
        if grid is not None:
            module = with_grids(module, grid_overrides(module, grid))
        canonical = canonical_text(module)
        printed, text = (canonical, text_digest(canonical)), None
    return Source(text, module, name, checked, own, printed)


def refuse_uncovered_static_grids(module: ModuleOp) -> None:
    """A program whose buffers all have static counts and whose derived grid
    cannot cover them (a 2-D or 3-D workgroup without a grid: `vyre_xdsl.dispatch`)
    is refused when it compiles, on every backend: lowering refuses it for a GPU,
    and the reference backend would refuse it only when it runs. A program with
    a runtime-sized buffer is checked when it runs, against its inputs' lengths."""
    from vyre_xdsl.dialects.vyre import programs
    from vyre_xdsl.dispatch import check_covering_grids

    static = [
        program
        for program in programs(module)
        if all(buffer.static_count is not None for buffer in program.buffers())
    ]
    check_covering_grids(static, {})


def prepare(
    source: Source,
    fuse: bool | str = False,
    *,
    digest: bool = False,
    profile: TargetProfile | None = None,
) -> Prepared:
    """Everything a compile does before its backend, once and in order: the
    module (text parsed, converted and checked: `load`), a module not checked
    yet checked (verified, runnable), a copy of a module that its caller holds
    (it may change it after the run), its digest where `digest` asks (a cache
    stores it), its run signature and memref shapes, and a fused copy
    (`vyre-fuse`, verified after) where `fuse` asks (`"force"`: every program
    into one), for the backend's target `profile`. `source` keeps the parsed
    module and the digest."""
    if not source.checked:  # text (parsed now), or a module not checked yet
        given = source.text if source.module is None else source.module
        source.module = load(given if given is not None else "", source.name)
        source.own = source.own or source.module is not given
        source.checked = True
    module = source.module if source.own else source.module.clone()
    sig = signature(module)
    shapes = memref_shapes(module)
    if digest and source.printed is None:
        canonical = canonical_text(module)
        source.printed = (canonical, text_digest(canonical))
    if not fuse:
        refuse_uncovered_static_grids(module)
        return Prepared(module, module, sig, shapes, source.digest, source.printed)
    fused = pipeline_fused_copy(module, force=fuse == "force", profile=profile)
    refuse_uncovered_static_grids(fused)
    printed = None
    if digest:
        canonical = canonical_text(fused)
        printed = (canonical, text_digest(canonical))
    return Prepared(module, fused, sig, shapes, source.digest, printed)
