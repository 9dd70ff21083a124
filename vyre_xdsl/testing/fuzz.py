"""A robustness fuzzer: hostile text and bundle bytes must never crash, hang,
forge a result, print WGSL that naga rejects or leave a partial output file.

It mutates IR text (the examples, the docs' whole modules, the hand-written
seeds of `vyre_xdsl.testing.fuzz_seeds`: standard MLIR with linalg, math and
3-D loops, explicit 2-D and 3-D grids, `vyre.repetition`, and random modules of
`vyre_xdsl.testing.generators`) and compiled target-module bundles, feeds every
mutant through the whole pipeline and classifies what happened:

| outcome | class |
| --- | --- |
| accepted (ran, trapped, or too large to run here: huge buffers, more than `MAX_RUN_ITERATIONS` loop iterations) | ok |
| refused with the project's own error (`VyreError` and its subclasses) | ok |
| any other Python exception (`KeyError`, `RecursionError`, ...) | `internal` |
| a case that runs past its time limit (5 s of CPU) | `hang` |
| a forged bundle that decodes and runs to another result than the reference | `forged` |
| printed WGSL that naga rejects | `naga` |
| an output file left behind by a command that failed | `partial` |
| a diagnostic about the text without a `file:line:col` | `unlocated` |

```python
from vyre_xdsl.testing.fuzz import Campaign
report = Campaign(seed=1234, text_cases=1000, bundle_cases=1000).run()
assert not report.failures, report.summary()
```

or from a shell (`VYRE_FUZZ_SEED` replays a run; see `--help`):

```
python -m vyre_xdsl.testing.fuzz --seed 1234 --text 1000 --bundles 1000
```

Text mutants go through `vyre_xdsl.parse` (standard MLIR converted) →
`vyre-fuse` → `vyre-lower` → WGSL → the reference interpreter (a quarter of
those with small buffers run 2 or 3 times: `run_repeat`) → `vyre-compile`'s
bundle and its own decoder,
in process, each under a per-case time limit; mutants that are not UTF-8 go
through `vyre-opt`'s driver in process; a sample also runs `vyre-opt` as a
subprocess, and a sample of the accepted ones runs on wgpu (where only an error
that is not the project's counts: a mutant may race, so results are not compared). Bundle
mutants are mutated bundles (of the examples, the seeds of `fuzz_seeds` and
random modules), half with the BLAKE3 digest
rebuilt (so that the checks behind it are reached) and half not; every bundle
`from_bytes` accepts runs on wgpu and on the reference interpreter in a worker
process (killed on a hang) and the two must agree. Every printed WGSL module is
validated by naga (wgpu's `create_shader_module`) in that worker.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import multiprocessing
import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field, replace

import blake3
import numpy as np

from vyre_xdsl.interpreter import IterationLimitError, iteration_limit

OK_CLASSES = ("accepted", "refused", "trapped", "large")
FAIL_CLASSES = ("internal", "hang", "forged", "naga", "partial", "unlocated")

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent.parent / "examples"
DOCS = EXAMPLES.parent / "docs"

#: host buffers larger than this (elements) are not run by the fuzzer (legal, just slow)
MAX_RUN_ELEMENTS = 1 << 20
#: the share of accepted text mutants also compiled into a bundle and decoded again
BUNDLE_SAMPLE = 0.35

# ============================================================================ mutations

INTERESTING_NUMBERS = (
    b"0",
    b"1",
    b"-1",
    b"2",
    b"3",
    b"31",
    b"32",
    b"33",
    b"63",
    b"64",
    b"255",
    b"256",
    b"1023",
    b"1024",
    b"1025",
    b"65535",
    b"65536",
    b"16777216",
    b"2147483647",
    b"2147483648",
    b"-2147483648",
    b"-2147483649",
    b"4294967295",
    b"4294967296",
    b"18446744073709551615",
    b"18446744073709551616",
    b"99999999999999999999999999999999",
    b"-99999999999999999999",
    b"1.5",
    b"-0.0",
    b"0.0",
    b"1e38",
    b"3.4028235e38",
    b"1e39",
    b"-1e39",
    b"1e-45",
    b"1e-40",
    b"1e308",
    b"1e400",
    b"0x7fffffff",
    b"0xffffffff",
    b"0x100000000",
    b"nan",
    b"inf",
    b"-inf",
)
WEIRD_NAMES = (
    '@"a b"',
    '@"main\\uffff"',
    '@"a\u2028b"',
    '@"a\u0085b"',
    '@"a\\rb"',
    '@"a\\nb"',
    '@"\u00e9"',
    '@""',
    '@"x"',
    "@__vyre_fuse_a1_acc",
    "@__vyre_fuse_a0_x",
    "@main",
    "@" + "n" * 300,
    '%"a b"',
    "%0",
    "%x",
    "%i",
    '@"*/ bad"',
    '@"// c"',
)
BAD_BYTES = (
    b"\xff",
    b"\xfe\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\x80",
    b"\xf4\x90\x80\x80",
    b"\x00",
    b"\xc0\xaf",
)
NESTING_DEPTHS = (1, 2, 3, 8, 50, 118, 122, 200, 400, 1500)

_TOKEN = re.compile(
    rb'@"[^"\n]*"|%"[^"\n]*"|"[^"\n]*"|[%@^#][A-Za-z0-9_$.\-]+|0x[0-9a-fA-F]+'
    rb"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_][A-Za-z0-9_.]*|\s+|."
)
_NUMBER = re.compile(rb"-?\d|0x")


def _tokens(data: bytes) -> list[bytes]:
    return [m.group(0) for m in _TOKEN.finditer(data)]


class TextMutator:
    """Random edits of IR text (bytes in, bytes out), each described in words."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.operators = [
            (self.delete_bytes, 3),
            (self.duplicate_bytes, 2),
            (self.swap_spans, 2),
            (self.delete_token, 4),
            (self.duplicate_token, 3),
            (self.swap_tokens, 3),
            (self.replace_number, 8),
            (self.rename, 5),
            (self.swap_words, 4),
            (self.insert_token, 2),
            (self.nest, 3),
            (self.unterminated_string, 2),
            (self.bad_bytes, 2),
            (self.duplicate_line, 3),
            (self.delete_line, 3),
            (self.move_line, 4),
        ]

    def mutate(self, data: bytes, edits: int | None = None) -> tuple[bytes, list[str]]:
        rng = self.rng
        steps: list[str] = []
        for _ in range(edits if edits is not None else rng.choice((1, 1, 1, 2, 2, 3))):
            operator = rng.choices([o for o, _ in self.operators], [w for _, w in self.operators])[
                0
            ]
            mutated = operator(data)
            if mutated is not None and mutated != data:
                data = mutated
                steps.append(operator.__name__)
        return data, steps

    # ------------------------------------------------------------------ bytes

    def _span(self, data: bytes) -> tuple[int, int]:
        start = self.rng.randrange(len(data) + 1)
        return start, min(len(data), start + self.rng.randint(1, 16))

    def delete_bytes(self, data: bytes) -> bytes:
        a, b = self._span(data)
        return data[:a] + data[b:]

    def duplicate_bytes(self, data: bytes) -> bytes:
        a, b = self._span(data)
        return data[:b] + data[a:b] + data[b:]

    def swap_spans(self, data: bytes) -> bytes:
        a, b = sorted(self._span(data)[0] for _ in range(2))
        n = self.rng.randint(1, 12)
        if b - a < n:
            return data
        return data[:a] + data[b : b + n] + data[a + n : b] + data[a : a + n] + data[b + n :]

    # ------------------------------------------------------------------ tokens

    def _significant(self, tokens: list[bytes]) -> list[int]:
        return [i for i, t in enumerate(tokens) if not t.isspace()]

    def delete_token(self, data: bytes) -> bytes | None:
        tokens = _tokens(data)
        idx = self._significant(tokens)
        if not idx:
            return None
        del tokens[self.rng.choice(idx)]
        return b"".join(tokens)

    def duplicate_token(self, data: bytes) -> bytes | None:
        tokens = _tokens(data)
        idx = self._significant(tokens)
        if not idx:
            return None
        i = self.rng.choice(idx)
        tokens.insert(i, tokens[i] + self.rng.choice((b" ", b"")))
        return b"".join(tokens)

    def swap_tokens(self, data: bytes) -> bytes | None:
        tokens = _tokens(data)
        idx = self._significant(tokens)
        if len(idx) < 2:
            return None
        i = self.rng.choice(idx)
        near = [j for j in idx if j != i and abs(j - i) < 12] or [j for j in idx if j != i]
        j = self.rng.choice(near)
        tokens[i], tokens[j] = tokens[j], tokens[i]
        return b"".join(tokens)

    def replace_number(self, data: bytes) -> bytes | None:
        tokens = _tokens(data)
        idx = [i for i, t in enumerate(tokens) if _NUMBER.match(t)]
        if not idx:
            return None
        i = self.rng.choice(idx)
        old = tokens[i]
        if self.rng.random() < 0.25 and old.lstrip(b"-").isdigit():
            tokens[i] = str(int(old) + self.rng.choice((-1, 1, 2**31, 2**32, -(2**32)))).encode()
        else:
            tokens[i] = self.rng.choice(INTERESTING_NUMBERS)
        return b"".join(tokens)

    def rename(self, data: bytes) -> bytes | None:
        tokens = _tokens(data)
        idx = [i for i, t in enumerate(tokens) if t[:1] in (b"%", b"@")]
        if not idx:
            return None
        i = self.rng.choice(idx)
        same = [tokens[j] for j in idx if tokens[j][:1] == tokens[i][:1]]
        if self.rng.random() < 0.5:
            new = self.rng.choice(same)
        else:
            new = self.rng.choice(WEIRD_NAMES).encode("utf-8")
            if new[:1] != tokens[i][:1] and self.rng.random() < 0.7:
                new = tokens[i][:1] + new[1:]
        if self.rng.random() < 0.5:  # every occurrence: a consistent rename
            old = tokens[i]
            tokens = [new if t == old else t for t in tokens]
        else:
            tokens[i] = new
        return b"".join(tokens)

    def swap_words(self, data: bytes) -> bytes | None:
        """Replace a keyword/op name/type by another word of the text."""
        tokens = _tokens(data)
        idx = [i for i, t in enumerate(tokens) if t[:1].isalpha() or t[:1] == b"_"]
        if len(idx) < 2:
            return None
        i = self.rng.choice(idx)
        tokens[i] = tokens[self.rng.choice(idx)]
        return b"".join(tokens)

    def insert_token(self, data: bytes) -> bytes | None:
        tokens = _tokens(data)
        idx = self._significant(tokens)
        if not idx:
            return None
        tokens.insert(
            self.rng.randrange(len(tokens) + 1), b" " + tokens[self.rng.choice(idx)] + b" "
        )
        return b"".join(tokens)

    # ------------------------------------------------------------------ lines

    def _lines(self, data: bytes) -> list[bytes]:
        return data.splitlines(keepends=True)

    def duplicate_line(self, data: bytes) -> bytes | None:
        lines = self._lines(data)
        if not lines:
            return None
        i = self.rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return b"".join(lines)

    def delete_line(self, data: bytes) -> bytes | None:
        lines = self._lines(data)
        if len(lines) < 2:
            return None
        del lines[self.rng.randrange(len(lines))]
        return b"".join(lines)

    def move_line(self, data: bytes) -> bytes | None:
        """Move an op line earlier (often: a use before its definition)."""
        lines = self._lines(data)
        if len(lines) < 3:
            return None
        i = self.rng.randrange(1, len(lines))
        j = self.rng.randrange(max(0, i - 8), i)
        line = lines.pop(i)
        lines.insert(j, line)
        return b"".join(lines)

    def nest(self, data: bytes) -> bytes | None:
        """Wrap a run of statement lines in many nested `vyre.block`s."""
        lines = self._lines(data)
        body = [
            i
            for i, line in enumerate(lines)
            if line.lstrip().startswith((b"%", b"vyre.store", b"vyre.if", b"vyre.loop"))
        ]
        if not body:
            return None
        start = self.rng.choice(body)
        end = min(len(lines), start + self.rng.randint(1, 4))
        depth = self.rng.choice(NESTING_DEPTHS)
        opener = self.rng.choice((b"vyre.block {\n", b'vyre.region "r" {\n'))
        return (
            b"".join(lines[:start])
            + opener * depth
            + b"".join(lines[start:end])
            + b"}\n" * depth
            + b"".join(lines[end:])
        )

    def unterminated_string(self, data: bytes) -> bytes:
        lines = self._lines(data)
        i = self.rng.randrange(len(lines) + 1)
        literal = b'"' + b"a" * self.rng.randint(8, 48) + self.rng.choice((b"", b"\\", b"\\u"))
        return b"".join(lines[:i]) + literal + b"\n" + b"".join(lines[i:])

    def bad_bytes(self, data: bytes) -> bytes:
        i = self.rng.randrange(len(data) + 1)
        return data[:i] + self.rng.choice(BAD_BYTES) + data[i:]


class BundleMutator:
    """Mutations of target-module bundle bytes: structural (decode the JSON body,
    change one thing, re-encode canonically) or raw bytes; the digest rebuilt or
    left as it was."""

    INTS = (
        0,
        1,
        -1,
        2,
        3,
        31,
        32,
        63,
        64,
        255,
        256,
        1023,
        1024,
        65535,
        65536,
        2**24,
        2**31 - 1,
        2**31,
        2**32 - 1,
        2**32,
        2**53,
        2**64,
        -(2**31),
        -(2**63),
    )

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.text = TextMutator(rng)

    def mutate(self, data: bytes, rebuild_digest: bool) -> tuple[bytes, str]:
        rng = self.rng
        body = data[32:]
        if not rebuild_digest and rng.random() < 0.15:
            return self._raw(data, rebuild=False)
        if rng.random() < 0.8:
            document = json.loads(body)
            what = self._structural(document)
            new_body = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
            if rng.random() < 0.1:
                new_body = json.dumps(document, sort_keys=True).encode()  # not canonical
                what += " (non-canonical spacing)"
        else:
            new_body, what = self._raw_body(body)
        digest = blake3.blake3(new_body).digest() if rebuild_digest else data[:32]
        return digest + new_body, what

    def _raw(self, data: bytes, rebuild: bool) -> tuple[bytes, str]:
        rng = self.rng
        choice = rng.choice(("truncate", "flip-digest", "empty"))
        if choice == "truncate":
            n = rng.choice((0, 1, 16, 31, 32, 33, len(data) // 2, len(data) - 1))
            return data[:n], f"truncated to {n} bytes"
        if choice == "empty":
            return b"", "empty"
        i = rng.randrange(32)
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[
            i + 1 :
        ], f"digest bit flip at {i}"

    def _raw_body(self, body: bytes) -> tuple[bytes, str]:
        rng = self.rng
        i = rng.randrange(len(body))
        kind = rng.choice(("flip", "delete", "insert", "truncate"))
        if kind == "flip":
            return body[:i] + bytes([body[i] ^ (1 << rng.randrange(8))]) + body[
                i + 1 :
            ], f"body bit flip at {i}"
        if kind == "delete":
            return body[:i] + body[i + rng.randint(1, 8) :], f"body bytes deleted at {i}"
        if kind == "insert":
            return body[:i] + rng.choice((b" ", b"0", b"\xff", b'"', b",")) + body[
                i:
            ], f"body byte inserted at {i}"
        return body[:i], f"body truncated at {i}"

    def _paths(self, node, path=()):
        yield path, node
        if isinstance(node, dict):
            for key, value in node.items():
                yield from self._paths(value, path + (key,))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from self._paths(value, path + (i,))

    def _structural(self, document: dict) -> str:
        rng = self.rng
        paths = list(self._paths(document))
        path, node = rng.choice(paths[1:])
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        where = "/".join(str(p) for p in path)
        if rng.random() < 0.05:
            parent[key] = rng.choice(([], {}, None, "x", 1.5, True, -1))
            return f"{where}: type changed to {type(parent[key]).__name__}"
        if isinstance(node, bool):
            parent[key] = not node
            return f"{where}: flipped"
        if isinstance(node, int):
            new = rng.choice(self.INTS + (node + 1, node - 1, node * 2, node + 2**32))
            parent[key] = new
            return f"{where}: {node} -> {new}"
        if isinstance(node, str):
            return f"{where}: " + self._string(parent, key, node, paths)
        if isinstance(node, list):
            if not node:
                parent[key] = [rng.choice((0, "x", {}))]
                return f"{where}: element added to an empty list"
            op = rng.choice(("delete", "duplicate", "swap", "empty", "reverse"))
            i = rng.randrange(len(node))
            if op == "delete":
                del node[i]
            elif op == "duplicate":
                node.insert(i, json.loads(json.dumps(node[i])))
            elif op == "swap":
                j = rng.randrange(len(node))
                node[i], node[j] = node[j], node[i]
            elif op == "empty":
                node.clear()
            else:
                node.reverse()
            return f"{where}: list {op}"
        if isinstance(node, dict):
            if node and rng.random() < 0.7:
                victim = rng.choice(sorted(node))
                del node[victim]
                return f"{where}: key {victim!r} deleted"
            node["extra"] = 1
            return f"{where}: unknown key added"
        parent[key] = 0
        return f"{where}: null -> 0"

    def _string(self, parent, key, node: str, paths) -> str:
        rng = self.rng
        if len(node) > 40 and rng.random() < 0.8:
            data, steps = self.text.mutate(node.encode("utf-8"))
            parent[key] = data.decode("utf-8", "replace")
            return "text " + "+".join(steps)
        strings = [n for _, n in paths if isinstance(n, str) and n != node]
        choice = rng.choice(("other", "edit", "empty", "weird"))
        if choice == "other" and strings:
            parent[key] = rng.choice(strings)
            return "replaced by another string of the bundle"
        if choice == "edit" and node:
            i = rng.randrange(len(node))
            parent[key] = node[:i] + rng.choice(("0", "z", "", "\n", "\u2028")) + node[i + 1 :]
            return f"character {i} edited"
        if choice == "weird":
            parent[key] = rng.choice(("main\uffff", "a b", "x" * 500, "-1", "9" * 30))
            return "weird string"
        parent[key] = ""
        return "emptied"


# ============================================================================ outcomes


@dataclass
class Case:
    kind: str  # "text", "cli", "bundle", "scale"
    origin: str
    mutation: str
    data: bytes
    outcome: str = ""
    detail: str = ""
    site: str = ""


@dataclass
class Report:
    seed: int
    cases: list[Case] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failures(self) -> list[Case]:
        return [c for c in self.cases if c.outcome in FAIL_CLASSES]

    def counts(self) -> Counter:
        return Counter((c.kind, c.outcome) for c in self.cases)

    def sites(self) -> dict[tuple[str, str], list[Case]]:
        grouped: dict[tuple[str, str], list[Case]] = {}
        for case in self.failures:
            grouped.setdefault((case.outcome, case.site), []).append(case)
        return grouped

    def summary(self, examples: int = 1) -> str:
        lines = [
            f"fuzz seed {self.seed} (replay: VYRE_FUZZ_SEED={self.seed}), {len(self.cases)} cases "
            f"in {self.seconds:.1f} s"
        ]
        for kind in ("text", "cli", "subprocess", "bundle", "scale"):
            counts = {o: n for (k, o), n in self.counts().items() if k == kind}
            if counts:
                lines.append(
                    f"  {kind}: " + ", ".join(f"{o} {n}" for o, n in sorted(counts.items()))
                )
        for (outcome, site), cases in sorted(self.sites().items(), key=lambda kv: -len(kv[1])):
            lines.append(f"FAIL {outcome} x{len(cases)} at {site}")
            for case in sorted(cases, key=lambda c: len(c.data))[:examples]:
                lines.append(f"    from {case.origin} by {case.mutation}: {case.detail[:300]}")
                lines.append(f"    input {case.data[:400]!r}")
        return "\n".join(lines)


class CaseTimeout(BaseException):
    """Raised by the per-case alarm (a BaseException so that `except Exception` in
    the code under test does not swallow it)."""


#: the most iterations per invocation a scale probe's loop nest runs: well
#: within the reference run's iteration limit, so a probe is never "large"
SCALE_NEST_ITERATIONS = 512


def scale_nest_trips(rng: random.Random) -> list[int]:
    """The trip counts of a scale probe's loop nest, outermost first: 48-64
    loops of one trip, up to three of them made 2 or 16, those innermost
    (outside, they would run every one-trip loop inside them that many times),
    and at most `SCALE_NEST_ITERATIONS` iterations in all (three loops of 16,
    4096 iterations, passed the reference run's limit: a "large" outcome, not a
    probe of scale)."""
    trips = [1] * rng.randint(48, 64)
    for _ in range(rng.randint(0, 3)):
        trips[rng.randrange(len(trips))] = rng.choice((2, 16))
    while math.prod(trips) > SCALE_NEST_ITERATIONS:
        trips[trips.index(16)] = 2
    trips.sort(key=lambda trip: trip > 1)
    return trips


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise `CaseTimeout` in the main thread after `seconds` of CPU time (a hang
    burns CPU; CPU time does not grow when a loaded machine starves the process),
    or after ten times as long on the wall clock. No limit in other threads."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum, frame):
        raise CaseTimeout()

    previous = {sig: signal.signal(sig, alarm) for sig in (signal.SIGVTALRM, signal.SIGALRM)}
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    signal.setitimer(signal.ITIMER_REAL, 10 * seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def error_site(error: BaseException) -> str:
    """`Type at file:line (function)` of the innermost frame in vyre_xdsl or xdsl."""
    frames = traceback.extract_tb(error.__traceback__)
    chosen = None
    for frame in frames:
        if "vyre_xdsl" in frame.filename or "/xdsl/" in frame.filename:
            if "/testing/fuzz.py" not in frame.filename:
                chosen = frame
    if chosen is None and frames:
        chosen = frames[-1]
    if chosen is None:
        return type(error).__name__
    name = chosen.filename
    for marker in ("vyre_xdsl/", "xdsl/"):
        if marker in name:
            name = name[name.rindex(marker) :]
            break
    return f"{type(error).__name__} at {name}:{chosen.lineno} ({chosen.name})"


def is_project_error(error: BaseException) -> bool:
    from vyre_xdsl.diagnostics import VyreError

    return isinstance(error, VyreError)


# ============================================================================ inputs


def random_inputs(sig, rng: np.random.Generator) -> dict[str, np.ndarray] | None:
    """Inputs for a run signature, or None when a buffer is too large to run here."""
    total = 0
    inputs: dict[str, np.ndarray] = {}
    for buffer in sig.buffers:
        n = (
            buffer.count
            if buffer.count is not None
            else max(buffer.min_count, int(rng.integers(1, 65)))
        )
        total += n
        if n > MAX_RUN_ELEMENTS or total > 4 * MAX_RUN_ELEMENTS:
            return None
        if not buffer.requires_input:
            continue
        if buffer.element == "f32":
            inputs[buffer.name] = (rng.integers(-64, 65, n) / 4.0).astype(np.float32)
        elif buffer.element == "si32":
            inputs[buffer.name] = rng.integers(-50, 51, n).astype(np.int32)
        elif buffer.element == "i1":
            inputs[buffer.name] = rng.integers(0, 2, n).astype(np.uint32)
        else:
            inputs[buffer.name] = rng.integers(0, 100, n).astype(np.uint32)
    return inputs


#: host elements (all buffers) up to which a text case may run repeated
REPEAT_ELEMENTS = 1 << 16


def run_repeat(inputs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    """The `repeat=` of a text case's reference run: 2 or 3 for a quarter of the
    cases with small buffers (what `vyre.repetition` reads, buffers carried
    from one repetition to the next), else 1. The iteration limit counts every
    repetition, so a repeated run stays as bounded as a single one."""
    small = sum(a.size for a in inputs.values()) <= REPEAT_ELEMENTS
    return int(rng.integers(2, 4)) if small and rng.random() < 0.25 else 1


#: loop iterations (`vyre_xdsl.interpreter.iteration_limit`) after which the
#: reference stops a run and the case counts as too large to run here: a loop's
#: bounds may be computed, from constants or inputs, so only running it tells how
#: long it is, and a 65536-trip loop takes the reference longer than a case's
#: time limit
MAX_RUN_ITERATIONS = 4096


def workgroup_memory_too_large(module) -> bool:
    from vyre_xdsl.dialects.vyre import BufferOp

    for op in module.walk():
        if (
            isinstance(op, BufferOp)
            and op.count is not None
            and op.count.value.data > MAX_RUN_ELEMENTS
        ):
            return True
    return False


# ============================================================================ the text pipeline


class _Stage(Exception):
    """Ends a text case early with an outcome."""

    def __init__(self, outcome: str, detail: str = "", site: str = ""):
        super().__init__(outcome)
        self.outcome, self.detail, self.site = outcome, detail, site


def _guarded(stage: str, thunk):
    """Run one pipeline stage: its value, or None when it refused with a project error."""
    try:
        return thunk()
    except CaseTimeout:
        raise
    except RecursionError as error:  # before the generic handler: the site matters
        raise _Stage("internal", f"{stage}: RecursionError", error_site(error)) from None
    except IterationLimitError as error:
        raise _Stage("large", f"{stage}: {error}") from None
    except Exception as error:
        if is_project_error(error):
            from vyre_xdsl.interpreter import VyreTrap

            if isinstance(error, VyreTrap):
                raise _Stage("trapped", f"{stage}: {error}") from None
            unlocated = unlocated_diagnostic(error)
            if unlocated is not None:
                raise _Stage("unlocated", f"{stage}: {unlocated}"[:500], f"{stage}: unlocated")
            return None
        raise _Stage(
            "internal", f"{stage}: {type(error).__name__}: {error}"[:500], error_site(error)
        ) from None


def unlocated_diagnostic(error: BaseException) -> str | None:
    """The first message of a `VyreDiagnostic` that has no `file:line:col`, else None."""
    from vyre_xdsl.diagnostics import VyreDiagnostic, unlocated_errors

    if not isinstance(error, VyreDiagnostic):
        return None
    return next(iter(unlocated_errors(error)), None)


def unlocated_cli_error(stderr: str) -> str | None:
    """The first `error: ...` line of a CLI's stderr: a diagnostic printed without
    its `file:line:col` (a bad command line or file says `PROG: error: ...`)."""
    return next((line for line in stderr.splitlines() if line.startswith("error: ")), None)


def check_text(
    text: str,
    rng: np.random.Generator,
    wgsl: list[str],
    ran: list | None = None,
    bundle_sample: float = BUNDLE_SAMPLE,
    repeat: int | None = None,
) -> tuple[str, str, str]:
    """(outcome, detail, site) of the in-process pipeline on `text`; every WGSL
    module it prints is appended to `wgsl` (validated later), and the inputs and
    the repeat count of a successful reference run to `ran` (for a run on wgpu).
    `bundle_sample` is the chance that the case also goes through `vyre-compile`;
    `repeat` the run's `repeat=` (None: `run_repeat` draws it)."""
    import vyre_xdsl
    from vyre_xdsl.abi import signature
    from vyre_xdsl.api import fuse_module
    from vyre_xdsl.backends.wgsl import compile_module as wgsl_kernels
    from vyre_xdsl.megakernel.bundle import TargetModuleBundle
    from vyre_xdsl.megakernel.compile import compile_module as compile_bundle

    try:
        module = _guarded("parse", lambda: vyre_xdsl.parse(text, "fuzz.mlir"))
        if module is None:
            return "refused", "parse", ""
        kernels = _guarded("lower", lambda: wgsl_kernels(module)) or []
        fused = _guarded("fuse", lambda: fuse_module(module))
        if fused is not None:
            kernels += _guarded("lower fused", lambda: wgsl_kernels(fused)) or []
        wgsl.extend(k.wgsl for k in kernels)
        # vyre-compile (plan, fuse, lower, bundle) and its own decoder, on a third of the cases
        bundle = None
        if rng.random() < bundle_sample:
            bundle = _guarded("vyre-compile", lambda: compile_bundle(module).bundle_bytes())
        if bundle is not None:
            try:
                TargetModuleBundle.from_bytes(bundle)
            except CaseTimeout:
                raise
            except Exception as error:
                return (
                    "internal",
                    f"vyre-compile wrote a bundle its decoder refuses: {error}"[:500],
                    error_site(error),
                )
        sig = _guarded("signature", lambda: signature(module))
        if sig is None:
            return "refused", "signature", ""
        inputs = random_inputs(sig, rng)
        if inputs is None or workgroup_memory_too_large(module):
            return "large", "", ""
        if repeat is None:
            repeat = run_repeat(inputs, rng)
        with iteration_limit(MAX_RUN_ITERATIONS):
            outputs = _guarded(
                "reference run",
                lambda: vyre_xdsl.run(module, inputs, backend="reference", repeat=repeat),
            )
        if outputs is None:
            return "refused", "reference run", ""
        if ran is not None:
            ran.append((inputs, repeat))
        return "accepted", f"{len(kernels)} kernels", ""
    except _Stage as stage:
        return stage.outcome, stage.detail, stage.site


def check_cli_in_process(data: bytes, workdir: str) -> tuple[str, str, str]:
    """`vyre-opt --fuse --lower -t wgsl IN -o OUT` through the driver, in process."""
    from vyre_xdsl.tools.vyre_opt import VyreOptMain, run_tool

    source = os.path.join(workdir, "in.mlir")
    target = os.path.join(workdir, "out.wgsl")
    with open(source, "wb") as f:
        f.write(data)
    with contextlib.suppress(FileNotFoundError):
        os.remove(target)
    out, err = io.StringIO(), io.StringIO()
    saved = os.environ.pop("VYRE_DEBUG", None)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_tool(VyreOptMain, [source, "--fuse", "--lower", "-t", "wgsl", "-o", target])
    except CaseTimeout:
        raise
    except Exception as error:
        return (
            "internal",
            f"vyre-opt raised {type(error).__name__}: {error}"[:500],
            error_site(error),
        )
    finally:
        if saved is not None:
            os.environ["VYRE_DEBUG"] = saved
    return _classify_cli(code, err.getvalue(), target)


def check_tools_in_process(data: bytes, workdir: str, run: bool) -> tuple[str, str, str]:
    """`vyre-compile IN -o OUT.vkb --plan-dot P --artifact A` and (when `run`)
    `vyre-run IN --backend reference --random-inputs 0 --output-dir D`, in
    process: every output file or none."""
    from vyre_xdsl.tools import vyre_compile, vyre_run

    source = os.path.join(workdir, "tool.mlir")
    with open(source, "wb") as f:
        f.write(data)
    outputs = [os.path.join(workdir, name) for name in ("out.vkb", "plan.dot", "art.vmk")]
    directory = os.path.join(workdir, "outdir")
    commands = [
        (
            vyre_compile.main,
            [source, "-o", outputs[0], "--plan-dot", outputs[1], "--artifact", outputs[2]],
            outputs,
            "vyre-compile",
        )
    ]
    if run:
        commands.append(
            (
                vyre_run.main,
                [
                    source,
                    "--backend",
                    "reference",
                    "--random-inputs",
                    "0",
                    "--output-dir",
                    directory,
                ],
                [directory],
                "vyre-run",
            )
        )
    verdict = ("accepted", "", "")
    for main, argv, files, tool in commands:
        for path in files:
            if os.path.isdir(path):
                for name in os.listdir(path):
                    os.remove(os.path.join(path, name))
                os.rmdir(path)
            elif os.path.exists(path):
                os.remove(path)
        err = io.StringIO()
        saved = os.environ.pop("VYRE_DEBUG", None)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                code = main(argv)
        except CaseTimeout:
            raise
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except Exception as error:
            return (
                "internal",
                f"{tool} raised {type(error).__name__}: {error}"[:500],
                error_site(error),
            )
        finally:
            if saved is not None:
                os.environ["VYRE_DEBUG"] = saved
        written = [
            p for p in files if os.path.exists(p) and (not os.path.isdir(p) or os.listdir(p))
        ]
        if code == 0 and len(written) < len(files):
            return (
                "partial",
                f"{tool} exit 0 but wrote {len(written)} of {len(files)} outputs",
                f"{tool} outputs",
            )
        if code != 0 and written:
            return (
                "partial",
                f"{tool} exit {code} but left {[os.path.basename(p) for p in written]}",
                f"{tool} outputs",
            )
        text = err.getvalue()
        if code not in (0, 1) or "Traceback" in text or (code == 1 and "error" not in text):
            return "internal", f"{tool} exit {code}: {text.strip()[-500:]}", f"{tool} exit {code}"
        if code == 1 and (unlocated := unlocated_cli_error(text)) is not None:
            return "unlocated", f"{tool}: {unlocated}"[:500], f"{tool}: unlocated"
        if code == 1:
            verdict = ("refused", text.strip().splitlines()[0][:200] if text.strip() else "", "")
    return verdict


def _classify_cli(code: int, stderr: str, target: str) -> tuple[str, str, str]:
    exists = os.path.exists(target)
    if code == 0:
        return (
            ("accepted", "", "")
            if exists
            else ("internal", "exit 0 without the -o file", "vyre-opt -o")
        )
    if exists:
        return "partial", f"exit {code} but {os.path.basename(target)} was written", "vyre-opt -o"
    if code == 1 and (unlocated := unlocated_cli_error(stderr)) is not None:
        return "unlocated", f"vyre-opt: {unlocated}"[:500], "vyre-opt: unlocated"
    if code == 1 and "Traceback" not in stderr and "error" in stderr:
        return "refused", stderr.strip().splitlines()[0][:200] if stderr.strip() else "", ""
    first = next(
        (line for line in stderr.splitlines() if "internal error" in line or "Error" in line),
        stderr[-300:],
    )
    site = re.sub(r"\d+", "N", first.strip())[:160]
    return "internal", f"exit {code}: {stderr.strip()[-500:]}", f"vyre-opt exit {code}: {site}"


# ============================================================================ the GPU worker


def _worker_main(conn) -> None:  # pragma: no cover - runs in a child process
    os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        kind = message[0]
        if kind == "stop":
            return
        if kind == "naga":
            conn.send(_naga_errors(message[1]))
        elif kind == "bundle":
            conn.send(_run_forged(*message[1:]))
        elif kind == "wgpu":
            conn.send(_run_on_wgpu(*message[1:]))


_DEVICE = None


def _device():
    global _DEVICE
    if _DEVICE is None:
        import wgpu

        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        limit = adapter.limits["max-storage-buffers-per-shader-stage"]
        # the features the runtime asks for, so naga validates what the runtime would run
        from vyre_xdsl.runtime.device import OPTIONAL_FEATURES

        features = [
            f for f in OPTIONAL_FEATURES if f in adapter.features and f != "timestamp-query"
        ]
        _DEVICE = adapter.request_device_sync(
            required_features=features,
            required_limits={"max-storage-buffers-per-shader-stage": limit},
        )
    return _DEVICE


def _naga_errors(modules: list[str]) -> list[str | None]:
    device = _device()
    errors: list[str | None] = []
    for wgsl in modules:
        try:
            device.create_shader_module(code=wgsl)
            errors.append(None)
        except Exception as error:  # naga's rejection, whatever its class
            errors.append(f"{type(error).__name__}: {error}"[:600])
    return errors


def _run_forged(
    data: bytes,
    inputs: dict,
    f32_ulp: float,
    original: bytes | None = None,
    multisets: frozenset[str] = frozenset(),
) -> tuple[str, str, str]:
    """Run an accepted bundle on wgpu and on the reference; they must agree.

    An f32 buffer further than `f32_ulp` from the reference still counts as
    agreeing when it is bit for bit what the unmutated bundle `original`
    computes on the same device: approximate ops (asin, exp, ...) may be far
    from the reference within WGSL's accuracy rules, and a mutant that computes
    exactly what the genuine bundle computes is no forgery. The buffers named
    in `multisets` hold atomic tickets (which invocation gets which old value
    is open), so they agree when they hold the same values in any order."""
    from vyre_xdsl.interpreter import VyreTrap
    from vyre_xdsl.megakernel.run import run_bundle
    from vyre_xdsl.testing.compare import buffer_difference

    results = {}
    for backend in ("reference", "wgpu"):
        try:
            with iteration_limit(MAX_RUN_ITERATIONS):
                results[backend] = ("outputs", run_bundle(bytes(data), inputs, backend=backend))
        except IterationLimitError:  # the reference runs first: wgpu would run as long
            return "large", "loops past the iteration limit", ""
        except VyreTrap as trap:
            results[backend] = ("trap", trap.tag)
        except Exception as error:
            if is_project_error(error):
                results[backend] = ("refused", type(error).__name__)
            else:
                return (
                    "internal",
                    f"{backend} run: {type(error).__name__}: {error}"[:500],
                    error_site(error),
                )
    ref, gpu = results["reference"], results["wgpu"]
    if "refused" in (ref[0], gpu[0]):
        return "refused", f"run refused: {ref} / {gpu}"[:300], ""
    if ref[0] != gpu[0] or (ref[0] == "trap" and ref[1] != gpu[1]):
        return (
            "forged",
            f"reference {ref[0]} {ref[1] if ref[0] == 'trap' else ''} vs wgpu {gpu[0]}",
            "bundle run",
        )
    if ref[0] == "trap":
        return "trapped", "", ""
    problems = []
    genuine = None
    for name in sorted(set(ref[1]) | set(gpu[1])):
        if name not in ref[1] or name not in gpu[1]:
            problems.append(f"{name} missing")
            continue
        tolerance = f32_ulp if np.asarray(ref[1][name]).dtype == np.float32 else 0.0
        problem = buffer_difference(
            name, ref[1][name], gpu[1][name], tolerance, multiset=name in multisets
        )
        if problem and tolerance and original is not None:
            if genuine is None:
                try:
                    genuine = run_bundle(bytes(original), inputs, backend="wgpu")
                except Exception:  # the genuine bundle trapped or was refused: no excuse
                    genuine = {}
            if name in genuine and buffer_difference(name, genuine[name], gpu[1][name]) is None:
                problem = None
        if problem:
            problems.append(problem)
    if problems:
        return "forged", "; ".join(problems)[:500], "bundle run differs from the reference"
    return "accepted", "ran like the reference", ""


def _run_on_wgpu(text: str, inputs: dict, repeat: int = 1) -> tuple[str, str, str]:
    """Run an accepted text mutant on wgpu (`repeat` times, as the reference ran
    it): it may trap or be refused with the project's error (a device limit, the
    lavapipe loop limit), never raise anything else. (Its results are not
    compared: a mutant may race.)"""
    import vyre_xdsl
    from vyre_xdsl.interpreter import VyreTrap

    try:
        vyre_xdsl.run(text, inputs, backend="wgpu", repeat=repeat)
    except VyreTrap:
        return "trapped", "", ""
    except Exception as error:
        if is_project_error(error):
            return "refused", f"wgpu: {type(error).__name__}: {error}"[:300], ""
        return "internal", f"wgpu run: {type(error).__name__}: {error}"[:500], error_site(error)
    return "accepted", "ran on wgpu", ""


class GpuWorker:
    """A child process (spawned, so it owns its wgpu device) that validates WGSL and
    runs bundles; a job past its time limit kills and restarts it."""

    def __init__(self) -> None:
        self._context = multiprocessing.get_context("spawn")
        self._process = None
        self._conn = None

    def _start(self) -> None:
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_worker_main, args=(child,), daemon=True)
        try:
            process.start()
        except BaseException:
            parent.close()
            raise
        finally:
            child.close()
        self._process, self._conn = process, parent

    def call(self, message: tuple, limit: float):
        """The worker's answer, or raise `CaseTimeout` (the worker is restarted)."""
        if self._process is None or not self._process.is_alive():
            self._start()
        self._conn.send(message)
        if not self._conn.poll(limit):
            self.close(kill=True)
            raise CaseTimeout()
        try:
            return self._conn.recv()
        except (EOFError, OSError):  # a dead child: EOF, or a reset connection
            self.close(kill=True)
            raise RuntimeError("the fuzz worker process died") from None

    def close(self, kill: bool = False) -> None:
        if self._process is None:
            return
        if not kill and self._process.is_alive():
            with contextlib.suppress(Exception):
                self._conn.send(("stop",))
            self._process.join(5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(5)
        self._conn.close()
        self._process = self._conn = None


# ============================================================================ the campaign


#: random modules small enough to mutate a thousand times in seconds
SMALL_MODULES_OPTIONS = dict(max_count=64, statements=2, depth=2, nesting=1, big_grid=0)


def _small_modules():
    from vyre_xdsl.testing.generators import GeneratorOptions

    return GeneratorOptions(**SMALL_MODULES_OPTIONS)


def doc_modules() -> list[tuple[str, str]]:
    """(`file.md:line`, text) of every ```mlir block of the docs that is a whole
    module `vyre_xdsl.parse` accepts (vyre IR, or standard MLIR it converts)."""
    import vyre_xdsl

    modules = []
    for path in sorted(DOCS.glob("*.md")):
        document = path.read_text()
        for block in re.finditer(r"^```mlir\n(.*?)^```", document, re.S | re.M):
            text = block.group(1)
            try:
                vyre_xdsl.parse(text, path.name)
            except Exception:  # a fragment or an example of an error
                continue
            line = document.count("\n", 0, block.start()) + 2
            modules.append((f"{path.name}:{line}", text))
    return modules


def _seed_texts(rng: random.Random, generated: int) -> list[tuple[str, bytes]]:
    """The examples, the docs' whole modules, the hand-written seeds of
    `fuzz_seeds` (linalg, math, 3-D loops, explicit grids, repetition) and
    `generated` random modules."""
    from vyre_xdsl.testing.fuzz_seeds import FUZZ_SEEDS
    from vyre_xdsl.testing.generators import random_module

    SMALL_MODULES = _small_modules()
    texts = []
    for path in sorted(EXAMPLES.glob("*.mlir")):
        if path.stat().st_size < 8000:  # the big tour is too slow to mutate a thousand times
            texts.append((path.name, path.read_bytes()))
    texts += [(origin, text.encode()) for origin, text in doc_modules()]
    texts += [(origin, text.encode()) for origin, text in FUZZ_SEEDS]
    while generated:
        seed = rng.randrange(2**31)
        text = random_module(seed, SMALL_MODULES).text.encode()
        if len(text) <= 4000:  # small modules keep a thousand cases fast
            texts.append((f"random_module({seed}, SMALL_MODULES)", text))
            generated -= 1
    return texts


def _seed_bundles(
    rng: random.Random, generated: int
) -> list[tuple[str, bytes, float, frozenset[str]]]:
    """(origin, bundle bytes, f32 ULP tolerance, ticket buffers) of the bundles
    to mutate; the ticket buffers compare as multisets."""
    from vyre_xdsl.megakernel.compile import compile_module
    from vyre_xdsl.testing.generators import random_module

    bundles = []
    for path in sorted(EXAMPLES.glob("*.mlir")):
        if path.stat().st_size < 8000:
            import vyre_xdsl

            bundles.append(
                (
                    path.name,
                    compile_module(vyre_xdsl.parse(path.read_text())).bundle_bytes(),
                    64.0,
                    frozenset(),
                )
            )
    from vyre_xdsl.testing.fuzz_seeds import FUZZ_SEEDS

    for origin, text in FUZZ_SEEDS:
        import vyre_xdsl

        bundles.append(
            (origin, compile_module(vyre_xdsl.parse(text)).bundle_bytes(), 64.0, frozenset())
        )
    options = replace(_small_modules(), traps=False)
    attempts = 0
    while generated and attempts < 10 * generated:
        attempts += 1
        seed = rng.randrange(2**31)
        case = random_module(seed, options)
        try:
            data = compile_module(case.module).bundle_bytes()
        except Exception:
            continue  # a module the planner refuses is not a bundle to mutate
        tolerance = max(case.tolerances.values(), default=0.0)
        origin = f"random_module({seed}, SMALL_MODULES, traps=False)"
        bundles.append((origin, data, tolerance, case.multisets))
        generated -= 1
    return bundles


@dataclass
class Campaign:
    seed: int
    text_cases: int = 1000
    bundle_cases: int = 1000
    cli_subprocess_cases: int = 12
    #: accepted text mutants also run on wgpu (in the worker; only errors count)
    wgpu_cases: int = 40
    #: text mutants also given to vyre-compile (and, when accepted, vyre-run) in process
    tool_cases: int = 60
    generated_texts: int = 24
    generated_bundles: int = 6
    case_limit: float = 5.0
    #: unmutated scale probes (`_scale`): loop nests up to the depth limit and long chains
    scale_cases: int = 4
    scale_limit: float = 60.0
    verbose: bool = False

    def run(self) -> Report:
        start = time.monotonic()
        report = Report(self.seed)
        rng = random.Random(self.seed)
        worker = GpuWorker()
        try:
            with tempfile.TemporaryDirectory(prefix="vyre-fuzz-") as workdir:
                self._text(rng, report, worker, workdir)
                self._scale(rng, report)
                self._bundles(rng, report, worker)
                self._subprocess(rng, report, worker, workdir)
        finally:
            worker.close()
        report.seconds = time.monotonic() - start
        return report

    def _log(self, message: str) -> None:
        if self.verbose:
            print(message, file=sys.stderr, flush=True)

    # ------------------------------------------------------------------ text

    def _text(self, rng: random.Random, report: Report, worker: GpuWorker, workdir: str) -> None:
        seeds = _seed_texts(rng, self.generated_texts)
        mutator = TextMutator(rng)
        np_rng = np.random.default_rng(rng.randrange(2**32))
        printed: list[tuple[Case, str]] = []
        runnable: list[tuple[Case, str, dict]] = []
        for n in range(self.text_cases):
            origin, original = rng.choice(seeds)
            data, steps = mutator.mutate(original)
            case = Case("text", origin, "+".join(steps) or "none", data)
            wgsl: list[str] = []
            try:
                with time_limit(self.case_limit):
                    try:
                        text = data.decode("utf-8")
                    except UnicodeDecodeError:
                        case.kind = "cli"
                        case.outcome, case.detail, case.site = check_cli_in_process(data, workdir)
                    else:
                        ran: list = []
                        case.outcome, case.detail, case.site = check_text(text, np_rng, wgsl, ran)
                        if ran:
                            runnable.append((case, text, ran[0]))
                        if n < self.tool_cases and case.outcome not in FAIL_CLASSES:
                            tools = check_tools_in_process(data, workdir, run=bool(ran))
                            if tools[0] in FAIL_CLASSES:
                                case.kind = "cli"
                                case.outcome, case.detail, case.site = tools
            except CaseTimeout:
                case.outcome, case.detail, case.site = (
                    "hang",
                    f"over {self.case_limit:g} s",
                    f"{case.kind} pipeline",
                )
            except RecursionError as error:
                case.outcome, case.detail, case.site = (
                    "internal",
                    "RecursionError",
                    error_site(error),
                )
            printed.extend((case, module) for module in wgsl)
            report.cases.append(case)
            if n % 100 == 99:
                self._log(f"text {n + 1}: {Counter(c.outcome for c in report.cases)}")
        self._validate_wgsl(printed, worker)
        self._run_on_wgpu(rng, runnable, worker)

    def _scale(self, rng: random.Random, report: Report) -> None:
        """Programs at the documented limits, through the whole in-process pipeline
        under `scale_limit` each: a stage exponential in the nesting depth or
        quadratic in the number of programs is a `hang`. Even cases are loop
        nests 48-64 deep (one-trip loops, then innermost a few of 2 or 16 trips:
        at most about 600 iterations per invocation); odd cases chains of 100-300 programs, a tenth of them
        reading a neighbour (a dispatch split). The chains skip `vyre-compile`:
        its planner still fuses a trial group per prefix of a chain (quadratic)."""
        from vyre_xdsl.testing.generators import deep_nest_text, long_chain_text

        np_rng = np.random.default_rng(rng.randrange(2**32))
        for n in range(self.scale_cases):
            if n % 2 == 0:
                trips = scale_nest_trips(rng)
                origin, text = f"deep_nest_text({trips})", deep_nest_text(trips)
                sample = BUNDLE_SAMPLE
            else:
                shifted = [rng.random() < 0.1 for _ in range(rng.randint(100, 300))]
                origin, text = f"long_chain_text({len(shifted)} programs)", long_chain_text(shifted)
                sample = 0.0
            case = Case("scale", origin, "none", text.encode())
            try:
                with time_limit(self.scale_limit):
                    case.outcome, case.detail, case.site = check_text(
                        text, np_rng, [], bundle_sample=sample, repeat=1
                    )
            except CaseTimeout:
                case.outcome, case.detail, case.site = (
                    "hang",
                    f"over {self.scale_limit:g} s",
                    "scale pipeline",
                )
            report.cases.append(case)
            self._log(f"scale {origin[:60]}: {case.outcome} {case.detail}")

    def _run_on_wgpu(self, rng: random.Random, runnable: list, worker: GpuWorker) -> None:
        for case, text, (inputs, repeat) in rng.sample(
            runnable, min(len(runnable), self.wgpu_cases)
        ):
            if case.outcome in FAIL_CLASSES:
                continue
            try:
                outcome, detail, site = worker.call(("wgpu", text, inputs, repeat), 60)
            except CaseTimeout:
                outcome, detail, site = "hang", "wgpu run over 60 s", "wgpu run"
            if outcome in FAIL_CLASSES:
                case.outcome, case.detail, case.site = outcome, detail, site

    def _validate_wgsl(self, printed: list[tuple[Case, str]], worker: GpuWorker) -> None:
        unique: dict[str, list[Case]] = {}
        for case, module in printed:
            unique.setdefault(module, []).append(case)
        modules = list(unique)
        for start in range(0, len(modules), 50):
            batch = modules[start : start + 50]
            try:
                errors = worker.call(("naga", batch), 60 + 2 * len(batch))
            except CaseTimeout:
                errors = ["naga validation hung"] * len(batch)
            for module, error in zip(batch, errors):
                if error is None:
                    continue
                for case in unique[module]:
                    if case.outcome not in FAIL_CLASSES:
                        case.outcome, case.site = "naga", _naga_site(error)
                        case.detail = f"{error}\n--- WGSL ---\n{module[:1500]}"

    # ------------------------------------------------------------------ bundles

    def _bundles(self, rng: random.Random, report: Report, worker: GpuWorker) -> None:
        from vyre_xdsl.megakernel.bundle import TargetModuleBundle

        seeds = _seed_bundles(rng, self.generated_bundles)
        mutator = BundleMutator(rng)
        np_rng = np.random.default_rng(rng.randrange(2**32))
        for n in range(self.bundle_cases):
            origin, original, tolerance, multisets = rng.choice(seeds)
            rebuild = n % 2 == 0
            for _ in range(20):
                data, what = mutator.mutate(original, rebuild)
                if data != original:
                    break
            case = Case(
                "bundle", origin, ("digest rebuilt: " if rebuild else "digest kept: ") + what, data
            )
            report.cases.append(case)
            try:
                with time_limit(self.case_limit):
                    bundle = TargetModuleBundle.from_bytes(data)
                    inputs = random_inputs(bundle.run_signature(), np_rng)
            except CaseTimeout:
                case.outcome, case.detail, case.site = "hang", "from_bytes", "bundle decode"
                continue
            except Exception as error:
                if is_project_error(error):
                    case.outcome, case.detail = "refused", f"{type(error).__name__}: {error}"[:300]
                else:
                    case.outcome, case.site = "internal", error_site(error)
                    case.detail = f"from_bytes: {type(error).__name__}: {error}"[:500]
                continue
            if inputs is None:
                case.outcome = "large"
                continue
            try:
                case.outcome, case.detail, case.site = worker.call(
                    ("bundle", data, inputs, tolerance, original, multisets), 60
                )
            except CaseTimeout:
                case.outcome, case.detail, case.site = "hang", "bundle run over 60 s", "bundle run"
            if n % 100 == 99:
                self._log(
                    f"bundle {n + 1}: {Counter(c.outcome for c in report.cases if c.kind == 'bundle')}"
                )

    # ------------------------------------------------------------------ vyre-opt as a subprocess

    def _subprocess(
        self, rng: random.Random, report: Report, worker: GpuWorker, workdir: str
    ) -> None:
        texts = [c for c in report.cases if c.kind in ("text", "cli")]
        if not texts or not self.cli_subprocess_cases:
            return
        undecodable = [c for c in texts if c.kind == "cli"]
        accepted = [c for c in texts if c.outcome == "accepted"]
        chosen = rng.sample(undecodable, min(len(undecodable), self.cli_subprocess_cases // 3))
        chosen += rng.sample(accepted, min(len(accepted), self.cli_subprocess_cases // 3))
        chosen += rng.sample(texts, self.cli_subprocess_cases - len(chosen))
        exe = pathlib.Path(sys.executable).with_name("vyre-opt")
        command = [str(exe)] if exe.exists() else [sys.executable, "-m", "vyre_xdsl.tools.vyre_opt"]
        env = {k: val for k, val in os.environ.items() if k != "VYRE_DEBUG"}
        running = []
        for i, source_case in enumerate(chosen):
            case = Case("subprocess", source_case.origin, source_case.mutation, source_case.data)
            report.cases.append(case)
            source = os.path.join(workdir, f"sub{i}.mlir")
            target = os.path.join(workdir, f"sub{i}.wgsl")
            with open(source, "wb") as f:
                f.write(case.data)
            process = subprocess.Popen(
                command + [source, "--fuse", "--lower", "-t", "wgsl", "-o", target],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            running.append((case, process, target))
            if len(running) >= 2 or i == len(chosen) - 1:
                for case_, process_, target_ in running:
                    self._finish_subprocess(case_, process_, target_, worker)
                running = []

    def _finish_subprocess(self, case: Case, process, target: str, worker: GpuWorker) -> None:
        try:
            _, stderr = process.communicate(timeout=max(30.0, 3 * self.case_limit))
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            case.outcome, case.detail, case.site = "hang", "vyre-opt subprocess", "vyre-opt"
            return
        case.outcome, case.detail, case.site = _classify_cli(
            process.returncode, stderr.decode("utf-8", "replace"), target
        )
        if case.outcome == "accepted":
            modules = [m for m in pathlib.Path(target).read_text().split("// -----\n") if m.strip()]
            errors = worker.call(("naga", modules), 60 + 2 * len(modules))
            bad = next((e for e in errors if e), None)
            if bad:
                case.outcome, case.detail, case.site = "naga", bad, _naga_site(bad)


def _naga_site(error: str) -> str:
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    first = next(
        (line for line in lines if "error" in line.lower() and "Validation Error" not in line),
        lines[0] if lines else error,
    )
    return "naga: " + re.sub(r"\d+", "N", re.sub(r"'[^']*'|`[^`]*`|\"[^\"]*\"", "'…'", first))[:140]


def fresh_seed() -> int:
    """`VYRE_FUZZ_SEED` when set (to replay a run), else a new random seed."""
    value = os.environ.get("VYRE_FUZZ_SEED")
    return int(value) if value else random.SystemRandom().randrange(2**32)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seed", type=int, default=None, help="replay a run (default: VYRE_FUZZ_SEED or fresh)"
    )
    parser.add_argument("--text", type=int, default=1000, help="text mutants")
    parser.add_argument("--bundles", type=int, default=1000, help="bundle mutants")
    parser.add_argument(
        "--subprocess", type=int, default=12, help="text mutants also run by a vyre-opt subprocess"
    )
    parser.add_argument(
        "--examples", type=int, default=3, help="reproducers shown per failure site"
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else fresh_seed()
    report = Campaign(seed, args.text, args.bundles, args.subprocess, verbose=args.verbose).run()
    print(report.summary(args.examples))
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
