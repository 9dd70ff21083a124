"""The persistent compile cache (`vyre_xdsl.runtime.disk_cache`): hits across
processes, corrupt entries ignored and rewritten, `VYRE_CACHE_DIR=off`, the
size bound, the key, and several processes writing at once."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.program_text import canonical_text
from vyre_xdsl.runtime import disk_cache
from vyre_xdsl.runtime.disk_cache import DiskCache, checked_payload

from ..support import ROOT

#: a chain of three programs that `vyre-fuse` turns into one: y = (x * 2 + 1) * 3
CHAIN = """
vyre.program @scale workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[256]
  vyre.buffer @a binding 1 write_only : f32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %c = vyre.const 2.0 : f32
  %r = vyre.mul %v, %c : f32
  vyre.store @a[%i] = %r : f32
}
vyre.program @shift workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 0 read_only : f32[256]
  vyre.buffer @b binding 1 write_only : f32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @a[%i] : f32
  %c = vyre.const 1.0 : f32
  %r = vyre.add %v, %c : f32
  vyre.store @b[%i] = %r : f32
}
vyre.program @triple workgroup_size [64, 1, 1] {
  vyre.buffer @b binding 0 read_only : f32[256]
  vyre.buffer @y binding 1 write_only : f32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @b[%i] : f32
  %c = vyre.const 3.0 : f32
  %r = vyre.mul %v, %c : f32
  vyre.store @y[%i] = %r : f32
}
"""

X = np.linspace(-4, 4, 256, dtype=np.float32)
WANT = (X * np.float32(2) + np.float32(1)) * np.float32(3)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("VYRE_CACHE_DIR", str(directory))
    monkeypatch.delenv("VYRE_CACHE_MAX_BYTES", raising=False)
    monkeypatch.delenv("VYRE_DUMP_KDESC", raising=False)
    for name in disk_cache.STATS:
        monkeypatch.setitem(disk_cache.STATS, name, 0)
    return directory


def entries(directory) -> list[str]:
    return sorted(glob.glob(os.path.join(str(directory), "v*", "*" + disk_cache.SUFFIX)))


def need_adapter() -> None:
    from vyre_xdsl.runtime import adapter_available

    if not adapter_available():
        pytest.fail("no wgpu adapter: install mesa-vulkan-drivers (lavapipe)")


# ---------------------------------------------------------------- across processes

COMPILE_AND_RUN = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import vyre_xdsl
    from vyre_xdsl.runtime import disk_cache

    text = open(sys.argv[1]).read()
    exe = vyre_xdsl.compile(text, backend=sys.argv[2], fuse=True)
    x = np.linspace(-4, 4, 256, dtype=np.float32)
    y = exe.run({"x": x})["y"]
    print(json.dumps({"stats": disk_cache.STATS, "y": y.tolist()}))
    """
)


def run_in_new_process(tmp_path, cache, backend: str) -> dict:
    source = tmp_path / "chain.mlir"
    source.write_text(CHAIN)
    env = dict(os.environ, VYRE_CACHE_DIR=str(cache))
    done = subprocess.run(
        [sys.executable, "-c", COMPILE_AND_RUN, str(source), backend],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("backend", ["wgpu", "reference"])
def test_a_second_process_hits_the_entry_the_first_wrote(tmp_path, cache_dir, backend):
    if backend == "wgpu":
        need_adapter()
    first = run_in_new_process(tmp_path, cache_dir, backend)
    assert first["stats"]["misses"] == 1 and first["stats"]["writes"] == 1
    assert len(entries(cache_dir)) == 1
    second = run_in_new_process(tmp_path, cache_dir, backend)
    assert second["stats"]["hits"] == 1 and second["stats"]["writes"] == 0, second
    np.testing.assert_allclose(second["y"], WANT, rtol=1e-6)
    np.testing.assert_allclose(first["y"], WANT, rtol=1e-6)


def test_an_entry_gives_back_the_kernels_and_signature_it_was_made_from(cache_dir):
    need_adapter()
    cold = vyre_xdsl.compile(CHAIN, backend="wgpu", fuse=True)
    warm = vyre_xdsl.compile(CHAIN, backend="wgpu", fuse=True)
    assert disk_cache.STATS["hits"] == 1
    assert warm._kernels == cold._kernels and len(warm._kernels) == 1
    assert warm.signature == cold.signature
    # parsed on first use, from the canonical text the digest was computed from
    assert canonical_text(warm.module) == canonical_text(cold.module)
    np.testing.assert_allclose(warm.run({"x": X})["y"], WANT, rtol=1e-6)


def test_every_example_round_trips_through_the_entry_format():
    """Kernels and signatures of all the examples come back equal from their JSON."""
    from vyre_xdsl.abi import signature
    from vyre_xdsl.backends.wgsl import compile_module
    from vyre_xdsl.diagnostics import VyreError

    checked = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir"))):
        try:
            module = vyre_xdsl.parse(open(path).read(), path)
            kernels = tuple(compile_module(module))
            sig = signature(module)
        except VyreError:
            continue  # an example of an error
        artifact = disk_cache.Artifact(sig, str(module), kernels, "d" * 64)
        back = disk_cache.decode_artifact(disk_cache.encode_artifact(artifact))
        assert back == artifact, path
        checked += 1
    assert checked >= 5


# ---------------------------------------------------------------- corrupt entries


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "header"])
def test_a_corrupt_entry_is_ignored_and_rewritten(cache_dir, damage):
    vyre_xdsl.compile(CHAIN, backend="reference", fuse=True)
    (path,) = entries(cache_dir)
    good = open(path, "rb").read()
    if damage == "truncate":
        bad = good[: len(good) // 2]
    elif damage == "flip":  # one byte of the module text: the digest no longer matches
        at = good.index(b"vyre.mul")
        bad = good[:at] + b"vyre.add" + good[at + 8 :]
    elif damage == "empty":
        bad = b""
    else:
        bad = good.replace(b"vyre-cache 1", b"vyre-cache 9", 1)
    with open(path, "wb") as file:
        file.write(bad)
    exe = vyre_xdsl.compile(CHAIN, backend="reference", fuse=True)
    assert disk_cache.STATS["corrupt"] == 1 and disk_cache.STATS["hits"] == 0
    np.testing.assert_allclose(exe.run({"x": X})["y"], WANT, rtol=1e-6)
    assert open(path, "rb").read() == good  # rewritten by the compile
    vyre_xdsl.compile(CHAIN, backend="reference", fuse=True)
    assert disk_cache.STATS["hits"] == 1


def test_a_well_formed_entry_of_the_wrong_shape_is_not_trusted(cache_dir):
    vyre_xdsl.compile(CHAIN, backend="reference")
    (path,) = entries(cache_dir)
    payload = b'{"signature": "nonsense"}'
    store = disk_cache.default_cache()
    store.put(os.path.basename(path)[: -len(disk_cache.SUFFIX)], payload)
    exe = vyre_xdsl.compile(CHAIN, backend="reference")
    assert disk_cache.STATS["corrupt"] == 1
    np.testing.assert_allclose(exe.run({"x": X})["y"], WANT, rtol=1e-6)


def test_checked_payload_refuses_what_does_not_match_its_digest():
    store_bytes = disk_cache.HEADER + b"0" * 64 + b"\npayload"
    assert checked_payload(store_bytes) is None
    import blake3

    good = disk_cache.HEADER + blake3.blake3(b"payload").hexdigest().encode() + b"\npayload"
    assert checked_payload(good) == b"payload"
    assert checked_payload(good[:-1]) is None


# ---------------------------------------------------------------- where, and off


def test_off_disables_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VYRE_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    vyre_xdsl.compile(CHAIN, backend="reference", fuse=True)
    vyre_xdsl.run(CHAIN, {"x": X}, backend="reference")
    assert vyre_xdsl.disk_cache_info() is None
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()


def test_the_directory_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("VYRE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert disk_cache.cache_directory() == str(tmp_path / "xdg" / "vyre_xdsl")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert disk_cache.cache_directory() == str(tmp_path / "home" / ".cache" / "vyre_xdsl")
    monkeypatch.setenv("VYRE_CACHE_DIR", str(tmp_path / "mine"))
    assert disk_cache.cache_directory() == str(tmp_path / "mine")
    monkeypatch.setenv("VYRE_CACHE_DIR", "OFF")
    assert disk_cache.cache_directory() is None


def test_clear_cache_disk_removes_the_entries(cache_dir):
    vyre_xdsl.compile(CHAIN, backend="reference")
    vyre_xdsl.compile(CHAIN, backend="reference", fuse=True)
    info = vyre_xdsl.disk_cache_info()
    assert info.entries == 2 and info.bytes > 0 and info.directory == str(cache_dir)
    vyre_xdsl.clear_cache()
    assert vyre_xdsl.disk_cache_info().entries == 2
    vyre_xdsl.clear_cache(disk=True)
    assert vyre_xdsl.disk_cache_info().entries == 0 and entries(cache_dir) == []


def test_an_unwritable_directory_makes_every_lookup_a_miss(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("VYRE_CACHE_DIR", str(blocker))
    exe = vyre_xdsl.compile(CHAIN, backend="reference")
    np.testing.assert_allclose(exe.run({"x": X})["y"], WANT, rtol=1e-6)


# ---------------------------------------------------------------- the size bound


def test_the_size_bound_evicts_the_least_recently_used_entries(tmp_path):
    store = DiskCache(str(tmp_path), max_bytes=3 * 1100)
    for age, key in enumerate(["a", "b", "c"]):
        assert store.put(key, bytes(1000))
        os.utime(store.path(key), (1000 + age, 1000 + age))  # a oldest, c newest
    assert store.get("a") == bytes(1000)  # a read makes a the newest
    store.put("d", bytes(1000))
    assert store.get("b") is None  # b was used longest ago
    assert [store.get(k) is not None for k in "acd"] == [True, True, True]
    assert store.info().entries == 3 and store.info().bytes <= store.max_bytes


def test_the_default_bound_is_256_mib_and_the_environment_changes_it(monkeypatch, tmp_path):
    monkeypatch.setenv("VYRE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("VYRE_CACHE_MAX_BYTES", raising=False)
    assert disk_cache.default_cache().max_bytes == 256 * 1024 * 1024
    monkeypatch.setenv("VYRE_CACHE_MAX_BYTES", "4096")
    assert disk_cache.default_cache().max_bytes == 4096


def test_compiles_past_the_bound_keep_the_directory_under_it(cache_dir, monkeypatch):
    monkeypatch.setenv("VYRE_CACHE_MAX_BYTES", "5000")
    for k in range(6):
        vyre_xdsl.compile(CHAIN.replace("3.0", f"{k + 4}.0"), backend="reference")
    info = vyre_xdsl.disk_cache_info()
    assert 0 < info.entries < 6 and info.bytes <= 5000


# ---------------------------------------------------------------- the key


def test_the_key_changes_with_every_option_and_the_build(monkeypatch):
    base = dict(source="text:00", backend="wgpu", options={"fuse": False, "profile": None})
    key = disk_cache.artifact_key(**base)
    changed = [
        dict(base, source="text:01"),
        dict(base, backend="reference"),
        dict(base, options={"fuse": True, "profile": None}),
        dict(base, options={"fuse": "force", "profile": None}),
        dict(base, options={"fuse": False, "profile": {"max_invocations": 256}}),
    ]
    keys = {disk_cache.artifact_key(**c) for c in changed}
    assert key not in keys and len(keys) == len(changed)
    monkeypatch.setattr(disk_cache.metadata, "version", lambda name: "99.0")
    disk_cache.build_digest.cache_clear()
    try:
        assert disk_cache.artifact_key(**base) != key
    finally:
        monkeypatch.undo()
        disk_cache.build_digest.cache_clear()
    assert disk_cache.artifact_key(**base) == key


def test_fuse_and_portable_compiles_are_separate_entries(cache_dir):
    need_adapter()
    for fuse in (False, True, "force"):
        vyre_xdsl.compile(CHAIN, backend="wgpu", fuse=fuse)
    vyre_xdsl.compile(CHAIN, backend="wgpu", portable=True)
    vyre_xdsl.compile(CHAIN, backend="reference")
    assert len(entries(cache_dir)) == 5 and disk_cache.STATS["hits"] == 0
    unfused = vyre_xdsl.compile(CHAIN, backend="wgpu")
    fused = vyre_xdsl.compile(CHAIN, backend="wgpu", fuse=True)
    assert disk_cache.STATS["hits"] == 2
    assert len(unfused._kernels) == 3 and len(fused._kernels) == 1


def test_run_of_a_module_uses_its_canonical_digest(cache_dir):
    """A `ModuleOp` is keyed by its canonical digest: value names do not matter."""
    renamed = CHAIN.replace("%v", "%value")
    vyre_xdsl.run(vyre_xdsl.parse(CHAIN), {"x": X}, backend="reference", fuse=True)
    vyre_xdsl.clear_cache()
    out = vyre_xdsl.run(vyre_xdsl.parse(renamed), {"x": X}, backend="reference", fuse=True)
    assert disk_cache.STATS["hits"] == 1
    np.testing.assert_allclose(out["y"], WANT, rtol=1e-6)


def test_run_of_a_text_the_cache_holds_parses_nothing(cache_dir, monkeypatch):
    """`compile(text)` and `run(text)` share the entry of the text; a hit does
    not parse, and `run()`'s in-memory cache still finds the module by digest."""
    from vyre_xdsl import api

    vyre_xdsl.compile(CHAIN, backend="reference", fuse=True)
    vyre_xdsl.clear_cache()

    def refuse(*args, **kwargs):
        raise AssertionError("parsed on a hit")

    monkeypatch.setattr(api, "parse", refuse)
    exe = api.cached_executable(CHAIN, "reference", True)
    assert disk_cache.STATS["hits"] == 1 and vyre_xdsl.cache_info().misses == 1
    monkeypatch.undo()
    np.testing.assert_allclose(exe.run({"x": X})["y"], WANT, rtol=1e-6)
    again = api.cached_executable(vyre_xdsl.parse(CHAIN.replace("%v", "%w")), "reference", True)
    assert again is exe and vyre_xdsl.cache_info().hits == 1


# ---------------------------------------------------------------- several processes

WRITER = textwrap.dedent(
    """
    import sys
    from vyre_xdsl.runtime.disk_cache import DiskCache

    def payload(key):
        return (key * 5000).encode()

    store = DiskCache(sys.argv[1], max_bytes=1 << 30)
    me = int(sys.argv[2])
    bad = 0
    for step in range(60):
        shared = f"shared{step % 3}"
        store.put(shared, payload(shared))
        own = f"own{me}-{step % 5}"
        store.put(own, payload(own))
        for key in (shared, own, f"own{(me + 1) % 4}-{step % 5}"):
            got = store.get(key)
            if got is not None and got != payload(key):
                bad += 1
    from vyre_xdsl.runtime.disk_cache import STATS
    print(bad, STATS["corrupt"])
    """
)


def test_several_processes_write_the_same_and_different_keys_at_once(tmp_path):
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(me)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for me in range(4)
    ]
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        assert out.split() == ["0", "0"]  # no wrong payload, no corrupt entry seen
    store = DiskCache(str(tmp_path))
    for key in [f"shared{k}" for k in range(3)] + [
        f"own{m}-{k}" for m in range(4) for k in range(5)
    ]:
        assert store.get(key) == (key * 5000).encode()
    leftovers = [p for p in os.listdir(store.entries_dir) if p.startswith(disk_cache.TEMP_PREFIX)]
    assert leftovers == []


# ---------------------------------------------------------------- the command line


def test_vyre_opt_cache_info_and_clear(cache_dir, capsys):
    from vyre_xdsl.tools.vyre_opt import VyreOptMain, run_tool

    vyre_xdsl.compile(CHAIN, backend="reference")
    assert run_tool(VyreOptMain, ["--cache-info"]) == 0
    out = capsys.readouterr().out
    assert f"directory: {cache_dir}" in out and "entries: 1" in out, out
    assert run_tool(VyreOptMain, ["--clear-cache"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert entries(cache_dir) == []


def test_vyre_opt_cache_info_when_off(monkeypatch, capsys):
    from vyre_xdsl.tools.vyre_opt import VyreOptMain, run_tool

    monkeypatch.setenv("VYRE_CACHE_DIR", "off")
    assert run_tool(VyreOptMain, ["--cache-info"]) == 0
    assert "off (VYRE_CACHE_DIR=off)" in capsys.readouterr().out


# ---------------------------------------------------------------- locations

#: a 2-D workgroup over a runtime-sized buffer without a grid: refused when it
#: runs (the derived grid cannot cover the input's length), at the program
UNCOVERED = """
// line 2
vyre.program @k workgroup_size [8, 8, 1] {
  vyre.buffer @x binding 0 read_write : f32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @x[%i] = %v : f32
}
"""


def test_an_error_a_run_raises_from_a_stored_module_names_the_source(cache_dir):
    """A module a hit loads is parsed from the stored text; the errors its run
    raises still name the input's file:line:col (they named
    `<compile cache>:2:1`, a file that does not exist), and the file of the
    input that hit: the same text parsed from another file names that file."""
    x = np.ones(1000, np.float32)
    for hit in (0, 1):
        exe = vyre_xdsl.compile(UNCOVERED, backend="reference")
        assert disk_cache.STATS["hits"] == hit
        with pytest.raises(vyre_xdsl.diagnostics.VyreDiagnostic, match=r"^<input>:3:1: @k: "):
            exe.run({"x": x})
    for name in ("a.mlir", "a.mlir", "b.mlir"):
        exe = vyre_xdsl.compile(vyre_xdsl.parse(UNCOVERED, name), backend="reference")
        with pytest.raises(vyre_xdsl.diagnostics.VyreDiagnostic, match=rf"^{name}:3:1: @k: "):
            exe.run({"x": x})
    assert disk_cache.STATS["hits"] == 3


def test_stored_locations_that_do_not_fit_are_not_applied():
    module = vyre_xdsl.parse(UNCOVERED, "a.mlir")
    record = disk_cache.op_locations(module, "a.mlir")
    assert record["files"] == [None] and record["count"] == len(list(module.walk()))
    other = vyre_xdsl.parse(
        UNCOVERED.replace("  %v", "  %w = vyre.load @x[%i] : f32\n  %v"), "c.mlir"
    )
    assert not disk_cache.restore_locations(other, record, "b.mlir")
    assert not disk_cache.restore_locations(other, {"count": "nonsense"}, "b.mlir")
    assert str(list(other.walk())[1].location) == 'loc("c.mlir":3:1)'
    same = vyre_xdsl.parse(UNCOVERED, "<compile cache>")
    assert disk_cache.restore_locations(same, record, "b.mlir")
    assert str(list(same.walk())[1].location) == 'loc("b.mlir":3:1)'
