"""Check that passes keep a module's run interface and its results.

The soundness rule every pass must keep, ours, xDSL's or a plugin's: after the
pass the module verifies, its run interface (`abi.signature`, decided by the
buffer declarations) is the same, and the reference backend gives the same
outputs — or traps again when it trapped before. `vyre-fuse` merges programs,
so its result runs with the interface of the unfused module, as
`run(..., fuse=True)` does, and it may refuse a module with a diagnostic.

```python
from vyre_xdsl.testing.soundness import check_pipelines, pipelines

check_pipelines(module, inputs)                        # every default pipeline
check_pipelines(module, inputs, [("my-pass",), ("canonicalize", "my-pass")])
```

The default pipelines are xDSL's `canonicalize`, `cse` and `dce` alone and in
sequence, every `vyre-*` pass registered in the xDSL universe (plugins
included; not `vyre-lower`, which leaves the vyre dialect) alone and in
sequence, and the stock passes followed by the vyre passes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.universe import Universe

from vyre_xdsl.abi import RunSignature, signature
from vyre_xdsl.context import vyre_context
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.interpreter import VyreTrap, execute
from vyre_xdsl.semantics import is_bf16

#: xDSL's passes that act on generic IR
STOCK = ("canonicalize", "cse", "dce")
#: registered passes whose result is not vyre IR, so it cannot run on the reference
NOT_ON_VYRE_IR = ("vyre-lower", "vyre-to-kernel", "vyre-to-wgsl")
#: passes that may refuse a module with a diagnostic (that is not a soundness failure)
MAY_REFUSE = ("vyre-fuse",)
#: passes after which the interface of the unfused module applies (they merge programs)
MERGES_PROGRAMS = ("vyre-fuse",)


@cache
def vyre_passes() -> tuple[str, ...]:
    """Every `vyre-*` pass registered in the xDSL universe, except those that
    lower to kernel descriptors (`vyre-lower` and the pipelines that end in it)."""
    names = Universe.get_multiverse().all_passes
    return tuple(sorted(n for n in names if n.startswith("vyre-") and n not in NOT_ON_VYRE_IR))


@cache
def pipelines() -> tuple[tuple[str, ...], ...]:
    """The default pipelines: stock passes alone and in sequence, vyre passes alone
    and in sequence, and stock then vyre."""
    vyre = vyre_passes()
    found = [(p,) for p in STOCK] + [STOCK]
    found += [(p,) for p in vyre] + [vyre, STOCK + vyre]
    return tuple(dict.fromkeys(found))


def outcome(
    module: ModuleOp, sig: RunSignature, inputs: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray] | str:
    """The output arrays of a reference run under `sig`, or "trap"."""
    try:
        final = execute(module, sig.bind(inputs), sig)
    except VyreTrap:
        return "trap"
    return {name: final[name] for name in sig.outputs}


def same_values(a: np.ndarray, b: np.ndarray, multiset: bool = False) -> bool:
    """Equal arrays: floats (f16, bf16, f32, f64, and the lanes of float vectors)
    bit for bit, any two NaNs equal (found on float64 values, whatever numpy's and
    ml_dtypes' versions do with NaN); `multiset` ignores order."""
    if multiset:
        a, b = np.sort(a), np.sort(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.names:  # vector records: lane by lane
        return all(same_values(a[lane], b[lane]) for lane in a.dtype.names)
    if a.dtype.kind == "f" or is_bf16(a.dtype):
        unsigned = f"u{a.dtype.itemsize}"
        nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
        return bool(np.all(nan | (a.view(unsigned) == b.view(unsigned))))
    return bool(np.array_equal(a, b))


def check_pipelines(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    pipelines_to_run: Iterable[tuple[str, ...]] | None = None,
    multisets: frozenset[str] = frozenset(),
    label: str = "module",
) -> int:
    """Run each pipeline on a copy of the verified `module`; raise AssertionError on
    the first change of interface or results. Returns how many pipeline results
    were compared (refusals are skipped). Pipelines sharing a prefix share its work."""
    sig = signature(module)
    expected = outcome(module, sig, inputs)
    results: dict[tuple[str, ...], ModuleOp | None] = {(): module}
    compared = 0
    for pipeline in pipelines() if pipelines_to_run is None else pipelines_to_run:
        after = _through(results, tuple(pipeline))
        if after is None:
            continue
        where = f"{label}: after -p {','.join(pipeline)}"
        after.verify()
        if not set(pipeline) & set(MERGES_PROGRAMS):
            assert signature(after) == sig, f"{where}: the run interface changed"
        got = outcome(after, sig, inputs)
        if expected == "trap" or got == "trap":
            assert got == expected, (
                f"{where}: {'the trap is gone' if expected == 'trap' else 'a new trap'}"
            )
        else:
            for name in sig.outputs:
                assert same_values(expected[name], got[name], name in multisets), (
                    f"{where}: output {name} differs"
                )
        compared += 1
    return compared


def _through(results: dict, pipeline: tuple[str, ...]) -> ModuleOp | None:
    """The module after `pipeline`, built on the longest prefix already computed
    (None when a pass in it refused the module)."""
    if pipeline in results:
        return results[pipeline]
    before = _through(results, pipeline[:-1])
    if before is None:
        results[pipeline] = None
        return None
    after = before.clone()
    results[pipeline] = after if _apply(after, pipeline[-1]) else None
    return results[pipeline]


def _apply(module: ModuleOp, name: str) -> bool:
    """Apply the registered pass `name` in place; False when it refused the module."""
    pass_class = Universe.get_multiverse().all_passes[name]()
    try:
        pass_class().apply(vyre_context(), module)
    except VyreDiagnostic:
        if name not in MAY_REFUSE:
            raise
        return False
    return True


def check_generated(seeds: Iterable[int], options=None) -> int:
    """`check_pipelines` on the generated module of each seed (see
    `vyre_xdsl.testing.generators.random_module`); returns the comparisons made."""
    from vyre_xdsl.testing.generators import GeneratorOptions, random_module

    options = GeneratorOptions() if options is None else options
    compared = 0
    for seed in seeds:
        case = random_module(seed, options)
        compared += check_pipelines(
            case.module,
            case.inputs,
            multisets=case.multisets,
            label=f"generated module of seed {seed}",
        )
    return compared


def check_texts(cases: Iterable[tuple[str, str, Mapping[str, np.ndarray]]]) -> int:
    """`check_pipelines` on each (name, IR text, inputs); returns the comparisons made."""
    from vyre_xdsl.api import parse

    return sum(check_pipelines(parse(text), inputs, label=name) for name, text, inputs in cases)
