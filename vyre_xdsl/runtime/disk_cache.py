"""The persistent compile cache: what `vyre_xdsl.compile` and `run` produce after
parsing, fusing and lowering, kept on disk so that the next process skips that work.

```python
from vyre_xdsl.runtime.disk_cache import default_cache

store = default_cache()  # None when VYRE_CACHE_DIR=off
if store is not None:
    print(store.info())  # DiskCacheInfo(directory=..., entries=..., bytes=..., max_bytes=...)
```

Where: `$VYRE_CACHE_DIR`, else `$XDG_CACHE_HOME/vyre_xdsl`, else
`~/.cache/vyre_xdsl`; `VYRE_CACHE_DIR=off` turns the cache off. Entries live in
a subdirectory named after the entry format (`v1/`), one file per entry.

An entry is a header line (`vyre-cache 1`), the BLAKE3 of the payload and the
payload (a JSON artifact: the run signature, the compiled module's text, and
for the wgpu backend every kernel's WGSL and descriptor). A read checks the
digest: an entry that is corrupt, truncated or of another format is removed
and counts as a miss, so it is rewritten by the compile that follows. Writes
go to a temporary file in the same directory and are moved into place with
`os.replace`, so a reader never sees half an entry, and several processes may
read and write at once (the last writer of a key wins; both wrote the same
thing). A read marks the entry used (its modification time); after each
write, the least recently used entries are removed until the directory holds
at most `max_bytes` (`DEFAULT_MAX_BYTES`, 256 MiB, or `$VYRE_CACHE_MAX_BYTES`).
The cache is best effort: a directory that cannot be written makes every
lookup a miss, never an error.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from importlib import metadata

import blake3

from vyre_xdsl.abi import BufferSignature, RunSignature
from vyre_xdsl.backends.wgsl.kernel_module import WgslBinding, WgslKernel
from vyre_xdsl.program_text import source_digest

CACHE_ENV = "VYRE_CACHE_DIR"
MAX_BYTES_ENV = "VYRE_CACHE_MAX_BYTES"
#: the size the cache directory is kept under (least recently used entries go first)
DEFAULT_MAX_BYTES = 256 << 20
#: the entry format; a change makes every older entry a miss
FORMAT = 1
HEADER = f"vyre-cache {FORMAT}\n".encode()
SUFFIX = ".entry"
TEMP_PREFIX = ".tmp-"
#: temporary files older than this (seconds) are left over from a killed writer
STALE_TEMP_SECONDS = 3600

#: this process's lookups: hits, misses, and entries found corrupt (and removed)
STATS = {"hits": 0, "misses": 0, "corrupt": 0, "writes": 0}


@dataclass(frozen=True)
class DiskCacheInfo:
    directory: str
    entries: int
    bytes: int
    max_bytes: int


@dataclass(frozen=True)
class Artifact:
    """What a run needs from a compile: the run signature, the compiled
    module's text (fused where asked), the kernels (wgpu backend only), and
    the IR digest of the module that was compiled (`program_text.ir_digest`)."""

    signature: RunSignature
    module_text: str
    kernels: tuple[WgslKernel, ...] | None
    digest: str | None = None
    #: the source locations of the module's ops (`op_locations`), so that an
    #: error a run raises from the stored module names the user's file:line:col
    locations: dict | None = None


def cache_directory() -> str | None:
    """The cache directory the environment chooses; None when it is off."""
    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return os.path.abspath(os.path.expanduser(chosen))
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(
        os.path.expanduser("~"), ".cache"
    )
    return os.path.join(os.path.abspath(base), "vyre_xdsl")


def max_bytes_from_environment() -> int:
    """`$VYRE_CACHE_MAX_BYTES` when it is a whole number, else `DEFAULT_MAX_BYTES`."""
    value = os.environ.get(MAX_BYTES_ENV, "").strip()
    return int(value) if value.isdigit() else DEFAULT_MAX_BYTES


def default_cache() -> DiskCache | None:
    """The cache the environment chooses (read on every call); None when off."""
    directory = cache_directory()
    if directory is None:
        return None
    return DiskCache(directory, max_bytes_from_environment())


class DiskCache:
    """Entries (bytes) by key (a hex string) in one directory."""

    def __init__(self, directory: str, max_bytes: int = DEFAULT_MAX_BYTES):
        self.directory = directory
        self.entries_dir = os.path.join(directory, f"v{FORMAT}")
        self.max_bytes = max_bytes

    def path(self, key: str) -> str:
        return os.path.join(self.entries_dir, key + SUFFIX)

    def get(self, key: str) -> bytes | None:
        """The payload stored under `key`, or None (missing, or corrupt: then removed)."""
        path = self.path(key)
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError:
            STATS["misses"] += 1
            return None
        payload = checked_payload(data)
        if payload is None:
            STATS["corrupt"] += 1
            STATS["misses"] += 1
            with contextlib.suppress(OSError):
                os.remove(path)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # the entry was used now (LRU)
        STATS["hits"] += 1
        return payload

    def put(self, key: str, payload: bytes) -> bool:
        """Store `payload` under `key` atomically, then keep the directory under
        `max_bytes`. False when the directory cannot be written."""
        data = HEADER + blake3.blake3(payload).hexdigest().encode() + b"\n" + payload
        try:
            os.makedirs(self.entries_dir, exist_ok=True)
            handle, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=self.entries_dir)
        except OSError:
            return False
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            os.replace(temp, self.path(key))
        except OSError:
            with contextlib.suppress(OSError):
                os.remove(temp)
            return False
        STATS["writes"] += 1
        self.evict()
        return True

    def evict(self) -> None:
        """Remove the least recently used entries until the rest fit in
        `max_bytes`, and temporary files a killed writer left behind."""
        now = time.time()
        entries = []
        for path, stat in self.files():
            if os.path.basename(path).startswith(TEMP_PREFIX):
                if now - stat.st_mtime > STALE_TEMP_SECONDS:
                    with contextlib.suppress(OSError):
                        os.remove(path)
                continue
            entries.append((stat.st_mtime, path, stat.st_size))
        total = sum(size for _, _, size in entries)
        for _, path, size in sorted(entries):
            if total <= self.max_bytes:
                return
            with contextlib.suppress(OSError):
                os.remove(path)
            total -= size

    def files(self) -> Iterator[tuple[str, os.stat_result]]:
        """(path, stat) of every file in the entry directory."""
        try:
            listing = list(os.scandir(self.entries_dir))
        except OSError:
            return
        for item in listing:
            with contextlib.suppress(OSError):
                if item.is_file(follow_symlinks=False):
                    yield item.path, item.stat(follow_symlinks=False)

    def info(self) -> DiskCacheInfo:
        sizes = [
            stat.st_size
            for path, stat in self.files()
            if not os.path.basename(path).startswith(TEMP_PREFIX)
        ]
        return DiskCacheInfo(self.directory, len(sizes), sum(sizes), self.max_bytes)

    def clear(self) -> int:
        """Remove every entry; the number removed."""
        removed = 0
        for path, _ in self.files():
            with contextlib.suppress(OSError):
                os.remove(path)
                removed += not os.path.basename(path).startswith(TEMP_PREFIX)
        return removed


def checked_payload(data: bytes) -> bytes | None:
    """The payload of an entry's bytes, or None when the header or the digest
    does not match (a corrupt, truncated or foreign file)."""
    if not data.startswith(HEADER):
        return None
    digest_end = len(HEADER) + 64
    if len(data) <= digest_end or data[digest_end : digest_end + 1] != b"\n":
        return None
    payload = data[digest_end + 1 :]
    if blake3.blake3(payload).hexdigest().encode() != data[len(HEADER) : digest_end]:
        return None
    return payload


# ============================================================================ keys


@functools.cache
def build_digest() -> str:
    """BLAKE3 of the package version, the versions of xDSL and wgpu, and every
    source file of the package: an edited checkout never reads entries an
    older one wrote."""
    digest = blake3.blake3()
    for package in ("vyre_xdsl", "xdsl", "wgpu"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            digest.update(f"{package}={metadata.version(package)}\0".encode())
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for directory, subdirectories, files in os.walk(root):
        subdirectories.sort()
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            digest.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as file:
                digest.update(file.read())
    return digest.hexdigest()


def source_key(text: str | bytes | None, digest: str | None) -> str:
    """What names a compile's input in its key (`artifact_key`'s `source`): IR
    text by the BLAKE3 of its bytes as given (a hit needs no parse), else a
    module by its IR digest."""
    if text is not None:
        return "text:" + source_digest(text)
    return f"module:{digest}"


def artifact_key(source: str, backend: str, options: Mapping[str, object]) -> str:
    """The key of a compile: `source` names the input (the BLAKE3 of its text,
    or the module's IR digest), `options` the pipeline's options and the
    target profile; the package build is always part of it."""
    described = json.dumps(
        {
            "format": FORMAT,
            "build": build_digest(),
            "source": source,
            "backend": backend,
            "options": options,
        },
        sort_keys=True,
        default=repr,
    )
    return blake3.blake3(described.encode()).hexdigest()


# ============================================================================ artifacts


def encode_artifact(artifact: Artifact) -> bytes:
    kernels = None
    if artifact.kernels is not None:
        kernels = [asdict_kernel(kernel) for kernel in artifact.kernels]
    return json.dumps(
        {
            "signature": [asdict(buffer) for buffer in artifact.signature.buffers],
            "module": artifact.module_text,
            "kernels": kernels,
            "digest": artifact.digest,
            "locations": artifact.locations,
        },
        separators=(",", ":"),
    ).encode()


def decode_artifact(payload: bytes) -> Artifact | None:
    """The artifact of a payload; None when it does not have the expected form."""
    try:
        fields = json.loads(payload)
        signature = RunSignature(tuple(BufferSignature(**b) for b in fields["signature"]))
        kernels = fields["kernels"]
        if kernels is not None:
            kernels = tuple(kernel_from_dict(kernel) for kernel in kernels)
        module_text = fields["module"]
        digest = fields["digest"]
        locations = fields.get("locations")  # absent in entries stored before it existed
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    if not isinstance(module_text, str) or not isinstance(digest, str):
        return None
    if not isinstance(locations, dict):
        locations = None
    return Artifact(signature, module_text, kernels, digest, locations)


def op_locations(module, source_name: str) -> dict:
    """The `file:line:col` of every op of `module` that has one, by its position
    in `module.walk()`: `{"count": ops, "files": [...], "ops": [[position, file,
    line, col], ...]}`, where a file is an index into `files` and `None` in
    `files` stands for `source_name` (the input's own name, which may differ
    on the next hit: the same text run from another file)."""
    from xdsl.dialects.builtin import FileLineColLoc

    files: list[str | None] = []
    located = []
    count = 0
    for position, op in enumerate(module.walk()):
        count += 1
        loc = op.location
        if not isinstance(loc, FileLineColLoc):
            continue
        name = loc.filename.data
        name = None if name == source_name else name
        if name not in files:
            files.append(name)
        located.append([position, files.index(name), loc.line.data, loc.column.data])
    return {"count": count, "files": files, "ops": located}


def restore_locations(module, locations: dict | None, source_name: str) -> bool:
    """Give the ops of `module` (parsed from a stored module text) the locations
    `op_locations` recorded for the module it was printed from, and the others
    (made by a pass) none, as they had; False, changing nothing, when the record
    does not fit (another number of ops, a malformed record)."""
    from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, UnknownLoc

    if not locations:
        return False
    try:
        ops = list(module.walk())
        if locations["count"] != len(ops):
            return False
        files = [source_name if f is None else str(f) for f in locations["files"]]
        restored = [
            (ops[position], FileLineColLoc(StringAttr(files[file]), IntAttr(line), IntAttr(col)))
            for position, file, line, col in locations["ops"]
        ]
    except (KeyError, IndexError, TypeError, ValueError):
        return False
    for op in ops:
        op.location = UnknownLoc()
    for op, loc in restored:
        op.location = loc
    return True


def asdict_kernel(kernel: WgslKernel) -> dict:
    import attrs

    return attrs.asdict(kernel)


def kernel_from_dict(fields: dict) -> WgslKernel:
    bindings = tuple(WgslBinding(**binding) for binding in fields["bindings"])
    rest = {name: as_tuples(value) for name, value in fields.items() if name != "bindings"}
    return WgslKernel(bindings=bindings, **rest)


def as_tuples(value: object) -> object:
    """JSON lists back to the tuples they were."""
    if isinstance(value, list):
        return tuple(as_tuples(item) for item in value)
    return value


def load_artifact(store: DiskCache, key: str) -> Artifact | None:
    payload = store.get(key)
    if payload is None:
        return None
    artifact = decode_artifact(payload)
    if artifact is None:  # the digest matched, but not the form: written by a bug
        STATS.update(hits=STATS["hits"] - 1, misses=STATS["misses"] + 1)
        STATS["corrupt"] += 1
        with contextlib.suppress(OSError):
            os.remove(store.path(key))
    return artifact


def store_artifact(store: DiskCache, key: str, artifact: Artifact) -> bool:
    return store.put(key, encode_artifact(artifact))
