"""Packaging: license files matching the declared license, py.typed, project URLs and
classifiers, every package found by setuptools (vyre_xdsl.testing included, importable
without the test extra), and `make clean` removing the test outputs."""

import os
import shutil
import subprocess
import sys
import tomllib

import setuptools

from ..support import ROOT

PROJECT = tomllib.load(open(os.path.join(ROOT, "pyproject.toml"), "rb"))


def test_license_files_match_the_declared_license():
    project = PROJECT["project"]
    assert project["license"] == "MIT OR Apache-2.0"
    for name in project["license-files"]:
        assert os.path.isfile(os.path.join(ROOT, name)), name
    mit = open(os.path.join(ROOT, "LICENSE-MIT")).read()
    apache = open(os.path.join(ROOT, "LICENSE-APACHE")).read()
    assert "Permission is hereby granted, free of charge" in mit
    assert "Apache License" in apache and "Version 2.0, January 2004" in apache
    assert "END OF TERMS AND CONDITIONS" in apache


def test_metadata_urls_and_classifiers():
    project = PROJECT["project"]
    urls = project["urls"]
    assert urls and all(url.startswith("https://") for url in urls.values())
    assert "Typing :: Typed" in project["classifiers"]
    assert not any(
        c.startswith("License ::") for c in project["classifiers"]
    )  # PEP 639: the expression says it
    assert os.path.isfile(os.path.join(ROOT, "vyre_xdsl", "py.typed"))
    assert "py.typed" in PROJECT["tool"]["setuptools"]["package-data"]["vyre_xdsl"]


def test_every_package_folder_is_a_package():
    found = set(setuptools.find_packages(ROOT, include=["vyre_xdsl*"]))
    folders = {
        os.path.relpath(d, ROOT).replace(os.sep, ".")
        for d, _, files in os.walk(os.path.join(ROOT, "vyre_xdsl"))
        if "__pycache__" not in d and any(f.endswith(".py") for f in files)
    }
    assert folders - found == set()
    assert "vyre_xdsl.testing" in found


def test_testing_helpers_import_without_the_test_extra():
    # hypothesis (test extra) blocked: the generators and comparisons still work
    code = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "from vyre_xdsl.testing.generators import random_module\n"
        "from vyre_xdsl.testing import compare, cli_batch\n"
        "case = random_module(3)\n"
        "print(type(case).__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_make_clean_removes_test_outputs(tmp_path):
    shutil.copy(os.path.join(ROOT, "Makefile"), tmp_path / "Makefile")
    for name in ("venv", ".lit-out/x", ".hypothesis/examples", "vyre_xdsl.egg-info"):
        (tmp_path / name).mkdir(parents=True)
    subprocess.run(["make", "-s", "clean", "VENV=venv"], cwd=tmp_path, check=True)
    assert sorted(os.listdir(tmp_path)) == ["Makefile"]


def test_ruff_is_configured_once():
    """`make test`, pre-commit and the test extra use one pinned ruff and one configuration."""
    pinned = [
        d for d in PROJECT["project"]["optional-dependencies"]["test"] if d.startswith("ruff")
    ]
    assert len(pinned) == 1 and "==" in pinned[0]
    version = pinned[0].split("==")[1]
    pre_commit = open(os.path.join(ROOT, ".pre-commit-config.yaml")).read()
    assert "astral-sh/ruff-pre-commit" in pre_commit and f"rev: v{version}" in pre_commit
    lint = PROJECT["tool"]["ruff"]["lint"]
    assert {"F", "I"} <= set(lint["select"])


def _imported_modules(path: str) -> list[tuple[str, int]]:
    import ast

    tree = ast.parse(open(path).read())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
    return found


def test_only_the_tools_and_the_test_helpers_import_the_tools():
    """Imports point down the layers: nothing below the command-line tools (the
    compiler, the runtime, the bundles) imports them, not even inside a function."""
    package = os.path.join(ROOT, "vyre_xdsl")
    upward = []
    for folder, _, files in os.walk(package):
        part = os.path.relpath(folder, package).split(os.sep)[0]
        if part in ("tools", "testing"):
            continue
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            upward += [
                f"{os.path.relpath(path, ROOT)}:{line}: {module}"
                for module, line in _imported_modules(path)
                if module == "vyre_xdsl.tools" or module.startswith("vyre_xdsl.tools.")
            ]
    assert upward == [], upward
