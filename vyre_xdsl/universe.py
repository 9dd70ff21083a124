"""Makes the vyre dialects, passes and WGSL target visible to stock `xdsl-opt`.

Registered in pyproject.toml under the `xdsl.universe` entry-point group. The
WGSL target is exported as `vyre-wgsl` because xDSL ships a toy `wgsl` target
of its own; `vyre-opt -t wgsl` means ours.
"""

from collections.abc import Callable

from xdsl.universe import Universe

from vyre_xdsl.backends import get_all_targets
from vyre_xdsl.dialects import get_all_dialects
from vyre_xdsl.passes import get_all_passes


def _universe_target(name: str):
    # the target class must carry the name it is registered under (`from_spec`
    # checks it), so the universe gets the `vyre-` subclass
    def factory():
        from vyre_xdsl.backends.wgsl.target import VyreWGSLTarget

        assert name == "wgsl"
        return VyreWGSLTarget

    return factory


VYRE_UNIVERSE = Universe(
    all_dialects=get_all_dialects(),
    all_passes=get_all_passes(),
    all_targets={f"vyre-{name}": _universe_target(name) for name in get_all_targets()},
)


#: set to 1 to let a plugin's pass, dialect or target replace a built-in one of the same name
PREFER_PLUGINS_VARIABLE = "VYRE_PREFER_PLUGINS"

#: the universes that ship with vyre_xdsl, by entry-point name
BUILTIN_UNIVERSES = ("xdsl", "vyre_xdsl")

_KINDS = {"passes": "pass", "dialects": "dialect", "targets": "target"}


def merged_universe(prefer_plugins: bool, warn: Callable[[str], None]) -> Universe:
    """xDSL's and vyre_xdsl's passes, dialects and targets, and those of every
    installed plugin (the `xdsl.universe` entry points), merged by name.

    Unlike xDSL's `Universe.get_multiverse`, a name defined twice is not an
    error that disables every pass: the built-in definition is kept and `warn`
    says so, unless `prefer_plugins`, when the plugin's replaces it. Between two
    plugins the first by entry-point name wins. A plugin that fails to load is
    left out, with a warning."""
    from xdsl.universe import XDSL_UNIVERSE

    builtin = [("xdsl", XDSL_UNIVERSE), ("vyre_xdsl", VYRE_UNIVERSE)]
    merged = Universe()
    owners: dict[tuple[str, str], str] = {}
    for name, universe in builtin + installed_plugins(warn, {id(u) for _, u in builtin}):
        for kind in _KINDS:
            table = getattr(merged, f"all_{kind}")
            for key, factory in getattr(universe, f"all_{kind}").items():
                owner = owners.get((kind, key))
                if owner is not None:
                    replace = prefer_plugins and owner in BUILTIN_UNIVERSES
                    warn(_collision(_KINDS[kind], key, name, owner, name if replace else owner))
                    if not replace:
                        continue
                table[key] = factory
                owners[(kind, key)] = name
    return merged


def installed_plugins(warn: Callable[[str], None], skip: set[int]) -> list[tuple[str, Universe]]:
    """(entry-point name, universe) of every installed plugin, sorted by name;
    the universes whose id is in `skip` (the built-in ones) are left out."""
    from importlib.metadata import entry_points

    found: list[tuple[str, Universe]] = []
    for point in sorted(entry_points(group="xdsl.universe"), key=lambda p: p.name):
        try:
            universe = point.load()
        except Exception as error:  # a broken plugin must not take every pass down
            warn(f"cannot load plugin '{point.name}' ({type(error).__name__}: {error}); skipped")
            continue
        if not isinstance(universe, Universe):
            warn(f"plugin '{point.name}' is not an xdsl Universe ({point.value}); skipped")
            continue
        if id(universe) not in skip:
            found.append((point.name, universe))
    return found


def _collision(what: str, key: str, name: str, owner: str, kept: str) -> str:
    message = f"plugin '{name}' defines {what} '{key}', which '{owner}' defines too; using the one of '{kept}'"
    if kept in BUILTIN_UNIVERSES:
        message += f" (set {PREFER_PLUGINS_VARIABLE}=1 to use the plugin's)"
    return message
