"""Output targets (`-t NAME`), registered lazily."""

from collections.abc import Callable
from importlib import import_module
from importlib.util import find_spec

from xdsl.utils.target import Target

TARGETS: dict[str, tuple[str, str]] = {
    "wgsl": ("vyre_xdsl.backends.wgsl.target", "WGSLTarget"),
}


def _factory(module: str, cls: str) -> Callable[[], type[Target]]:
    # zero-parameter factory: xdsl-opt treats a factory with parameters as a
    # legacy `(module, output)` printer
    return lambda: getattr(import_module(module), cls)


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    return {
        name: _factory(module, cls)
        for name, (module, cls) in TARGETS.items()
        # the package, not the module: finding a module imports its package
        if find_spec(module.rsplit(".", 1)[0]) is not None
    }
