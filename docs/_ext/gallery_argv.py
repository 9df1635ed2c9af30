"""The command-line arguments each example gets when the docs' gallery runs it (sphinx-gallery's ``reset_argv``)."""

import os

# The demo and the embedding classifier run in their short mode; the torch-style scripts
# (a few seconds each) with their defaults. The demo draws its loss curve without writing a
# file (--plot ''): the gallery shows the figure, and the page no path of the build machine.
SHORT = {
    "word2vec.py": ["--steps", "150", "--plot", ""],
    "train_embedding.py": ["--steps", "100"],
    # in the gallery it runs as a world of one process (no launcher): a few steps show its output
    "train_distributed.py": ["--steps", "20"],
    # the convolutional network: one epoch over 256 images shows it learning
    "mnist_net.py": ["--epochs", "1", "--samples", "256"],
}


def gallery_argv(gallery_conf, script_vars) -> list:
    """The arguments for one script, so that the docs build stays short.

    Examples
    --------
    >>> gallery_argv({}, {"src_file": "examples/word2vec.py"})[:2]
    ['--steps', '150']
    >>> gallery_argv({}, {"src_file": "examples/mlp_regression.py"})
    []
    """
    return list(SHORT.get(os.path.basename(script_vars["src_file"]), []))
