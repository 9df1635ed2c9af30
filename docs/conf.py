"""Sphinx configuration for lucid's documentation.

Build from the repository root (warnings are errors)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The project root is put on ``sys.path`` so the docs build from a checkout
without installing lucid; every API page is generated from the docstrings.
"""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "docs", "_ext"))

import lucid  # noqa: E402

project = "lucid"
author = "the lucid authors"
copyright = "the lucid authors"  # noqa: A001 - Sphinx's name
release = lucid.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx.ext.doctest",
    "lr_scheduler_plots",  # docs/_ext: draws every lr scheduler's curve at build time
]

exclude_patterns = ["_build", "_generated"]
nitpicky = False

# --- autodoc ----------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc "Parameters" sections say the types
autoclass_content = "class"  # __init__ docstrings only point back at the class

# --- napoleon: numpydoc-style docstrings only -------------------------------------------
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_ivar = True  # "Attributes" as fields: no duplicate attribute entries
napoleon_use_rtype = False

# --- doctest ----------------------------------------------------------------------------
# Docstring examples are run by pytest --doctest-modules; the doctest builder runs only
# the explicit ``.. doctest::`` blocks of these pages, not the ``>>>`` blocks autodoc
# pulls in from docstrings.
doctest_test_doctest_blocks = ""
doctest_global_setup = "import lucid"

# --- HTML ---------------------------------------------------------------------------------
html_theme = "alabaster"
html_static_path = []
html_theme_options = {
    "description": "A small, readable autograd framework with torch.optim's semantics",
}
