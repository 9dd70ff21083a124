"""The WGSL backend is an emitter: no module of it imports the analyses, the
lowering or fusion (every choice it prints by is recorded in kernel IR by a pass)."""

from __future__ import annotations

import ast

from ..support import ROOT

FORBIDDEN = ("vyre_xdsl.analysis", "vyre_xdsl.lowering", "vyre_xdsl.fusion")


def imported_modules(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_backend_imports_no_analysis_lowering_or_fusion():
    files = sorted((ROOT / "vyre_xdsl" / "backends").rglob("*.py"))
    assert files, "no backend sources found"
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in files
        for name in sorted(imported_modules(path.read_text()))
        if name.startswith(FORBIDDEN)
    ]
    assert offenders == []


def test_the_check_sees_a_forbidden_import():
    assert "vyre_xdsl.lowering.lower" in imported_modules(
        "def f():\n    from vyre_xdsl.lowering.lower import lower_program\n"
    )
