"""Shared pytest setup: the tests never read or write the user's compile cache, and
wgpu uses Vulkan (lavapipe on a machine without a GPU) unless told otherwise."""

import os

# Off for every test (and the tools they start); tests of the cache set their own directory.
os.environ["VYRE_CACHE_DIR"] = "off"
os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")
