"""Run many command lines of the vyre tools in one Python process, for lit suites.

Starting Python and importing xDSL costs about half a second per tool launch, which
dominates a FileCheck suite with dozens of error cases. A test file lists its cases as

```
// RUN: %python -m vyre_xdsl.testing.cli_batch %s %t | filecheck %s
// CASE missing: vyre-run %s --backend reference --input a=%t.a.npy
// CHECK-LABEL: == missing: exit 1
// CHECK-NEXT:  -- stderr
// CHECK-NEXT:  vyre-run: error: missing input for buffer 'b'
```

and this module runs every `CASE NAME: COMMAND` line, in order, through the tool's own
entry point (`vyre-opt`, `vyre-run`, `vyre-compile`, and xDSL's `xdsl-opt`) with the
given arguments. For each case it prints `== NAME: exit STATUS`, then what the tool
wrote to stdout, then (when it wrote any) a line `-- stderr` and what it wrote to
stderr. `< FILE` feeds a file to stdin,
`A | B` feeds A's stdout to B (stderr collects every stage's; the status is the last
failing stage's, as with `set -o pipefail`, lit's default), and `cat FILE` prints a file (to check what a tool wrote).

`--run 'COMMAND'` runs one command line and passes its stdout, stderr and status
through unchanged, so a RUN line can replace `vyre-opt %s | vyre-opt` by one process:

```
// RUN: %python -m vyre_xdsl.testing.cli_batch --run 'vyre-opt %s | vyre-opt' | filecheck %s
```

`--run` may be given several times. The commands run in order, and the first that
fails stops the rest and gives the status. A command may end with `> FILE` and
`2> FILE` (each a word of its own), which write its stdout and its stderr to files,
so one process can run a test file's pipelines and later RUN lines check each file:

```
// RUN: %python -m vyre_xdsl.testing.cli_batch --run "vyre-opt %s -p vyre-fuse > %t.fused" \
// RUN:   --run "vyre-opt %s -p 'vyre-tile{remarks=true}' > %t.tiled 2> %t.remarks"
// RUN: filecheck %s < %t.fused
```

In a command,
`%s`, `%S`, `%t` and `%examples` mean what they mean in the RUN line (the test file,
its folder, the temporary path given as the second argument, the examples folder).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
import traceback
from collections.abc import Callable, Sequence

_CASE = re.compile(r"^\s*//\s*CASE\s+(?P<name>[\w.-]+):\s*(?P<command>.+?)\s*$")


def _vyre_opt(argv: Sequence[str]) -> int:
    from vyre_xdsl.tools.vyre_opt import VyreOptMain, run_tool

    return run_tool(VyreOptMain, argv)


def _vyre_run(argv: Sequence[str]) -> int:
    from vyre_xdsl.tools.vyre_run import main

    return main(argv)


def _vyre_compile(argv: Sequence[str]) -> int:
    from vyre_xdsl.tools.vyre_compile import main

    return main(argv)


def _xdsl_opt(argv: Sequence[str]) -> int:
    """xDSL's own driver: it finds vyre's dialects and passes through the
    `xdsl.universe` entry point, as the `xdsl-opt` command does. An error it
    raises ends the command as it ends that process: a traceback and status 1."""
    from xdsl.xdsl_opt_main import xDSLOptMain

    try:
        xDSLOptMain(args=argv).run()
    except Exception:
        traceback.print_exc()
        return 1
    return 0


def _cat(argv: Sequence[str]) -> int:
    for path in argv:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                sys.stdout.write(f.read())
        except OSError as error:
            print(f"cat: {path}: {error.strerror}", file=sys.stderr)
            return 1
    return 0


TOOLS: dict[str, Callable[[Sequence[str]], int]] = {
    "vyre-opt": _vyre_opt,
    "vyre-run": _vyre_run,
    "vyre-compile": _vyre_compile,
    "xdsl-opt": _xdsl_opt,
    "cat": _cat,
}


def cases(text: str) -> list[tuple[str, str]]:
    """(name, command) of every `// CASE NAME: COMMAND` line of `text`."""
    found = [(m["name"], m["command"]) for m in map(_CASE.match, text.splitlines()) if m]
    names = [name for name, _ in found]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise SystemExit(f"cli_batch: case names used twice: {', '.join(duplicates)}")
    return found


def substituted(command: str, test_file: str, temp: str) -> str:
    folder = os.path.dirname(os.path.abspath(test_file))
    examples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
    table = {"%s": test_file, "%S": folder, "%t": temp, "%examples": os.path.normpath(examples)}
    return re.sub(r"%examples|%[sSt]", lambda m: table[m.group(0)], command)


class _Bytes(io.StringIO):
    """A text stream that also takes bytes through `.buffer` (like sys.stdout)."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer = self

    def write(self, data) -> int:  # type: ignore[override]
        if isinstance(data, bytes | bytearray):
            data = data.decode(errors="replace")
        return super().write(data)


def run_case(command: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of one command line run in this process."""
    words = shlex.split(command)
    stdin_data = b""
    if "<" in words:
        at = words.index("<")
        with open(words[at + 1], "rb") as f:
            stdin_data = f.read()
        words = words[:at] + words[at + 2 :]
    status, out, err = 0, "", ""
    for stage in _stages(words):
        stage_status, out, stage_err = _run_stage(stage, stdin_data)
        status, err = stage_status or status, err + stage_err
        stdin_data = out.encode()
    return status, out, err


def _stages(words: list[str]) -> list[list[str]]:
    stages: list[list[str]] = [[]]
    for word in words:
        if word == "|":
            stages.append([])
        else:
            stages[-1].append(word)
    if any(not stage for stage in stages):
        raise SystemExit("cli_batch: empty command in a pipeline")
    return stages


def _run_stage(words: list[str], stdin_data: bytes) -> tuple[int, str, str]:
    tool = TOOLS.get(words[0])
    if tool is None:
        raise SystemExit(f"cli_batch: unknown tool '{words[0]}' (known: {', '.join(TOOLS)})")
    output, errors = _Bytes(), _Bytes()
    stdin = io.TextIOWrapper(io.BytesIO(stdin_data), encoding="utf-8")
    with (
        _isolated_globals(),
        contextlib.redirect_stdout(output),
        contextlib.redirect_stderr(errors),
    ):
        saved_stdin, sys.stdin = sys.stdin, stdin
        try:
            status = tool(words[1:])
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 1
        finally:
            sys.stdin = saved_stdin
    return status, output.getvalue(), errors.getvalue()


@contextlib.contextmanager
def _isolated_globals():
    """Undo the process-wide switches a tool may flip (`--disable-verify` patches
    xDSL's attribute verification, `--syntax-highlight` colours diagnostics)."""
    from xdsl.ir import Attribute
    from xdsl.utils.diagnostic import Diagnostic

    post_init, colored = Attribute.__post_init__, Diagnostic.colored
    try:
        yield
    finally:
        Attribute.__post_init__, Diagnostic.colored = post_init, colored


def redirected(command: str) -> tuple[str, str | None, str | None]:
    """`command` without a trailing `> FILE` and `2> FILE`, and those two files."""
    words = shlex.split(command)
    files: dict[str, str] = {}
    while len(words) >= 2 and words[-2] in (">", "2>") and words[-2] not in files:
        files[words[-2]] = words[-1]
        words = words[:-2]
    return shlex.join(words), files.get(">"), files.get("2>")


def run_commands(commands: Sequence[str]) -> int:
    """Run each `--run` command in order; the first that fails stops the rest."""
    for command in commands:
        command, out_file, err_file = redirected(command)
        status, out, err = run_case(command)
        _write_to(out_file, out, sys.stdout)
        _write_to(err_file, err, sys.stderr)
        if status:
            return status
    return 0


def _write_to(path: str | None, text: str, stream) -> None:
    if path is None:
        stream.write(text)
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _run_commands(args: list[str]) -> list[str] | None:
    """The commands of `--run C1 --run C2 ...`, or None when `args` is not that."""
    if len(args) < 2 or len(args) % 2 or any(flag != "--run" for flag in args[::2]):
        return None
    return args[1::2]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    commands = _run_commands(args)
    if commands is not None:
        return run_commands(commands)
    if len(args) != 2:
        print(
            "usage: python -m vyre_xdsl.testing.cli_batch TEST_FILE TEMP_PATH\n"
            "       python -m vyre_xdsl.testing.cli_batch --run 'COMMAND [| COMMAND ...]"
            " [> FILE] [2> FILE]' [--run ...]",
            file=sys.stderr,
        )
        return 2
    test_file, temp = args
    with open(test_file, encoding="utf-8") as f:
        found = cases(f.read())
    if not found:
        print(f"cli_batch: no '// CASE NAME: COMMAND' lines in {test_file}", file=sys.stderr)
        return 2
    for name, command in found:
        status, out, err = run_case(substituted(command, test_file, temp))
        sys.stdout.write(f"== {name}: exit {status}\n")
        _write_block(out)
        if err:
            sys.stdout.write("-- stderr\n")
            _write_block(err)
    return 0


def _write_block(text: str) -> None:
    sys.stdout.write(text)
    if text and not text.endswith("\n"):
        sys.stdout.write("\n")


if __name__ == "__main__":
    from vyre_xdsl.tools.common import exit_without_collecting

    exit_without_collecting(main())
