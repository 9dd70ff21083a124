"""A stable surface for out-of-tree passes: every name docs/writing-a-pass.md
lists as public imports; a removed name keeps a shim that warns; and `vyre-opt`
survives a plugin whose pass is named like a built-in one, through the real
`xdsl.universe` entry-point path (a throwaway package with its own dist-info
directory on PYTHONPATH, run by the installed `vyre-opt`)."""

from __future__ import annotations

import importlib
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

import vyre_xdsl

from ..support import ROOT

VYRE_OPT = pathlib.Path(sys.executable).with_name("vyre-opt")

PROGRAM = """vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4]
  vyre.buffer @a binding 1 write_only : ui32[4]
  vyre.buffer @c binding 2 read_write : ui32[4]
  vyre.buffer @d binding 3 write_only : ui32[4]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %eight = vyre.const 8 : ui32
  %m = vyre.mul %v, %eight : ui32
  vyre.store @a[%i] = %m : ui32
  %old = vyre.atomic add @c[%i], %v : ui32
  %old2 = vyre.atomic add @d[%i], %v : ui32
}
"""


# ---------------------------------------------------------------- the documented API


def documented_names() -> list[tuple[str, str]]:
    """(module, name) of every row of the public API table in writing-a-pass.md."""
    text = (ROOT / "docs" / "writing-a-pass.md").read_text()
    if "## The public API" not in text:
        return []
    section = text.split("## The public API", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([\w.]+)` \| (.+?) \|", section, re.MULTILINE)
    return [(module, name) for module, names in rows for name in re.findall(r"`(\w+)`", names)]


def test_the_public_api_table_is_there_and_lists_the_analysis_module():
    modules = {module for module, _ in documented_names()}
    assert "vyre_xdsl.analysis" in modules and "xdsl.passes" in modules


@pytest.mark.parametrize("module, name", documented_names())
def test_every_documented_name_imports(module, name):
    assert hasattr(importlib.import_module(module), name)


def test_every_analysis_export_is_documented():
    import vyre_xdsl.analysis as analysis

    listed = {name for module, name in documented_names() if module == "vyre_xdsl.analysis"}
    assert set(analysis.__all__) <= listed, set(analysis.__all__) - listed


# ---------------------------------------------------------------- deprecated names


def test_abi_buffer_accesses_is_a_shim_that_warns():
    from vyre_xdsl import abi

    program = next(iter(vyre_xdsl.parse(PROGRAM).ops))
    with pytest.warns(DeprecationWarning, match="buffers_read_and_written"):
        reads, writes = abi.buffer_accesses(program)
    # the rule the removed function documented: loads read, stores write, an
    # atomic writes and also reads unless its buffer is write_only
    assert reads == {"x", "c"} and writes == {"a", "c", "d"}


# ---------------------------------------------------------------- a colliding plugin


PLUGIN_UNIVERSE = '''
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.passes import ModulePass
from xdsl.universe import Universe


@dataclass(frozen=True)
class MarkPass(ModulePass):
    """Marks every top-level op, so that a test sees this pass ran."""

    name = "vyre-strength-reduce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.ops:
            inner.attributes["research_plugin_ran"] = UnitAttr()


@dataclass(frozen=True)
class ExtraPass(MarkPass):
    name = "research-extra"


UNIVERSE = Universe(
    all_passes={"vyre-strength-reduce": lambda: MarkPass, "research-extra": lambda: ExtraPass}
)
'''


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> pathlib.Path:
    """A directory holding the package `vyre_research_passes` and its dist-info
    with an `xdsl.universe` entry point, as pip would install it."""
    root = tmp_path_factory.mktemp("plugin")
    package = root / "vyre_research_passes"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "universe.py").write_text(textwrap.dedent(PLUGIN_UNIVERSE))
    info = root / "vyre_research_passes-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: vyre-research-passes\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(
        "[xdsl.universe]\nvyre_research_passes = vyre_research_passes.universe:UNIVERSE\n"
    )
    (root / "in.mlir").write_text(PROGRAM)
    return root


def vyre_opt(plugin_path: pathlib.Path, *args: str, prefer: str | None = None):
    env = {k: v for k, v in os.environ.items() if k not in ("VYRE_PREFER_PLUGINS", "VYRE_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(plugin_path), env.get("PYTHONPATH")]))
    if prefer is not None:
        env["VYRE_PREFER_PLUGINS"] = prefer
    return subprocess.run(
        [str(VYRE_OPT), str(plugin_path / "in.mlir"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_colliding_plugin_pass_is_warned_about_and_the_built_in_kept(plugin_path):
    result = vyre_opt(plugin_path, "-p", "vyre-strength-reduce")
    assert result.returncode == 0, result.stderr
    assert (
        "vyre-opt: warning: plugin 'vyre_research_passes' defines pass 'vyre-strength-reduce', "
        "which 'vyre_xdsl' defines too; using the one of 'vyre_xdsl' "
        "(set VYRE_PREFER_PLUGINS=1 to use the plugin's)"
    ) in result.stderr
    # the built-in ran: x * 8 became a shift by 3
    assert "vyre.shl" in result.stdout and "research_plugin_ran" not in result.stdout


def test_the_plugin_s_other_passes_work(plugin_path):
    result = vyre_opt(plugin_path, "-p", "research-extra,vyre-strength-reduce")
    assert result.returncode == 0, result.stderr
    assert "research_plugin_ran" in result.stdout and "vyre.shl" in result.stdout


def test_the_user_may_prefer_the_plugin_s_pass(plugin_path):
    result = vyre_opt(plugin_path, "-p", "vyre-strength-reduce", prefer="1")
    assert result.returncode == 0, result.stderr
    assert "using the one of 'vyre_research_passes'" in result.stderr
    assert "research_plugin_ran" in result.stdout and "vyre.shl" not in result.stdout
