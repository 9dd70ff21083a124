"""Lowering from the `vyre` dialect to the `kernel` dialect (the `vyre-lower` pass).

- `lower.lower_program(program, profile)`: one program -> its descriptors (split,
  privatized, each part lowered by `lower.lower_part`);
- `split`: grid_sync splitting (`vyre-split-grid-sync`); `privatize`: atomic
  privatization (`vyre-privatize-atomics`); `geometry`: workgroup size and grid;
- `descriptor_id`: canonical program bytes and descriptor ids (target limits: `vyre_xdsl.target_profile`).
"""

from vyre_xdsl.target_profile import DEFAULT_PROFILE, TargetProfile

__all__ = ["DEFAULT_PROFILE", "TargetProfile"]
