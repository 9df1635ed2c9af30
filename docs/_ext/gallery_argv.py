"""The command-line arguments each example gets when the docs' gallery runs it (sphinx-gallery's ``reset_argv``)."""

import os
import tempfile


def gallery_argv(gallery_conf, script_vars) -> list:
    """Each example's short mode, so that the docs build stays short; the demo's PNG goes to a temp folder.

    Examples
    --------
    >>> gallery_argv({}, {"src_file": "examples/word2vec.py"})[:2]
    ['--steps', '150']
    """
    if script_vars["src_file"].endswith("word2vec.py"):
        return ["--steps", "150", "--plot", os.path.join(tempfile.gettempdir(), "lucid-docs-word2vec-loss.png")]
    return ["--steps", "100"]
