"""Output targets (`-t NAME`), registered lazily."""

from collections.abc import Callable
from importlib import import_module
from importlib.util import find_spec

from xdsl.utils.target import Target

TARGETS: dict[str, tuple[str, str]] = {
    "wgsl": ("vyre_xdsl.backends.wgsl.target", "WGSLTarget"),
}


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    return {
        name: (lambda m=module, c=cls: getattr(import_module(m), c))
        for name, (module, cls) in TARGETS.items()
        if find_spec(module) is not None
    }
