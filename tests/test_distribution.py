"""The distribution is ``lucid-autograd``: what pip installs, and what every install hint says.

On PyPI, ``lucid`` is an unrelated project, so a hint such as ``pip install 'lucid[mlx]'``
installs a stranger's package. The import name stays ``lucid``; the distribution, and every
message, page and script that tells a user what to install, says ``lucid-autograd`` (or
installs from the checkout, ``pip install '.[mlx]'``).
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest

import lucid

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as pip vendors it
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
NAME = "lucid-autograd"

# What is scanned: the package (its error messages and docstrings), the docs' sources, the
# README, the examples, the scripts, the packaging, and the suite's own skip reasons.
SCANNED = ["lucid", "docs", "README.md", "examples", "tools", "benchmarks", ".ci", "pyproject.toml",
           "tests/conftest.py"]
# build outputs and generated pages under those (git-ignored), which a build makes from the sources
NOT_SOURCES = {"__pycache__", "_build", "_generated", "api", "gallery"}

PIP_INSTALL = re.compile(r"\bpip3?\s+install\b([^\n`]*)")
REQUIREMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# ``lucid[extra]`` anywhere, quoted or not (a pyproject extra, or a hint without "pip install")
LUCID_WITH_EXTRAS = re.compile(r"(?<![\w.\-/])lucid\[")


def _canonical(name: str) -> str:
    """A distribution name as pip compares names (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installs_lucid(line: str) -> bool:
    """Whether ``line`` tells a user to install the distribution called ``lucid``.

    Each ``pip install ...`` (up to the end of the line, or a closing backtick) is split into
    words: options (``-U``, ``--quiet``) are passed over, quotes and punctuation stripped, and a
    word whose requirement name (before ``[``, ``==``, ``>=``, ...) is ``lucid`` counts;
    ``lucid-autograd`` and ``.[mlx]`` do not. So does ``lucid[...]`` written anywhere.
    """
    if LUCID_WITH_EXTRAS.search(line):
        return True
    for match in PIP_INSTALL.finditer(line):
        for word in match.group(1).split():
            name = REQUIREMENT_NAME.match(word.strip("'\"(),;:"))
            if name and not word.startswith("-") and _canonical(name.group()) == "lucid":
                return True
    return False


def wrong_install_hints(text: str) -> list[str]:
    """The lines of ``text``, numbered, that tell a user to install ``lucid`` (see installs_lucid)."""
    return [f"{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1) if installs_lucid(line)]


def _scanned_files():
    for entry in SCANNED:
        path = ROOT / entry
        if path.is_file():
            yield path
            continue
        for file in sorted(path.rglob("*")):
            if file.is_file() and not NOT_SOURCES.intersection(file.relative_to(path).parts[:-1]):
                yield file


@pytest.mark.parametrize("text", [
    "pip install lucid",
    "pip install 'lucid[mlx]'",
    'pip install "lucid[fast]"',
    "pip install lucid[mlx]",
    "pip install -U lucid",
    "pip install --upgrade --quiet lucid==0.1.0",
    "python -m pip install numpy lucid",
    "MLX is not installed: pip install 'lucid[mlx]' (mlx on macOS)",
    "(it comes with MLX: pip install 'lucid[mlx]')",
    '    "lucid[demo]",',
    "``pip install Lucid``",
])
def test_the_scan_catches_the_old_hints(text):
    assert wrong_install_hints(text), text


@pytest.mark.parametrize("text", [
    "pip install lucid-autograd",
    "pip install 'lucid-autograd[mlx]'",
    "pip install '.[mlx]'",
    'pip install -e ".[test]"',
    "``pip install .`` installs lucid, NumPy and safetensors",
    "pip install mlx on macOS, 'mlx[cpu]' on Linux",
    '    "lucid-autograd[demo]",',
    "import lucid; lucid.is_available('gpu')",
    "pip install lucidity",
])
def test_the_scan_passes_the_new_hints(text):
    assert not wrong_install_hints(text), text


def test_no_message_or_page_installs_the_wrong_distribution():
    """pip's ``lucid`` is someone else's project: every hint names lucid-autograd or the checkout."""
    files = list(_scanned_files())
    assert any(f.name == "mlx_backend.py" for f in files) and any(f.name == "install.rst" for f in files)
    wrong = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # an image or other binary file
        wrong += [f"{file.relative_to(ROOT)}: {hint}" for hint in wrong_install_hints(text)]
    assert not wrong, "\n".join(wrong)


def _pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def test_the_distribution_is_lucid_autograd():
    project = _pyproject()["project"]
    assert project["name"] == NAME
    extras = project["optional-dependencies"]
    for extra, requirements in extras.items():
        for requirement in requirements:
            name = REQUIREMENT_NAME.match(requirement).group()
            if _canonical(name) in ("lucid", NAME):
                wanted = re.fullmatch(rf"{NAME}\[([\w,-]+)\]", requirement)
                assert wanted, f"extra {extra!r}: {requirement!r} is not {NAME}[...]"
                assert set(wanted.group(1).split(",")) <= set(extras), f"extra {extra!r}: {requirement!r}"


def test_the_installed_distribution_is_this_one():
    """The metadata pip reads (``importlib.metadata``) is under the new name, at lucid's version."""
    try:
        version = importlib.metadata.version(NAME)
    except importlib.metadata.PackageNotFoundError:
        pytest.fail(f"{NAME} is not installed in this environment: pip install -e '.[test]' "
                    "(an environment made before the rename has the old distribution 'lucid': "
                    "pip uninstall lucid first)")
    assert version == lucid.__version__ == _pyproject()["project"]["version"]
