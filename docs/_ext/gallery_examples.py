"""Sphinx extension: the gallery's examples that this build cannot run, and those that fail.

- An example named in ``gallery_needs_mlx`` (conf.py) runs where MLX is installed. Elsewhere
  the docs still build from their own extra: the example's page shows its code, and where
  its output would be, the one-line :data:`NOTE`. (At ``config-inited`` the example is
  taken out of sphinx-gallery's ``filename_pattern``, which says what to run.)
- An example that fails fails the build with an error that names it and what it raised
  (sphinx-gallery logs its traceback above, and shows it on the example's page), and not
  with an "Extension error" that points at Sphinx's issue tracker. Set
  ``abort_on_example_error`` off and ``only_warn_on_example_error`` on in
  ``sphinx_gallery_conf``: this extension does the failing.
"""

from __future__ import annotations

import os
import re

from sphinx.util import logging

logger = logging.getLogger(__name__)

NOTE = "This example needs MLX (``pip install '.[mlx]'``); it was not run for this build."
_DOWNLOADS = re.compile(r"^\.\. _sphx_glr_download_", re.M)  # what sphinx-gallery puts after the output


def have_mlx() -> bool:
    """Whether MLX imports here (lucid's "gpu" device and ``lucid.distributed`` need it)."""
    import lucid

    return lucid.is_available("gpu")


def not_run(config) -> list:
    """The examples (file names) that this build shows without running them."""
    return [] if have_mlx() else list(config.gallery_needs_mlx)


def without(pattern: str, names) -> str:
    """sphinx-gallery's ``filename_pattern`` ``pattern``, less the files named ``names``.

    Examples
    --------
    >>> pattern = without(r".*\\.py$", ["train_distributed.py"])
    >>> bool(re.search(pattern, "/repo/examples/word2vec.py"))
    True
    >>> bool(re.search(pattern, "/repo/examples/train_distributed.py"))
    False
    >>> without("/plot", [])
    '/plot'
    """
    names = list(names)
    if not names:
        return pattern
    alternatives = "|".join(re.escape(name) for name in names)
    return rf"^(?!.*[\\/](?:{alternatives})$).*?(?:{pattern})"


def with_note(text: str) -> str:
    """A gallery page's reST with :data:`NOTE` where the example's output would be.

    Examples
    --------
    >>> page = "Title\\n=====\\n\\n.. code-block:: Python\\n\\n    run()\\n\\n.. _sphx_glr_download_gallery_x.py:\\n"
    >>> print(with_note(page))  # doctest: +ELLIPSIS
    Title
    =====
    <BLANKLINE>
    .. code-block:: Python
    <BLANKLINE>
        run()
    <BLANKLINE>
    .. note::
    <BLANKLINE>
       This example needs MLX ...; it was not run for this build.
    <BLANKLINE>
    .. _sphx_glr_download_gallery_x.py:
    <BLANKLINE>
    """
    note = f".. note::\n\n   {NOTE}\n\n"
    found = _DOWNLOADS.search(text)
    if found is None:  # not sphinx-gallery's layout: the note goes last
        return f"{text.rstrip()}\n\n{note}"
    return text[:found.start()] + note + text[found.start():]


def _skip_examples(app, config) -> None:
    skipped = not_run(config)
    if skipped:
        conf = config.sphinx_gallery_conf
        conf["filename_pattern"] = without(conf.get("filename_pattern", "/plot"), skipped)
        logger.info("gallery: MLX is not installed: %s shown without running", ", ".join(skipped))


def _gallery_dirs(config) -> list:
    dirs = config.sphinx_gallery_conf.get("gallery_dirs", [])
    return [dirs] if isinstance(dirs, str) else list(dirs)


def _add_note(app, docname, source) -> None:
    folder, _, stem = docname.rpartition("/")
    if folder in _gallery_dirs(app.config) and f"{stem}.py" in not_run(app.config):
        source[0] = with_note(source[0])


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _fail_on_failed_examples(app, exception) -> None:
    if exception is not None:
        return
    conf = app.config.sphinx_gallery_conf
    expected = {os.path.normpath(os.path.join(conf.get("src_dir", ""), path))
                for path in conf.get("expected_failing_examples", ())}
    failed = {path: trace for path, trace in conf.get("failing_examples", {}).items()
              if os.path.normpath(path) not in expected}
    for path, trace in sorted(failed.items()):
        cause = trace.strip().splitlines()[-1] if trace.strip() else "(no traceback)"
        logger.error("the gallery's example %s failed: %s (its traceback is above, and on its page)",
                     _shown(path), cause)
    if failed:
        app.statuscode = 1


def setup(app):
    """Register ``gallery_needs_mlx`` and the three steps."""
    app.add_config_value("gallery_needs_mlx", [], "env", types=(list, tuple))
    app.connect("config-inited", _skip_examples, priority=5)  # before sphinx-gallery reads its configuration (10)
    app.connect("source-read", _add_note)
    app.connect("build-finished", _fail_on_failed_examples, priority=900)  # after sphinx-gallery's summary
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
