"""`vyre-opt`: xdsl-opt with the vyre dialects, passes and WGSL target.

```
vyre-opt --fuse --lower -t wgsl in.mlir -o out.wgsl
vyre-opt -p 'vyre-fuse{split-grid-sync=false},canonicalize,cse' in.mlir
cat in.mlir | vyre-opt -
```

Errors (parse, verify, pass) go to stderr as `file:line:col: error: message`
with exit status 1; no Python traceback, and the `-o` file is only written
(atomically) when everything succeeded.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
import dataclasses

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from vyre_xdsl.backends import get_all_targets
from vyre_xdsl.context import LocatedParser
from vyre_xdsl.diagnostics import (
    VyreDiagnostic,
    VyreError,
    clean_message,
    format_errors,
    verify_module,
)
from vyre_xdsl.dialects import get_all_dialects
from vyre_xdsl.passes import get_all_passes
from vyre_xdsl.tools.common import UsageError, format_parse_error, write_atomically


class VyreOptMain(xDSLOptMain):
    """The `vyre-opt` driver."""

    version_format = "vyre-opt built on xdsl version {xdsl_version}"
    _source: str = ""

    def register_all_dialects(self):
        super().register_all_dialects()
        for name, factory in get_all_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        super().register_all_targets()
        for name, factory in get_all_targets().items():
            self.available_targets[name] = factory

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--fuse", action="store_true", help="shortcut for -p vyre-fuse (runs first)"
        )
        arg_parser.add_argument(
            "--lower", action="store_true", help="shortcut for -p vyre-lower (after --fuse)"
        )

    def setup_pipeline(self):
        shortcuts = [name for flag, name in ((self.args.fuse, "vyre-fuse"), (self.args.lower, "vyre-lower")) if flag]
        if shortcuts:
            rest = [self.args.passes] if self.args.passes else []
            self.args.passes = ",".join(shortcuts + rest)
        unknown = [
            name
            for name in _pass_names(self.args.passes)
            if name not in self.available_passes
        ]
        if unknown:
            raise UsageError(
                f"unknown pass {', '.join(unknown)}; available: {', '.join(sorted(self.available_passes))}"
            )
        super().setup_pipeline()
        callback = self.pipeline.callback

        def verified(previous, module, next_pass):
            verify_module(module)
            if callback is not None:
                callback(previous, module, next_pass)

        self.pipeline = PassPipeline(self.pipeline.passes, verified)

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        if self.args.input_file in (None, "-"):
            return sys.stdin.buffer, "mlir"
        try:
            f = open(self.args.input_file, "rb")
        except OSError as error:
            raise UsageError(f"cannot open {self.args.input_file}: {error.strerror}") from None
        return f, os.path.splitext(self.args.input_file)[1].lstrip(".") or "mlir"

    def get_input_name(self):
        return "<stdin>" if self.args.input_file in (None, "-") else self.args.input_file

    def register_all_frontends(self):
        super().register_all_frontends()

        def parse_mlir(stream: IO[bytes]) -> ModuleOp:
            data = stream.read()
            # the text for error excerpts; the parser reports invalid UTF-8 itself
            self._source = data.decode("utf-8", errors="replace")
            parser = LocatedParser(
                self.ctx, data, self.get_input_name(), line_offset=self._line_offset
            )
            return parser.parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

    _line_offset = 0

    def run(self) -> None:
        chunks, file_extension = self.prepare_input()
        output = io.StringIO()
        failed = False
        for index, (chunk, offset) in enumerate(chunks):
            if index > 0:
                output.write("// -----\n")
            self._line_offset = offset
            try:
                module = self.parse_chunk(chunk, file_extension, offset)
                if module is None:
                    continue
                verify_module(module)
                self.apply_passes(module)
                output.write(self.output_resulting_program(module))
            except ParseError as error:
                error.span = dataclasses.replace(error.span, line_offset=offset)
                failed |= self._report(format_parse_error(error))
            except VyreDiagnostic as error:
                failed |= self._report(format_errors(error.errors, self._full_source_for(offset)))
            except DiagnosticException as error:
                failed |= self._report(f"error: {clean_message(error)}")
            finally:
                chunk.close()
        if failed:
            raise SystemExit(1)
        self._emit(output.getvalue())

    def _full_source_for(self, offset: int) -> str:
        """The source text with line numbers matching the whole input file."""
        return "\n" * offset + self._source

    def _report(self, text: str) -> bool:
        """Print a diagnostic; return whether the run has failed."""
        if self.args.verify_diagnostics or self.args.parsing_diagnostics:
            print(text)
            return False
        print(text, file=sys.stderr)
        return True

    def _emit(self, text: str) -> None:
        if self.args.output_file is None:
            sys.stdout.write(text)
            return
        write_atomically(self.args.output_file, text)


def _pass_names(spec: str) -> list[str]:
    names: list[str] = []
    depth = 0
    current = ""
    for ch in spec:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            names.append(current.strip())
            current = ""
            continue
        if depth == 0 and ch not in "{}":
            current += ch
    if current.strip():
        names.append(current.strip())
    return names


def run_tool(main: type[VyreOptMain], argv: Sequence[str] | None = None) -> int:
    """Run a driver, turning every error into a message and an exit status."""
    try:
        main(args=argv).run()
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 1
    except BrokenPipeError:  # e.g. `vyre-opt ... | head`: the reader went away
        sys.stdout = open(os.devnull, "w")
        return 0
    except (VyreError, ArgSpecParseError, ValueError) as error:
        print(f"{os.path.basename(sys.argv[0] or 'vyre-opt')}: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # a bug: say so, without a traceback unless asked
        if os.environ.get("VYRE_DEBUG"):
            raise
        print(
            f"vyre-opt: internal error: {type(error).__name__}: {error} "
            "(set VYRE_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 2
    return 0


def main() -> None:
    sys.exit(run_tool(VyreOptMain))


if __name__ == "__main__":
    main()
