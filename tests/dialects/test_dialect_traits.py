"""The public traits of the dialect ops (`vyre_xdsl.dialects.traits`), and that no
module outside `vyre_xdsl/dialects/` reaches for a dialect's private base class.

The expected op sets are written out by hand from the op reference (docs/language.md,
docs/kernel-dialect.md), not derived from the classes under test.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from xdsl.ir import Dialect

import vyre_xdsl
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects import traits
from vyre_xdsl.dialects import vyre as v

TABLE_MNEMONICS = """
add sub mul div mod min max bit_and bit_or bit_xor shl shr abs_diff saturating_add
saturating_sub saturating_mul mul_high rotate_left rotate_right eq ne lt le gt ge and or
not neg bit_not popcount clz ctz reverse_bits abs sign sqrt inverse_sqrt floor ceil round
trunc exp exp2 log log2 sin cos tan tanh reciprocal acos asin atan sinh cosh unpack4_low
unpack4_high unpack8_low unpack8_high is_nan is_inf is_finite
""".split()

KERNEL_LOADS = {"kernel.load_global", "kernel.load_constant", "kernel.load_uniform"}
KERNEL_LOADS |= {"kernel.load_shared"}
KERNEL_STORES = {"kernel.store_global", "kernel.store_shared"}
AXIS_IDS = ("invocation_id", "workgroup_id", "local_id", "num_workgroups")

EXPECTED: dict[type, set[str]] = {
    traits.LoadLike: {"vyre.load", *KERNEL_LOADS},
    traits.StoreLike: {"vyre.store", *KERNEL_STORES},
    traits.ElementAccess: {"vyre.load", "vyre.store", *KERNEL_LOADS, *KERNEL_STORES},
    traits.SlotAddressed: {
        *KERNEL_LOADS,
        *KERNEL_STORES,
        "kernel.atomic",
        "kernel.buffer_length",
        "kernel.repetition",
    },
    traits.IdLike: {f"{dialect}.{name}" for dialect in ("vyre", "kernel") for name in AXIS_IDS},
    traits.TableLike: {f"vyre.{name}" for name in TABLE_MNEMONICS},
}


def _all_ops(*dialects: Dialect) -> list:
    return [op for dialect in dialects for op in dialect.operations]


@pytest.mark.parametrize("trait", list(EXPECTED), ids=lambda t: t.__name__)
def test_trait_is_carried_by_exactly_the_expected_ops(trait):
    carried = {op.name for op in _all_ops(v.Vyre, k.Kernel) if op.has_trait(trait)}
    assert carried == EXPECTED[trait]


def test_every_trait_is_checked_and_reexported():
    public = {getattr(traits, name) for name in traits.__all__}
    assert public == set(EXPECTED)
    for trait in public:
        assert getattr(v, trait.__name__) is trait
        assert getattr(k, trait.__name__) is trait


def test_trait_accessors_answer_on_built_ops():
    """What each trait's docstring promises, on ops built here."""
    index = v.InvocationIdOp("y")
    assert index.has_trait(traits.IdLike) and index.axis_index == 1
    load = k.LoadGlobalOp(3, index, "f32")
    assert load.has_trait(traits.LoadLike) and load.slot_number == 3
    assert load.index is index.result and load.binding() is None  # no descriptor around it
    store = v.StoreOp("out", index, load)
    assert store.has_trait(traits.StoreLike) and not store.has_trait(traits.LoadLike)
    assert store.buffer_name == "out" and store.value is load.result
    assert v.MulOp.has_trait(traits.TableLike) and v.MulOp.semantics().name == "mul"
    assert not v.AtomicOp.has_trait(traits.ElementAccess)


# ------------------------------------------------------------ private classes stay inside

PACKAGE = Path(vyre_xdsl.__file__).parent
DIALECTS = PACKAGE / "dialects"


def _private_dialect_classes() -> set[str]:
    names = set()
    for path in DIALECTS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.name.startswith("_"):
                names.add(node.name)
    return names


def test_the_private_class_scan_sees_the_dialect_bases():
    # the scan below is only as good as this list
    assert {"_LoadOp", "_StoreOp", "_MemoryOp", "_IdOp", "_TableOp"} <= _private_dialect_classes()


def test_no_module_outside_dialects_names_a_private_dialect_class():
    private = _private_dialect_classes()
    # `k._LoadOp`, `vyre._TableOp`, `from ...kernel import _LoadOp`, or any other spelling
    pattern = re.compile(r"\b(" + "|".join(sorted(private)) + r")\b")
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if DIALECTS in path.parents:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert offenders == []


# ------------------------------------------------------------ the documented examples run

DOCS = PACKAGE.parent / "docs"


@pytest.mark.parametrize("page", ["dialect.md", "kernel-dialect.md"])
def test_traits_example_in_the_dialect_docs_runs(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    section = text.split("Traits for passes\n", 1)[1]
    example = re.search(r"```python\n(.*?)```", section, re.S)
    assert example is not None
    exec(compile(example.group(1), f"docs/{page}", "exec"), {})
