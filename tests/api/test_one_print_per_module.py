"""One run prints, verifies and copies each module it holds at most once: the
unfused module and the fused one (where the run fuses) are each printed once (for their IR digest,
which the persistent compile cache then stores as the module's text), with the
compile cache on and off."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

import vyre_xdsl
from vyre_xdsl.runtime import adapter_available

from ..support import EXAMPLES

BACKENDS = ["reference"] + (["wgpu"] if adapter_available() else [])


@pytest.fixture
def calls(monkeypatch):
    """Counts, per module object, of print_op, verify and clone calls."""
    seen: dict[str, collections.Counter] = {
        "print": collections.Counter(),
        "verify": collections.Counter(),
        "clone": collections.Counter(),
    }
    print_op, verify, clone = Printer.print_op, ModuleOp.verify, ModuleOp.clone

    def counted_print(self, op, *args, **kwargs):
        if isinstance(op, ModuleOp):
            seen["print"][id(op)] += 1
        return print_op(self, op, *args, **kwargs)

    def counted_verify(self, *args, **kwargs):
        seen["verify"][id(self)] += 1
        return verify(self, *args, **kwargs)

    def counted_clone(self, *args, **kwargs):
        seen["clone"][id(self)] += 1
        return clone(self, *args, **kwargs)

    monkeypatch.setattr(Printer, "print_op", counted_print)
    monkeypatch.setattr(ModuleOp, "verify", counted_verify)
    monkeypatch.setattr(ModuleOp, "clone", counted_clone)
    return seen


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("cache", ["on", "off"])
@pytest.mark.parametrize("fuse", [True, False])
def test_each_module_is_printed_verified_and_copied_at_most_once(
    calls, backend, cache, fuse, tmp_path, monkeypatch
):
    monkeypatch.setenv("VYRE_CACHE_DIR", str(tmp_path) if cache == "on" else "off")
    vyre_xdsl.clear_cache()
    text = (EXAMPLES / "chain3.mlir").read_text()
    x = np.linspace(-1, 1, 4096, dtype=np.float32)
    out = vyre_xdsl.run(text, {"x": x}, fuse=fuse, backend=backend)
    assert out["out"].shape == (4096,)
    for what, counts in calls.items():
        if what == "clone" and not fuse:
            continue  # nothing to copy: the module parsed from the text is compiled
        assert counts, f"nothing was {what}ed: the counter is not wired"
        assert max(counts.values()) == 1, (what, dict(counts))
