"""Testing helpers that ship with vyre_xdsl (no test extra needed to import them).

- `vyre_xdsl.testing.generators`: random well-typed vyre modules (`random_module(seed)`;
  `modules()` is a hypothesis strategy and needs hypothesis only when called).
- `vyre_xdsl.testing.compare`: outcomes of a run and their differences, with the f32 tolerances.
- `vyre_xdsl.testing.f32_domain`: the f32 value classes the generator tracks.
- `vyre_xdsl.testing.cli_batch`: many tool command lines in one process, for lit suites.
"""
