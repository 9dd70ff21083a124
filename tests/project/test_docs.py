"""The language reference (docs/language.md) covers every registered vyre op with the
types the semantics table gives it, its Python example runs, and docs/ speak to users
(no issue numbers)."""

import os
import re

import numpy as np

from vyre_xdsl.dialects.vyre import Vyre
from vyre_xdsl.semantics import ELEMENT_TYPE_NAMES, OPS

from ..support import ROOT

LANGUAGE = open(os.path.join(ROOT, "docs", "language.md"), encoding="utf-8").read()
TYPE_NAMES = set(ELEMENT_TYPE_NAMES)


def test_every_registered_vyre_op_is_documented():
    missing = sorted(op.name for op in Vyre.operations if f"`{op.name}`" not in LANGUAGE)
    assert missing == [], f"add these ops to docs/language.md: {missing}"


def _table_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in LANGUAGE.splitlines():
        match = re.match(r"\| `vyre\.(\w+)` \|(.*)", line)
        if match:
            rows[match[1]] = [cell.strip() for cell in match[2].split("|")]
    return rows


def test_documented_types_match_the_semantics_table():
    rows = _table_rows()
    wrong = {}
    for name, semantics in OPS.items():
        if name not in rows:
            continue  # documented in prose (checked above)
        cells = rows[name]
        documented = (
            set(cells[0].split()) & TYPE_NAMES if set(cells[0].split()) & TYPE_NAMES else None
        )
        if documented is None:  # the predicate/logic tables have no type column
            continue
        # vector types follow a rule stated once, in the section on vectors
        scalar_types = {t for t in semantics.types if not t.startswith("vector<")}
        if documented != scalar_types:
            wrong[name] = (sorted(documented), sorted(scalar_types))
    assert wrong == {}, f"docs/language.md types differ from vyre_xdsl/semantics.py: {wrong}"


def test_every_table_op_has_a_row_or_a_heading():
    undocumented = [
        name for name in OPS if name not in _table_rows() and f"vyre.{name}" not in LANGUAGE
    ]
    assert undocumented == []


def test_builder_example_runs():
    block = re.search(r"```python\n(from vyre_xdsl.builder.*?)```", LANGUAGE, re.S)
    assert block is not None
    scope: dict = {}
    exec(
        compile(
            block.group(1).replace("print(module)", "text = str(module)"), "language.md", "exec"
        ),
        scope,
    )
    assert "vyre.program @axpy workgroup_size [64, 1, 1]" in scope["text"]
    assert "%s = vyre.add" in scope["text"]
    np.testing.assert_array_equal(scope["out"]["y"], np.full(1024, 2.0, np.float32))


def test_docs_speak_to_users():
    """No issue numbers, and no documents outside the repository (the contract the
    project was built from is not shipped; docs/language.md is the reference)."""
    offenders = []
    pages = [
        os.path.join("docs", n)
        for n in sorted(os.listdir(os.path.join(ROOT, "docs")))
        if n.endswith(".md")
    ]
    for page in [*pages, "README.md"]:
        text = open(os.path.join(ROOT, page), encoding="utf-8").read()
        for pattern in (r"\bissues?\s*#?\d+", r"\bSPEC\b", r"\.\./shared"):
            offenders += [
                f"{page}: {m.group(0)}"
                for m in re.finditer(pattern, text, re.I if "issue" in pattern else 0)
            ]
    assert offenders == []


def test_readme_links_the_language_reference_and_the_tour():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert "docs/language.md" in readme and "examples/ops_tour.mlir" in readme


def test_every_atomic_kind_is_documented():
    from vyre_xdsl.semantics import ATOMIC_OPS

    section = LANGUAGE[LANGUAGE.index("### `vyre.atomic`") :]
    section = section[: section.index("\n## ")]
    assert [kind for kind in ATOMIC_OPS if f"`{kind}`" not in section] == []
