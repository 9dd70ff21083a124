"""The lit configuration exposed to plugins: tools on PATH, substitutions, and
the caller's PYTHONPATH kept."""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

from vyre_xdsl.testing.lit_support import configure


def _config():
    return SimpleNamespace(environment={}, substitutions=[])


def test_configure_sets_tools_and_substitutions(tmp_path):
    config = _config()
    configure(config, name="plugin", test_source_root=str(tmp_path))
    assert config.name == "plugin"
    assert config.test_exec_root == os.path.join(str(tmp_path), ".lit-out")
    assert config.environment["PATH"].split(os.pathsep)[0] == os.path.dirname(sys.executable)
    assert os.path.exists(os.path.join(os.path.dirname(sys.executable), "vyre-opt"))
    assert dict(config.substitutions)["%python"] == sys.executable
    assert "VYRE_ROUNDTRIP" in dict(config.substitutions)


def test_configure_keeps_the_callers_pythonpath(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/from/caller")
    config = _config()
    configure(config, name="plugin", test_source_root=str(tmp_path), python_paths=["/extra"])
    assert config.environment["PYTHONPATH"] == os.pathsep.join(["/extra", "/from/caller"])
    monkeypatch.delenv("PYTHONPATH")
    config = _config()
    configure(config, name="plugin", test_source_root=str(tmp_path))
    assert "PYTHONPATH" not in config.environment


def test_tests_use_one_blas_thread_unless_the_caller_says(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    config = _config()
    configure(config, name="plugin", test_source_root=str(tmp_path))
    assert config.environment["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    config = _config()
    configure(config, name="plugin", test_source_root=str(tmp_path))
    assert config.environment["OPENBLAS_NUM_THREADS"] == "4"
