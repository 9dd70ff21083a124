"""MLIR's -verify-diagnostics checker (vyre_xdsl.tools.verify_diagnostics): annotation
parsing, and missing / unexpected / mismatched diagnostics. Expected values are written
from MLIR's documented rules (docs/Diagnostics.md), not taken from the code."""

import pytest

from vyre_xdsl.tools.verify_diagnostics import (
    AnnotationError,
    Emitted,
    Expected,
    check_diagnostics,
    expected_diagnostics,
    has_annotations,
)

TEXT = """\
op a
op b // expected-error {{same line}}
// expected-error @+2 {{two below}}
// expected-warning@-1 {{one above}}
op c
op d
// expected-note @above {{above}}
// expected-remark @below {{below}}
// expected-error-re@below {{x{{[0-9]+}}y}}

op e
// expected-error @unknown {{nowhere}}
"""


def test_annotations_and_their_lines():
    got = [(e.kind, e.line, e.message, e.regex) for e in expected_diagnostics(TEXT)]
    assert got == [
        ("error", 2, "same line", False),
        ("error", 5, "two below", False),
        ("warning", 3, "one above", False),
        ("note", 6, "above", False),
        # @below: the next line that is not an annotation (a blank one, as in MLIR)
        ("remark", 10, "below", False),
        ("error", 10, "x{{[0-9]+}}y", True),
        ("error", None, "nowhere", False),
    ]


def test_line_offset_of_a_split_chunk():
    assert [
        e.line for e in expected_diagnostics("x // expected-error {{m}}\n", line_offset=40)
    ] == [41]


def test_has_annotations_only_in_comments():
    assert has_annotations("// expected-error {{x}}")
    assert not has_annotations("the word expected-error in prose")
    assert not has_annotations("vyre.program @p")


@pytest.mark.parametrize(
    "text",
    [
        "// expected-error missing braces",
        "// expected-error @above {{nothing above}}",
        "x\n// expected-error @below {{m}}",
    ],
)
def test_malformed_annotations_are_errors(text):
    with pytest.raises(AnnotationError, match="line"):
        expected_diagnostics(text)


def test_everything_matched():
    expected = [Expected("error", 3, "read_only", 3), Expected("error", None, "nowhere", 9)]
    emitted = [
        Emitted("error", 3, "store to read_only buffer @x", 3),
        Emitted("error", None, "it is nowhere"),
    ]
    assert check_diagnostics(expected, emitted, "f.mlir") == []


def test_missing_unexpected_mismatched_kind():
    expected = [
        Expected("error", 5, "never comes", 4),
        Expected("error", 7, "write_only", 6),
        Expected("warning", 9, "read_only", 9),
    ]
    emitted = [
        Emitted("error", 7, "store to read_only buffer @x", 3),
        Emitted("error", 9, "store to read_only buffer @y", 3),
        Emitted("error", 12, "stray", 1),
    ]
    assert check_diagnostics(expected, emitted, "f.mlir") == [
        'f.mlir:7:3: error: mismatched error: expected "write_only", got error "store to read_only buffer @x"',
        "f.mlir:9:3: error: 'error' diagnostic emitted when expecting a 'warning'",
        "f.mlir:12:1: error: unexpected error: stray",
        'f.mlir:4: error: expected error "never comes" was not produced at line 5',
    ]


def test_regex_message():
    (expected,) = expected_diagnostics("a // expected-error-re {{op {{[a-z]+}}.x (is}}\n")
    assert check_diagnostics([expected], [Emitted("error", 1, "op vyre.x (is wrong")], "f") == []
    assert check_diagnostics([expected], [Emitted("error", 1, "op 42.x (is")], "f") != []


def test_each_expectation_matches_one_diagnostic():
    expected = [Expected("error", 2, "x", 2)]
    emitted = [Emitted("error", 2, "x"), Emitted("error", 2, "x")]
    assert check_diagnostics(expected, emitted, "f") == ["f:2: error: unexpected error: x"]
