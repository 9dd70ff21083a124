"""Forged bundles: structural mutants of real bundles, with the BLAKE3 digest
rebuilt so that every check after the digest is reached.

Each mutant must either be refused with a `BundleError` (never another
exception), or load and then run to exactly the outputs the source module
gives on the reference interpreter, on both backends. The mutations are
seeded (the seed is in the failure message) and cover every kind of JSON
value in the bundle: integers (off by one, zero, negative, 2^31, 2^32),
strings (emptied, extended, truncated, a line of program or WGSL text
deleted or duplicated, a digit changed), booleans, nulls, and arrays
(an entry dropped, duplicated, or the order reversed).
"""

from __future__ import annotations

import json
import random
import struct

import pytest

import vyre_xdsl
from vyre_xdsl.abi import signature
from vyre_xdsl.megakernel import bundle as B
from vyre_xdsl.megakernel.compile import compile_module
from vyre_xdsl.megakernel.run import run_bundle
from vyre_xdsl.tools.vyre_run import random_inputs

from ..api.test_repetition import COUNTER
from ..support import EXAMPLES
from .test_bundle import signed
from .test_bundle_coverage import spill_module
from .test_megakernel_cases import MKL003, module_of
from .test_megakernel_scratch_indirect import INDIRECT, SPILLS

SOURCES = {
    "axpy": (EXAMPLES / "axpy.mlir").read_text(),
    "chain3": (EXAMPLES / "chain3.mlir").read_text(),
    "reduction": (EXAMPLES / "reduction.mlir").read_text(),
    "mkl003": MKL003,
    "spills": SPILLS,  # grid_sync spills: scratch bindings
    "indirect": INDIRECT,  # indirect grids, one at a byte offset
    "spills_ui8": spill_module("ui8"),  # packed scratch, and a trap sidecar after it
    "repetition": COUNTER,  # a fused group reading vyre.repetition: the repetition binding
}
#: sources run with `repeat` > 1 (expected: the source run as often on the reference)
REPEATS = {"repetition": 3}
MUTANTS_PER_SOURCE = 100
SEED = 17


def paths(value, prefix=()):
    """Every (path, value) in a JSON document, containers included."""
    yield prefix, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, prefix + (index,))


def text_mutants(rng: random.Random, text: str) -> list[str]:
    lines = text.split("\n")
    k = rng.randrange(len(lines))
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    out = [
        "",
        text + "x",
        text[:-1],
        "\n".join(lines[:k] + lines[k + 1 :]),
        "\n".join(lines[: k + 1] + lines[k:]),
    ]
    if digits:
        i = rng.choice(digits)
        out.append(text[:i] + str((int(text[i]) + rng.randrange(1, 10)) % 10) + text[i + 1 :])
    return out


def mutants_of(rng: random.Random, value) -> list:
    if isinstance(value, bool):
        return [not value, None, 0]
    if isinstance(value, int):
        return [value + 1, value - 1, 0, -1, 1 << 31, 1 << 32, 2 * value, None, str(value)]
    if isinstance(value, str):
        return text_mutants(rng, value)
    if value is None:
        return [0, 1, 1 << 32, ""]
    if isinstance(value, list):
        out = [[], list(reversed(value)), None]
        if value:
            k = rng.randrange(len(value))
            out += [value[:k] + value[k + 1 :], value[: k + 1] + value[k:]]
        return out
    return [{}, None]  # dict


def replaced(document, path, new):
    if not path:
        return new
    copy = json.loads(json.dumps(document))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return copy


def mutants(data: bytes, count: int, seed: int):
    rng = random.Random(seed)
    document = json.loads(data[32:])
    everything = list(paths(document))
    for _ in range(count):
        path, value = rng.choice(everything)
        new = rng.choice(mutants_of(rng, value))
        yield path, signed(replaced(document, path, new))


def exactly_equal(a: dict, b: dict) -> bool:
    return sorted(a) == sorted(b) and all(
        a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes()
        for k in a
    )


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_forged_bundles_are_refused_or_run_like_the_source(name):
    module = module_of(SOURCES[name])
    data = compile_module(module).bundle_bytes()
    inputs = random_inputs(signature(module), 3, {})
    repeat = REPEATS.get(name, 1)
    expected = vyre_xdsl.run(module, inputs, backend="reference", repeat=repeat)
    refused = accepted = 0
    for k, (path, forged) in enumerate(mutants(data, MUTANTS_PER_SOURCE, SEED)):
        where = f"{name} mutant {k} (seed {SEED}) at {'/'.join(map(str, path))}"
        try:
            bundle = B.TargetModuleBundle.from_bytes(forged)
        except B.BundleError:
            refused += 1
            continue
        except Exception as error:
            pytest.fail(f"{where}: {type(error).__name__}: {error}")
        accepted += 1
        for backend in ("reference", "wgpu"):
            got = run_bundle(bundle, inputs, backend=backend, repeat=repeat)
            assert exactly_equal(got, expected), (
                f"{where}: the {backend} run differs from the source's"
            )
    assert refused + accepted == MUTANTS_PER_SOURCE
    assert refused > MUTANTS_PER_SOURCE // 2, f"{name}: only {refused} mutants refused"


def test_the_unmutated_bundle_loads_and_runs():
    module = module_of(SOURCES["chain3"])
    bundle = B.TargetModuleBundle.from_bytes(compile_module(module).bundle_bytes())
    inputs = random_inputs(signature(module), 3, {})
    assert exactly_equal(
        run_bundle(bundle, inputs, backend="wgpu"),
        vyre_xdsl.run(module, inputs, backend="reference"),
    )


# ---------------------------------------------------------------------- artifacts

ARTIFACT_MUTANTS_PER_SOURCE = 60


def framed_artifact(document: dict) -> bytes:
    """Artifact bytes with a correct frame and digest around `document`."""
    from vyre_xdsl.megakernel.artifact import (
        ARTIFACT_MAGIC,
        ARTIFACT_SCHEMA_VERSION,
        _framed_digest,
    )

    body = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    header = ARTIFACT_MAGIC + struct.pack("<HI", ARTIFACT_SCHEMA_VERSION, len(body))
    return header + body + _framed_digest(ARTIFACT_SCHEMA_VERSION, body)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_forged_artifacts_are_refused_or_compile_like_the_source(name):
    """A forged artifact (digest rebuilt) is refused with an `ArtifactError`, or
    target compilation refuses it with a project error, or the bundle compiled
    from it runs to exactly the source's outputs."""
    from vyre_xdsl.diagnostics import VyreError
    from vyre_xdsl.megakernel.artifact import Artifact
    from vyre_xdsl.megakernel.compile import compile_selected_modules

    module = module_of(SOURCES[name])
    document = json.loads(compile_module(module).artifact.body())
    inputs = random_inputs(signature(module), 3, {})
    expected = vyre_xdsl.run(module, inputs, backend="reference")
    rng = random.Random(SEED)
    everything = list(paths(document))
    refused = 0
    for k in range(ARTIFACT_MUTANTS_PER_SOURCE):
        path, value = rng.choice(everything)
        forged = framed_artifact(replaced(document, path, rng.choice(mutants_of(rng, value))))
        where = f"{name} artifact mutant {k} (seed {SEED}) at {'/'.join(map(str, path))}"
        try:
            artifact = Artifact.from_bytes(forged)
            bundle = B.TargetModuleBundle.from_bytes(compile_selected_modules(artifact).bytes)
        except VyreError:
            refused += 1
            continue
        except Exception as error:
            pytest.fail(f"{where}: {type(error).__name__}: {error}")
        assert exactly_equal(run_bundle(bundle, inputs, backend="reference"), expected), where
    assert refused > ARTIFACT_MUTANTS_PER_SOURCE // 2


def test_artifact_checks_have_their_own_errors():
    from vyre_xdsl.megakernel.artifact import (
        Artifact,
        ArtifactGraphMismatchError,
        ArtifactPlanError,
    )

    document = json.loads(compile_module(module_of(MKL003)).artifact.body())
    renamed = json.loads(json.dumps(document))
    renamed["resources"][0]["name"] = "zz"
    with pytest.raises(ArtifactGraphMismatchError, match="resources are not the values"):
        Artifact.from_bytes(framed_artifact(renamed))
    reordered = json.loads(json.dumps(document))
    reordered["plan"]["fusion"][0]["stage"] = 5  # the producer after its consumer
    with pytest.raises(ArtifactPlanError, match="depends on"):
        Artifact.from_bytes(framed_artifact(reordered))
    missing = json.loads(json.dumps(document))
    missing["plan"]["fusion"][1]["members"] = []
    with pytest.raises(ArtifactPlanError, match="every node exactly once"):
        Artifact.from_bytes(framed_artifact(missing))


def test_an_artifact_nested_100000_deep_is_an_artifact_error():
    from vyre_xdsl.megakernel.artifact import (
        ARTIFACT_MAGIC,
        ARTIFACT_SCHEMA_VERSION,
        Artifact,
        ArtifactError,
        _framed_digest,
    )

    body = b"[" * 100000 + b"]" * 100000
    schema = ARTIFACT_SCHEMA_VERSION
    header = ARTIFACT_MAGIC + struct.pack("<HI", schema, len(body))
    data = header + body + _framed_digest(schema, body)
    with pytest.raises(ArtifactError, match="nested too deeply"):
        Artifact.from_bytes(data)


# ---------------------------------------------------------------------- dispatch records


@pytest.mark.parametrize("name", ["spills", "indirect", "chain3"])
def test_every_forged_dispatch_record_field_is_refused(name):
    """A dispatch record is the descriptor's dispatch op as data: a change of any
    of its fields (two mutants of every leaf and list) is refused."""
    data = compile_module(module_of(SOURCES[name])).bundle_bytes()
    document = json.loads(data[32:])
    rng = random.Random(SEED)
    tried = 0
    for index, module in enumerate(document["modules"]):
        for path, value in paths(module["dispatches"], ("modules", index, "dispatches")):
            changed = [new for new in mutants_of(rng, value) if new != value]
            for new in rng.sample(changed, min(2, len(changed))):
                tried += 1
                with pytest.raises(B.BundleError):
                    B.TargetModuleBundle.from_bytes(signed(replaced(document, path, new)))
    assert tried > 20
