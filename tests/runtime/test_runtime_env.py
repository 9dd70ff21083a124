"""The wgpu runtime fixes a missing XDG_RUNTIME_DIR before it probes adapters, so users
never see the Vulkan loader's `XDG_RUNTIME_DIR is invalid or not set` lines."""

import os
import subprocess
import sys

from ..support import ROOT

SCRIPT = """
import os, numpy as np, vyre_xdsl
text = open(os.path.join({root!r}, "examples", "axpy.mlir")).read()
x = np.arange(1024, dtype=np.float32)
out = vyre_xdsl.run(text, inputs={{"x": x, "y": np.ones(1024, np.float32)}}, backend="wgpu")
print("ok", bool(np.array_equal(out["y"], 2 * x + 1)), os.environ.get("XDG_RUNTIME_DIR", "")[:200])
"""


def _run(env):
    return subprocess.run(
        [sys.executable, "-c", SCRIPT.format(root=str(ROOT))],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_unset_runtime_dir_is_replaced_silently():
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    result = _run(env)
    assert result.returncode == 0, result.stderr
    assert "XDG_RUNTIME_DIR" not in result.stderr
    ok, equal, folder = result.stdout.split()
    assert (ok, equal) == ("ok", "True")
    assert os.path.basename(folder).startswith("vyre-xdg-")
    assert not os.path.exists(folder), "the private folder is removed at exit"


def test_a_usable_runtime_dir_is_kept(tmp_path):
    folder = tmp_path / "xdg"
    folder.mkdir(mode=0o700)
    result = _run({**os.environ, "XDG_RUNTIME_DIR": str(folder)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", "True", str(folder)]
