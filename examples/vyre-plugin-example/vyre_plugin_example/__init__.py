"""An example out-of-tree pass package for vyre IR (see docs/writing-a-pass.md)."""
