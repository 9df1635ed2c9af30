"""The documentation site, as a reader sees it.

The site is built once (``sphinx-build -W``: a warning fails it), then checked as built
files (nothing written into docs/; an API page for every public object, in the
specification page's shape; no page shows a path of the build machine or loads anything
from the network; every internal link lands on a page and an anchor that exist) and in a
real headless Chromium (``tests/chromium.py``): formulas on the SparseAdam and Adam pages
are typeset by the MathJax shipped in the build, no page asks for a network resource, code
blocks scroll, examples have a copy button. ``tools/test.sh`` installs Debian's
``chromium`` when it is missing and it runs as root. The gallery's own
mechanics (an example that needs MLX where MLX is missing, a failing example, a second
build) are checked on a small project of their own, built in a subprocess.

A ``-k`` run leaves these tests out unless it names them (tests/conftest.py).

Docstring examples are not run here: pytest's ``--doctest-modules`` (pyproject.toml) runs
them. The doctest builder runs only the explicit ``.. doctest::`` blocks of the pages.
"""

from __future__ import annotations

import ast
import html
import os
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import lucid

DOCS = Path(__file__).resolve().parent.parent / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import chromium  # noqa: E402 - tests/chromium.py

# Sphinx's own deprecation notices are not ours.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning")

LOCAL_SCHEMES = {"file", "data", "blob", "about"}


def _build(builder: str, out_dir: Path, *options: str) -> int:
    from sphinx.cmd.build import build_main

    return build_main([*options, "-b", builder, "-q", str(DOCS), str(out_dir)])


def _files(folder: Path) -> dict:
    """Every file (-> its mtime) and folder (-> None) under ``folder``, but the build's own
    (``_build``, Python's ``__pycache__``)."""
    return {str(p.relative_to(folder)): None if p.is_dir() else p.stat().st_mtime_ns for p in folder.rglob("*")
            if not {"_build", "__pycache__"} & set(p.relative_to(folder).parts)}


@pytest.fixture(scope="module")
def docs_before_the_build() -> dict:
    return _files(DOCS)


@pytest.fixture(scope="module")
def site(tmp_path_factory, docs_before_the_build) -> Path:
    """The HTML site, built once with warnings as errors."""
    pytest.importorskip("sphinx")
    out = tmp_path_factory.mktemp("docs") / "html"
    assert _build("html", out, "-W", "--keep-going") == 0, "sphinx-build -W failed: see the warnings above"
    return out


def _pages(site: Path) -> list:
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)


class _Tags(HTMLParser):
    """The ids and the (tag, attribute, value) of every link and resource of one page."""

    def __init__(self):
        super().__init__()
        self.ids, self.refs = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        for name in ("href", "src"):
            if attrs.get(name) is not None:
                self.refs.append((tag, name, attrs[name]))


def _parse(page: Path) -> _Tags:
    tags = _Tags()
    tags.feed(page.read_text(encoding="utf-8"))
    return tags


# --- the built files -------------------------------------------------------------------------
def test_html_builds_without_warnings(site):
    assert (site / "index.html").is_file() and (site / "api" / "index.html").is_file()


def test_the_build_writes_nothing_into_docs(site, docs_before_the_build):
    """Generated pages, figures and the gallery live in the build's folder (docs/_ext/staged_sources.py):
    none is left in docs/ for a later build to pass on."""
    after = _files(DOCS)
    changed = sorted(name for name in after.keys() | docs_before_the_build.keys()
                     if after.get(name, "absent") != docs_before_the_build.get(name, "absent"))
    assert not changed, f"the build wrote into docs/: {changed}"
    staged = site / ".doctrees" / "sources"
    assert (staged / "gallery" / "word2vec.rst").is_file() and (staged / "api" / "index.rst").is_file()


def test_no_page_shows_a_path_of_the_build_machine(site):
    """No built page holds the build's folders, the repository's, the temporary folder or the home folder."""
    folders = [site, site / ".doctrees" / "sources", DOCS, DOCS.parent, Path(tempfile.gettempdir()),
               Path(os.path.expanduser("~"))]
    needles = sorted({str(p) for f in folders for p in (f, f.resolve()) if len(p.parts) > 1}, key=len, reverse=True)
    found = []
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for needle in needles:
            at = text.find(needle)
            if at >= 0:
                found.append(f"{page.relative_to(site)}: {needle!r} in {text[max(0, at - 60):at + 80]!r}")
    assert not found, "\n".join(found[:20])


def test_every_public_object_has_a_page(site):
    import api_pages

    modules = api_pages.public_modules()
    names = {m.__name__ for m in modules}
    assert {"lucid", "lucid.nn", "lucid.nn.functional", "lucid.nn.utils", "lucid.optim",
            "lucid.optim.lr_scheduler", "lucid.optim.swa_utils"} <= names
    assert not {"lucid.optim.sgd", "lucid.nn.modules"} & names  # implementation files: no pages
    for module in modules:
        assert (site / "api" / f"{module.__name__}.html").is_file(), module.__name__
        for name in module.__all__:
            if api_pages.kind(getattr(module, name)) in ("class", "function"):
                assert (site / "api" / f"{module.__name__}.{name}.html").is_file(), f"{module.__name__}.{name}"


def test_a_module_added_later_gets_its_pages_with_no_edit(tmp_path, monkeypatch):
    """A new public module (as lucid.utils.data or lucid.nn.init will be) is found from ``__all__``."""
    import api_pages

    package = tmp_path / "fakepkg"
    (package / "utils").mkdir(parents=True)
    files = {
        "__init__.py": "from ._core import Thing\nfrom .impl import helper\nfrom . import utils\n"
                       "__all__ = ['Thing', 'helper']\n",
        "_core.py": 'class Thing:\n    """A thing."""\n    def __init__(self, size: int = 1):\n        pass\n'
                    '    def run(self):\n        """Run it."""\n'
                    '    @classmethod\n    def make(cls):\n        """Make one."""\n',
        "impl.py": 'def helper():\n    """Help."""\n__all__ = ["helper"]\n',
        "utils/__init__.py": "",
        "utils/data.py": '"""Data loading."""\nclass Loader:\n    """Loads."""\n'
                         'def collate(batch):\n    """Collate."""\n__all__ = ["Loader", "collate"]\n',
    }
    for name, text in files.items():
        (package / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(api_pages, "PACKAGE", "fakepkg")
    pages = api_pages.pages()
    # fakepkg.impl implements what fakepkg exports: no page of its own; fakepkg.utils has no __all__
    assert set(pages) == {"api/fakepkg", "api/fakepkg.Thing", "api/fakepkg.helper", "api/fakepkg.utils.data",
                          "api/fakepkg.utils.data.Loader", "api/fakepkg.utils.data.collate", "api/index"}
    thing = pages["api/fakepkg.Thing"]
    order = [".. autoclass:: Thing", "Constructors", "automethod:: __init__", "automethod:: make",
             "Instance methods", "automethod:: run"]
    assert [thing.index(marker) for marker in order] == sorted(thing.index(marker) for marker in order)
    assert "   fakepkg.utils.data" in pages["api/index"]


@pytest.mark.parametrize("text, expected", [
    ("iterable of Parameter or iterable of dict", "Iterable[Parameter] | Iterable[dict]"),
    ("float, default 1e-3", "float"),
    ("tuple of float, default (0.9, 0.999)", "tuple[float, ...]"),
    ('{"cpu", "gpu"}, optional', "Literal['cpu', 'gpu'] | None"),
    ("Tensor or None", "Tensor | None"),
    ("callable, optional", "Callable | None"),
    ("optional", None),
    ("the same as input", None),
])
def test_numpydoc_types_become_annotations(text, expected):
    import api_pages

    assert api_pages.annotation(text) == expected


def test_sparse_adam_page_has_the_specified_shape(site):
    """Typed signature, summary, math, Parameters, Attributes, Notes, Examples, Constructors, methods, source."""
    text = (site / "api" / "lucid.optim.SparseAdam.html").read_text(encoding="utf-8")
    plain = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", text)))
    plain = plain[plain.index("class lucid.optim.SparseAdam("):]  # the page's content, after the navigation
    signature = re.search(r"SparseAdam\((.*?)\)\s*\[source\]", plain, re.S).group(1)
    assert signature == (  # the code's annotations, lucid.optim.optimizer.ParamsT written out
        "params: Iterable[Tensor] | Iterable[tuple[str, Tensor]] | Iterable[dict[str, Any]], "
        "lr: float | Tensor | Schedule = 0.001, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, "
        "maximize: bool = False")
    order = ["Lazy Adam for gradients that touch a few rows", r"\begin{aligned}", "Parameters", "Attributes",
             "Notes", "Examples", "Constructors", "__init__", "Instance methods",
             "step(closure: Callable[[], Tensor] | None = None)"]
    positions = [plain.find(marker) for marker in order]
    assert -1 not in positions and positions == sorted(positions), dict(zip(order, positions))
    assert "→ Tensor | None" in plain  # step's return type, from its Returns section
    assert plain.count("[source]") >= 3  # the class, its constructor, its methods
    constructor = plain.split("Constructors", 1)[1].split("Instance methods", 1)[0]
    assert "→ None" in constructor and ">>> optimizer = optim.SparseAdam(" in constructor


def test_no_page_loads_a_network_resource(site):
    """Scripts, stylesheets, images and fonts all come from the build: links out (<a>) are fine."""
    for page in _pages(site):
        for tag, attr, value in _parse(page).refs:
            if tag != "a":
                assert urlsplit(value).scheme in ("", *LOCAL_SCHEMES), f"{page.name}: <{tag} {attr}={value!r}>"
    for sheet in site.rglob("*.css"):
        found = re.findall(r"url\(\s*['\"]?(https?:|//)", sheet.read_text(encoding="utf-8", errors="replace"))
        assert not found, f"{sheet} loads {found}"
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()


def test_internal_links_resolve(site):
    parsed = {page: _parse(page) for page in _pages(site)}
    broken = []
    for page, tags in parsed.items():
        for tag, attr, value in tags.refs:
            parts = urlsplit(value)
            if parts.scheme or parts.netloc or (tag == "a" and value.startswith("mailto:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {value}")
            elif parts.fragment and target.suffix == ".html" and target in parsed:
                if unquote(parts.fragment) not in parsed[target].ids:
                    broken.append(f"{page.relative_to(site)}: {value} (no such anchor)")
    assert not broken, "\n".join(broken[:20])


def test_gallery_shows_the_examples_with_output_and_plots(site):
    import gallery_examples

    page = (site / "gallery" / "word2vec.html").read_text(encoding="utf-8")
    assert re.search(r"file: \w+, \w+", page) and "loss curve: drawn" in page  # the demo's printed output
    assert re.search(r'<img[^>]+src="../_images/sphx_glr_word2vec_001\.png"', page)
    assert (site / "_images" / "sphx_glr_word2vec_001.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "test accuracy" in (site / "gallery" / "train_embedding.html").read_text(encoding="utf-8")
    note = html.escape(gallery_examples.NOTE.replace("``", ""), quote=False)
    needs_mlx = ast.literal_eval(re.search(r"^gallery_needs_mlx = (.*)$", (DOCS / "conf.py").read_text(), re.M)[1])
    for script in (DOCS.parent / "examples").glob("*.py"):  # every example, with what it printed
        page = (site / "gallery" / f"{script.stem}.html").read_text(encoding="utf-8")
        if gallery_examples.have_mlx():
            assert "sphx-glr-script-out" in page and "it was not run for this build" not in page, script
        else:  # the docs extra alone: those that need MLX show a note instead
            needs = script.name in needs_mlx
            assert ("sphx-glr-script-out" in page) != needs and (note in re.sub(r"<[^>]+>", "", page)) == needs, script


# --- the gallery's mechanics, on a small project of their own --------------------------------
_PROJECT_CONF = """\
import os, sys
sys.path.insert(0, {ext!r})
extensions = ["sphinx_gallery.gen_gallery", "staged_sources", "gallery_examples"]
exclude_patterns = ["_build", "gallery/*.ipynb", "gallery/*.py", "gallery/*.zip"]
sphinx_gallery_conf = {{
    "examples_dirs": os.path.join(os.path.dirname(__file__), "..", "examples"),
    "gallery_dirs": "gallery",
    "filename_pattern": r".*\\.py$",
    "run_stale_examples": True,
    "abort_on_example_error": False,
    "only_warn_on_example_error": True,
    "download_all_examples": False,
    "write_computation_times": False,
}}
gallery_needs_mlx = ["needs_mlx.py"]
"""
_EXAMPLES = {
    "GALLERY_HEADER.rst": "Examples\n========\n",
    "fine.py": '"""\nFine\n====\n\nRuns anywhere.\n"""\n\nwith open("runs.txt", "a") as runs:\n'
               '    runs.write("ran\\n")\nprint("fine ran")\n',
    "needs_mlx.py": '"""\nNeeds MLX\n=========\n\nUses MLX.\n"""\n\nimport mlx.core\n\nprint("mlx ran")\n',
}
_BUILD = ("import sys\n{hide}from sphinx.cmd.build import main\n"
          "sys.exit(main(['-W', '--keep-going', '-b', 'html', 'docs', 'docs/_build/html']))\n")


def _project(root: Path, **extra) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "examples").mkdir()
    (root / "docs" / "conf.py").write_text(_PROJECT_CONF.format(ext=str(DOCS / "_ext")))
    (root / "docs" / "index.rst").write_text("Project\n=======\n\n.. toctree::\n\n   gallery/index\n")
    for name, text in {**_EXAMPLES, **extra}.items():
        (root / "examples" / name).write_text(text)
    return root


def _build_project(root: Path, mlx: bool) -> tuple:
    """sphinx-build's exit status and output, in a process where MLX imports or, with ``mlx=False``, does not."""
    hide = "" if mlx else "sys.modules['mlx'] = None  # as where MLX is not installed\n"
    done = subprocess.run([sys.executable, "-c", _BUILD.format(hide=hide)], cwd=root, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(DOCS.parent)})
    return done.returncode, done.stdout + done.stderr


def _text(page: Path) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8"))))


def test_an_example_that_needs_mlx_shows_a_note_where_mlx_is_missing(tmp_path):
    pytest.importorskip("sphinx_gallery")
    import gallery_examples

    root = _project(tmp_path)
    status, output = _build_project(root, mlx=False)
    assert status == 0, output
    gallery = root / "docs" / "_build" / "html" / "gallery"
    page = _text(gallery / "needs_mlx.html")
    assert gallery_examples.NOTE.replace("``", "") in page and "import mlx.core" in page  # the code, and the note
    assert "sphx-glr-script-out" not in (gallery / "needs_mlx.html").read_text(encoding="utf-8")  # no output
    assert "fine ran" in _text(gallery / "fine.html")


def test_every_build_runs_every_example_and_writes_nothing_into_docs(tmp_path):
    pytest.importorskip("sphinx_gallery")
    root = _project(tmp_path)
    for _ in range(2):
        status, output = _build_project(root, mlx=False)
        assert status == 0, output
    assert (root / "examples" / "runs.txt").read_text() == "ran\nran\n"  # the second build ran it again
    assert sorted(p.name for p in (root / "docs").iterdir()) == ["_build", "conf.py", "index.rst"]
    assert "previously run" not in output or "excluding 0 files that had previously been run" in output


def test_a_failing_example_fails_the_build_with_its_name_and_cause(tmp_path):
    pytest.importorskip("sphinx_gallery")
    broken = '"""\nBroken\n======\n\nFails.\n"""\n\ndef ratio():\n    return 1 / 0\n\nratio()\n'
    root = _project(tmp_path, **{"broken.py": broken})
    status, output = _build_project(root, mlx=False)
    assert status != 0
    assert re.search(r"example examples/broken\.py failed: ZeroDivisionError: division by zero", output), output
    assert "Extension error" not in output and "sphinx-doc/sphinx/issues" not in output, output


# --- in a browser ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    executable = chromium.find()
    if executable is None:
        pytest.skip("no chromium on PATH (tools/test.sh installs Debian's when it runs as root)")
    with chromium.Browser(executable) as b:
        yield b


_TYPESET = "window.MathJax && MathJax.startup ? MathJax.startup.promise.then(() => true) : false"


@pytest.mark.parametrize("page", ["api/lucid.optim.SparseAdam.html", "api/lucid.optim.Adam.html"])
def test_formulas_render_as_math_in_a_browser(site, browser, page):
    requests = browser.open((site / page).as_uri())
    assert browser.evaluate(_TYPESET) is True, "MathJax did not load"
    typeset = browser.evaluate("document.querySelectorAll('mjx-container[display=\"true\"]').length")
    inline = browser.evaluate("document.querySelectorAll('mjx-container:not([display=\"true\"])').length")
    assert typeset >= 1 and inline >= 3, (typeset, inline)
    visible = browser.evaluate("document.body.innerText")
    assert "\\begin{aligned}" not in visible and "\\leftarrow" not in visible and "\\beta" not in visible
    # the glyphs drawn are MathJax's own fonts, from the build
    fonts = [url for url in browser.requests() if url.endswith(".woff")]
    assert fonts and all(url.startswith((site / "_static" / "mathjax").as_uri()) for url in fonts), fonts
    assert all(urlsplit(url).scheme in LOCAL_SCHEMES for url in requests + browser.requests())


def test_every_formula_typesets_cleanly(site, browser):
    """On every page with math: no MathJax error, and no TeX left as text (``\\text{step\\_size}``)."""
    pages = [p for p in _pages(site) if "_modules" not in p.parts and 'class="math' in p.read_text(encoding="utf-8")]
    assert len(pages) >= 20
    bad = {}
    for page in pages:
        browser.open(page.as_uri())
        assert browser.evaluate(_TYPESET) is True, page
        problems = browser.evaluate(
            "[document.querySelectorAll('mjx-merror').length,"
            " Array.from(document.querySelectorAll('mjx-assistive-mml mtext, mjx-assistive-mml mi'))"
            "   .map(e => e.textContent).filter(t => t.includes('\\\\')),"
            " document.querySelectorAll('.math:not(:has(mjx-container))').length]")
        if problems != [0, [], 0]:
            bad[str(page.relative_to(site))] = problems
    assert not bad, bad


@pytest.mark.parametrize("page", ["index.html", "guide/embeddings.html", "gallery/word2vec.html",
                                  "api/lucid.optim.lr_scheduler.StepLR.html", "api/lucid.Tensor.html",
                                  "search.html"])
def test_pages_ask_for_nothing_from_the_network(site, browser, page):
    requests = browser.open((site / page).as_uri())
    browser.evaluate(_TYPESET)
    remote = [url for url in requests + browser.requests() if urlsplit(url).scheme not in LOCAL_SCHEMES]
    assert not remote, remote
    assert len(requests) > 3  # the page did load its own scripts and styles


def test_code_blocks_scroll_and_have_a_copy_button(site, browser):
    browser.open((site / "api" / "lucid.optim.SparseAdam.html").as_uri())
    blocks = browser.evaluate("Array.from(document.querySelectorAll('div.highlight pre'))"
                              ".map(p => getComputedStyle(p).overflowX)")
    assert blocks and set(blocks) <= {"auto", "scroll"}, blocks
    assert browser.evaluate("document.querySelectorAll('button.copybtn').length") >= len(blocks)
    # in a narrow window the long example lines are wider than their block, which scrolls
    browser.resize(520, 900)
    try:
        browser.open((site / "api" / "lucid.optim.SparseAdam.html").as_uri())
        widths = browser.evaluate("Array.from(document.querySelectorAll('div.highlight pre'))"
                                  ".map(p => [p.scrollWidth, p.clientWidth, getComputedStyle(p).overflowX])")
    finally:
        browser.resize(1280, 900)
    assert any(inside > outside and overflow == "auto" for inside, outside, overflow in widths), widths


def test_doctest_blocks_pass(tmp_path):
    pytest.importorskip("sphinx")
    out = tmp_path / "doctest"
    # Warnings are the html test's business; this one fails only on a failing example. The
    # gallery's scripts ran in the html build, and the API pages hold no ``.. doctest::``
    # blocks (pytest --doctest-modules runs their examples): neither is read again here.
    status = _build("doctest", out, "-D", "plot_gallery=0", "-D", "exclude_patterns=_build,_generated,api/*,gallery/*")
    report = out / "output.txt"
    assert status == 0, report.read_text() if report.exists() else "the doctest builder failed"
    ran = int(re.search(r"^\s*(\d+) tests$", report.read_text(), re.M).group(1))
    assert ran >= 150, f"only {ran} doctest examples ran: were the guide pages read?"
