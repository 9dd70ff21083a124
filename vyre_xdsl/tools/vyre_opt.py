"""`vyre-opt`: xdsl-opt with the vyre dialects, passes and WGSL target.

```
vyre-opt --fuse --lower -t wgsl in.mlir -o out.wgsl
vyre-opt -p 'vyre-fuse{split-grid-sync=false},canonicalize,cse' in.mlir
vyre-opt --split-input-file --verify-diagnostics invalid.mlir   # checks expected-error annotations
cat in.mlir | vyre-opt -
```

Errors (parse, verify, pass) go to stderr as `file:line:col: error: message`
with exit status 1; no Python traceback, and the `-o` file is only written
(atomically) when everything succeeded.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import sys
import time
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.printer import Printer
from xdsl.universe import Universe
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from vyre_xdsl.backends import get_all_targets
from vyre_xdsl.context import LocatedParser
from vyre_xdsl.conversion import convert_if_standard
from vyre_xdsl.diagnostics import (
    Located,
    VyreDiagnostic,
    VyreError,
    clean_message,
    format_errors,
    verified,
    verify_after_pass,
    verify_module,
)
from vyre_xdsl.dialects import get_all_dialects
from vyre_xdsl.passes import get_all_passes
from vyre_xdsl.tools.common import (
    UsageError,
    exit_without_collecting,
    fewer_collections,
    format_parse_error,
    say_error,
    silence_closed_streams,
    write_atomically,
)
from vyre_xdsl.tools.pipeline import build_pipeline, describe_passes
from vyre_xdsl.tools.verify_diagnostics import (
    AnnotationError,
    Emitted,
    check_diagnostics,
    expected_diagnostics,
    has_annotations,
)

SEPARATOR = "// -----\n"


@dataclasses.dataclass(frozen=True)
class Reported:
    """A diagnosed chunk: the text shown to users and the diagnostics it holds."""

    text: str
    emitted: tuple[Emitted, ...]


class VyreOptMain(xDSLOptMain):
    """The `vyre-opt` driver."""

    version_format = "vyre-opt built on xdsl version {xdsl_version}"
    prog = "vyre-opt"
    description = (
        "vyre-opt: parse, verify, transform and print vyre IR (xdsl-opt with the vyre "
        "dialects, passes and the WGSL target)"
    )
    _source: str = ""
    _line_offset = 0
    _universe: Universe | None = None
    failed = False

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description=self.description, args=args)

    # ------------------------------------------------------------------ registration

    def universe(self) -> Universe:
        """Every installed universe, merged without xDSL's refusal of a name
        defined twice (a plugin's pass named like a built-in is warned about)."""
        if self._universe is None:
            from vyre_xdsl.universe import PREFER_PLUGINS_VARIABLE, merged_universe

            prefer = os.environ.get(PREFER_PLUGINS_VARIABLE, "") not in ("", "0")
            self._universe = merged_universe(prefer, self._warn)
        return self._universe

    def _warn(self, message: str) -> None:
        say_error(f"{self.prog}: warning: {message}", 0)

    def register_all_dialects(self):
        for name, factory in self.universe().all_dialects.items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)
        for name, factory in get_all_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        for name, factory in self.universe().all_passes.items():
            self.register_pass(name, factory)
        for name, factory in get_all_passes().items():
            if name not in self.available_passes:
                self.register_pass(name, factory)

    def register_all_targets(self):
        for name, factory in self.universe().all_targets.items():  # with vyre-wgsl
            self.available_targets.setdefault(name, factory)
        for name, factory in get_all_targets().items():
            self.available_targets[name] = (
                factory  # ours is `wgsl` here; it defers gpu.module to xDSL's
            )

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.prog = self.prog
        arg_parser.error = self._usage_error  # status 1, like mlir-opt (argparse uses 2)
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        _describe_passes_in_help(arg_parser, self.available_passes)
        _set_help(
            arg_parser,
            "passes",
            "pass pipeline, e.g. 'vyre-fuse,canonicalize'; the passes are listed below",
        )
        _set_help(
            arg_parser,
            "target",
            "output: mlir (default), wgsl (vyre.program/kernel.descriptor ops, or xDSL gpu.module "
            f"ops), vyre-wgsl (vyre only); all targets: {', '.join(self.available_targets)}",
        )
        _set_help(
            arg_parser, "disable_verify", "do not verify the IR after parsing and after each pass"
        )
        _set_help(
            arg_parser,
            "verify_diagnostics",
            "check the input's 'expected-error {{...}}' annotations (MLIR's -verify-diagnostics): "
            "missing, unexpected or mismatched diagnostics fail with status 1; without "
            "annotations, print the diagnostics to stdout with status 0 (xdsl-opt's behaviour)",
        )
        _set_help(arg_parser, "time_passes", "print each pass's run time to stderr")
        arg_parser.add_argument(
            "--fuse", action="store_true", help="shortcut for -p vyre-fuse (runs first)"
        )
        arg_parser.add_argument(
            "--lower", action="store_true", help="shortcut for -p vyre-lower (after --fuse)"
        )
        arg_parser.add_argument(
            "--mlir-print-ir-before",
            metavar="PASSES",
            default="",
            help="print the IR to stderr before each of these passes (comma-separated names)",
        )
        arg_parser.add_argument(
            "--mlir-print-ir-after",
            metavar="PASSES",
            default="",
            help="print the IR to stderr after each of these passes (comma-separated names)",
        )
        arg_parser.add_argument(
            "--mlir-print-ir-before-all",
            action="store_true",
            help="print the IR to stderr before every pass",
        )
        arg_parser.add_argument(
            "--mlir-print-ir-after-all",
            action="store_true",
            help="print the IR to stderr after every pass",
        )
        arg_parser.add_argument(
            "--cache-info",
            action="store_true",
            help="print where the persistent compile cache is, its entries and bytes, and exit",
        )
        arg_parser.add_argument(
            "--clear-cache",
            action="store_true",
            help="remove every entry of the persistent compile cache, and exit",
        )
        arg_parser.add_argument(
            "--mlir-print-ir-after-failure",
            action="store_true",
            help="print the IR to stderr after a pass that failed (or left IR that fails to verify)",
        )

    def _usage_error(self, message: str):
        raise UsageError(f"{message} ({self.prog} --help lists the options)")

    # ------------------------------------------------------------------ pipeline

    def setup_pipeline(self):
        shortcuts = [
            name
            for flag, name in ((self.args.fuse, "vyre-fuse"), (self.args.lower, "vyre-lower"))
            if flag
        ]
        if shortcuts:
            rest = [self.args.passes] if self.args.passes else []
            self.args.passes = ",".join(shortcuts + rest)
        built = build_pipeline(self.args.passes, self.available_passes)
        passes = []
        if built:  # the named pipelines' module imports every pass they compose
            from vyre_xdsl.passes.pipeline import end_steps, expand

            passes = expand(built)
        for flag in ("mlir_print_ir_before", "mlir_print_ir_after"):
            names = {n.strip() for n in getattr(self.args, flag).split(",") if n.strip()}
            unknown = sorted(names - set(self.available_passes))
            if unknown:
                option = "--" + flag.replace("_", "-")
                raise UsageError(f"{option} names unknown pass '{unknown[0]}'")
            if built:  # a pipeline's IR before it is its first step's, after it its last step's
                names |= end_steps(built, names, first=flag == "mlir_print_ir_before")
            setattr(self, f"_{flag}", names)
        self.pipeline = PassPipeline(tuple(passes))

    def apply_passes(self, prog: ModuleOp):
        """Run the passes in order: verify after each (naming the pass), time them, dump
        the IR where `--mlir-print-ir-*` asks."""
        if self.args.fuse or self.args.lower:  # standard MLIR enters through convert-to-vyre
            convert_if_standard(prog)
        if not self.pipeline.passes:
            return
        from vyre_xdsl.passes.pipeline import leaves_unchanged

        for pass_ in self.pipeline.passes:
            if self.args.mlir_print_ir_before_all or pass_.name in self._mlir_print_ir_before:
                self._dump(f"IR Dump Before {pass_.name}", prog)
            start = time.perf_counter()
            try:
                unchanged = leaves_unchanged(pass_, prog)
                if not unchanged:
                    pass_.apply(self.ctx, prog)
                if not (self.args.disable_verify or unchanged):
                    verify_after_pass(prog, pass_.name)
            except Exception:
                if self.args.mlir_print_ir_after_failure:
                    self._dump(f"IR Dump After {pass_.name} Failed", prog)
                raise
            if self.args.time_passes:
                print(
                    f"Pass {pass_.name} took {time.perf_counter() - start:.6f} seconds",
                    file=sys.stderr,
                )
            if self.args.mlir_print_ir_after_all or pass_.name in self._mlir_print_ir_after:
                self._dump(f"IR Dump After {pass_.name}", prog)
            if self.args.print_between_passes and pass_ is not self.pipeline.passes[-1]:
                print(f"IR after {pass_.name}:")
                Printer(stream=sys.stdout).print_op(prog)
                print("\n\n\n")

    def _dump(self, title: str, module: ModuleOp) -> None:
        sys.stderr.write(f"// -----// {title} //----- //\n")
        Printer(stream=sys.stderr, print_generic_format=self.args.print_op_generic).print_op(module)
        sys.stderr.write("\n")

    # ------------------------------------------------------------------ input

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

    # ------------------------------------------------------------------ running

    def run(self) -> None:
        with fewer_collections():
            self._run()

    def _run(self) -> None:
        if self.args.cache_info or self.args.clear_cache:
            self._emit(compile_cache_report(self.args.clear_cache))
            return
        chunks, file_extension = self.prepare_input()
        texts = [(chunk.read(), offset) for chunk, offset in chunks]
        for chunk, _ in chunks:
            chunk.close()
        if self.args.verify_diagnostics and any(
            has_annotations(data.decode(errors="replace")) for data, _ in texts
        ):
            self._run_checking(texts, file_extension)
            return
        pieces: list[str] = []
        for index, (data, offset) in enumerate(texts):
            if index > 0:
                pieces.append(SEPARATOR)
            result = self._process(data, file_extension, offset)
            if not isinstance(result, Reported):
                pieces.append(result)
            elif self.args.verify_diagnostics or self.args.parsing_diagnostics:
                self._show_diagnostic(result.text, pieces)
            else:
                self._fail(result.text)
        if self.failed:
            raise SystemExit(1)
        self._emit("".join(pieces))

    def _run_checking(self, texts: list[tuple[bytes, int]], file_extension: str) -> None:
        """MLIR's -verify-diagnostics: each chunk's `expected-*` annotations against the
        diagnostics it produces. Any problem fails the run; otherwise the output holds the
        chunks that succeeded."""
        pieces: list[str] = []
        for index, (data, offset) in enumerate(texts):
            try:
                expected = expected_diagnostics(data.decode(errors="replace"), offset)
            except AnnotationError as error:
                raise UsageError(f"{self.get_input_name()}: {error}") from None
            result = self._process(data, file_extension, offset)
            emitted = result.emitted if isinstance(result, Reported) else ()
            for problem in check_diagnostics(expected, emitted, self.get_input_name()):
                self._fail(problem)
            if index > 0:
                pieces.append(SEPARATOR)
            if not isinstance(result, Reported):
                pieces.append(result)
        if self.failed:
            raise SystemExit(1)
        self._emit("".join(pieces))

    def _process(self, data: bytes, file_extension: str, offset: int) -> str | Reported:
        """The output for one chunk, or what went wrong with it."""
        self._line_offset = offset
        try:
            module = self.parse_chunk(io.BytesIO(data), file_extension, offset)
            if module is None:
                return ""
            if not self.args.disable_verify:
                verify_module(module)
            self.apply_passes(module)
            if self.args.disable_verify:
                return self.output_resulting_program(module)
            with verified(module):  # after parsing and after each pass
                return self.output_resulting_program(module)
        except ParseError as error:
            error.span = dataclasses.replace(error.span, line_offset=offset)
            where = error.span.get_location()
            return Reported(
                format_parse_error(error), (Emitted("error", where.line, error.msg, where.col),)
            )
        except VyreDiagnostic as error:
            return Reported(
                format_errors(error.errors, self._full_source_for(offset)),
                tuple(_emitted(op, message) for op, message in error.errors),
            )
        except DiagnosticException as error:
            message = clean_message(error)
            return Reported(f"error: {message}", (Emitted("error", None, message),))

    def _full_source_for(self, offset: int) -> str:
        """The source text with line numbers matching the whole input file."""
        return "\n" * offset + self._source

    def _show_diagnostic(self, text: str, pieces: list[str]) -> None:
        """xdsl-opt's --verify-diagnostics: diagnostics on stdout, in chunk order."""
        if self.args.output_file is None:
            pieces.append(text + "\n")
        else:
            print(text)

    def _fail(self, text: str) -> None:
        self.failed = True
        print(text, file=sys.stderr)

    def _emit(self, text: str) -> None:
        if self.args.output_file is None:
            sys.stdout.write(text)
            return
        write_atomically(self.args.output_file, text)


def compile_cache_report(clear: bool) -> str:
    """`--cache-info` / `--clear-cache`: what the persistent compile cache holds."""
    from vyre_xdsl.runtime.disk_cache import CACHE_ENV, default_cache

    store = default_cache()
    if store is None:
        return f"compile cache: off ({CACHE_ENV}=off)\n"
    if clear:
        return f"compile cache: {store.directory}: removed {store.clear()} entries\n"
    info = store.info()
    return (
        f"compile cache\ndirectory: {info.directory}\nentries: {info.entries}\n"
        f"bytes: {info.bytes} (at most {info.max_bytes})\n"
    )


def _emitted(op, message: str) -> Emitted:
    where = Located(op, message).location()
    if where is None:
        return Emitted("error", None, message)
    return Emitted("error", where[1], message, where[2])


def _set_help(parser: argparse.ArgumentParser, dest: str, text: str) -> None:
    for action in parser._actions:
        if action.dest == dest:
            action.help = text


def _describe_passes_in_help(parser: argparse.ArgumentParser, available) -> None:
    """List the passes at the end of `--help`; built only when help is shown, since it
    imports every pass."""
    format_help = parser.format_help

    def format_help_with_passes() -> str:
        parser.epilog = describe_passes(available, first=get_all_passes())
        return format_help()

    parser.format_help = format_help_with_passes


def run_tool(main: type[VyreOptMain], argv: Sequence[str] | None = None) -> int:
    """Run a driver, turning every error into a message and an exit status."""
    tool: VyreOptMain | None = None
    try:
        tool = main(args=argv)
        tool.run()
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 1
    except BrokenPipeError:  # e.g. `vyre-opt ... | head`: the reader went away
        silence_closed_streams()
        return 1 if tool is not None and tool.failed else 0
    except (VyreError, ArgSpecParseError, ValueError) as error:
        return say_error(f"{main.prog}: error: {error}", 1)
    except Exception as error:  # a bug: say so, without a traceback unless asked
        if os.environ.get("VYRE_DEBUG"):
            raise
        return say_error(
            f"{main.prog}: internal error: {type(error).__name__}: {error} "
            "(set VYRE_DEBUG=1 for a traceback)",
            2,
        )
    return 0


def main() -> None:
    exit_without_collecting(run_tool(VyreOptMain))


if __name__ == "__main__":
    main()
