"""Sphinx configuration for lucid's documentation.

Build from the repository root (warnings are errors)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The project root is put on ``sys.path`` so the docs build from a checkout
without installing lucid; every API page is generated from the docstrings.

Nothing the build generates is written into docs/: it reads docs/ through a folder in its
doctree directory, where the API pages, the plots and the gallery are written
(docs/_ext/staged_sources.py), and every build runs every example afresh.
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
    "sphinx-mathjax-offline",  # MathJax 3 copied into _static: formulas render with no network
    "sphinx.ext.viewcode",
    "sphinx.ext.doctest",
    "sphinx_copybutton",
    "sphinx_gallery.gen_gallery",
    "staged_sources",  # docs/_ext: the build reads docs/ from its own folder, where it writes what it generates
    "gallery_examples",  # docs/_ext: examples that need MLX, and examples that fail
    "api_pages",  # docs/_ext: the API pages, one per public object, from each module's __all__
    "lr_scheduler_plots",  # docs/_ext: draws every lr scheduler's curve at build time
]

exclude_patterns = ["_build", "_generated", "gallery/*.ipynb", "gallery/*.py", "gallery/*.zip"]
nitpicky = False

# --- autodoc ----------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # docs/_ext/api_pages.py types the signatures (code, else numpydoc types)
autoclass_content = "class"  # __init__ docstrings only point back at the class

# --- napoleon: numpydoc-style docstrings only -------------------------------------------
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_ivar = True  # "Attributes" as fields: no duplicate attribute entries ...
napoleon_custom_sections = [("Attributes", "params_style")]  # ... headed "Attributes", as the spec page
napoleon_use_rtype = False

# --- doctest ----------------------------------------------------------------------------
# Docstring examples are run by pytest --doctest-modules; the doctest builder runs only
# the explicit ``.. doctest::`` blocks of these pages, not the ``>>>`` blocks autodoc
# pulls in from docstrings.
doctest_test_doctest_blocks = ""
doctest_global_setup = "import lucid"

# --- gallery: examples/ run at build time, with their output and plots ---------------------
sphinx_gallery_conf = {
    "examples_dirs": os.path.join(ROOT, "examples"),
    "gallery_dirs": "gallery",  # in the staged sources (docs/_ext/staged_sources.py), not in docs/
    "filename_pattern": r".*\.py$",  # every script is run, not only plot_*.py (but see gallery_needs_mlx)
    "run_stale_examples": True,  # every build runs every example: no "previously run" output is reused
    "reset_argv": "gallery_argv.gallery_argv",  # docs/_ext: the examples' short mode
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    # a failing example fails the build with an error naming it and its exception
    # (docs/_ext/gallery_examples.py), not with a Sphinx "Extension error"
    "abort_on_example_error": False,
    "only_warn_on_example_error": True,
    "show_memory": False,
    "show_signature": False,
    "min_reported_time": 3600,  # no "Total running time" lines: they differ from run to run
    "write_computation_times": False,  # its page loads jQuery and DataTables from a CDN
}
# Run where MLX is installed; elsewhere shown with a note instead of their output, so that the
# docs build from their own extra (pip install '.[docs]'), which does not bring MLX.
gallery_needs_mlx = ["train_distributed.py"]
# What the build generates, which older builds wrote into docs/: never read from there.
staged_sources_skip = ["api", "_generated", "gallery", "sg_execution_times.rst"]

# --- HTML ---------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"lucid {release}"
html_static_path = ["_static"]
html_css_files = ["lucid.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_end": ["theme-switcher"],
    "footer_start": ["copyright"],
    "footer_end": [],
    # the other pages give its width to their examples (the left bar lists the pages or objects)
    "secondary_sidebar_items": {"index": ["page-toc"]},
    "use_edit_page_button": False,
}
html_sidebars = {"index": []}
html_show_sourcelink = False
html_copy_source = False
# The search page loads its index locally; nothing else is fetched (see tests/test_docs_browser.py).
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
