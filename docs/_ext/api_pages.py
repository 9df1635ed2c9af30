"""Sphinx extension: an API page for every public object of lucid, generated from ``__all__``.

At ``builder-inited`` it finds lucid's public modules (see :func:`public_modules`) and writes
``api/`` afresh in the build's source folder (not docs/: docs/_ext/staged_sources.py): an
index, one page per module (its docstring, then tables of its classes, functions and data),
and one page per object, in the shape of the SparseAdam specification page: the typed
signature, the docstring (summary, math, Parameters, Attributes, Notes, Examples), then
*Constructors* and *Instance methods*, each with its own signature, and a link to the source.
A module another change adds (``lucid.utils.data``, ``lucid.nn.init``, ...) or a name added
to an ``__all__`` gets its page with no edit here.

Two autodoc hooks complete the pages: signatures are typed, from the code's annotations or
else from the numpydoc ``Parameters``/``Returns`` types (:func:`typed_signature`); and a
constructor with no docstring of its own says what it makes and shows the class's example.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import pkgutil
import re

PACKAGE = "lucid"
OUT = "api"
# Figures drawn at build time, shown on an object's page: fullname -> path from the source folder.
FIGURES: dict[str, str] = {}


# --- which modules and objects ---------------------------------------------------------------
def _exports(module) -> list[str]:
    return list(getattr(module, "__all__", []))


def public_modules() -> list:
    """lucid and each public submodule that has ``__all__`` and is not an implementation file.

    A submodule implements its parent when it defines an object the parent exports and the
    parent does not list it in ``__all__``: ``lucid.optim.sgd`` (its ``SGD`` is documented as
    ``lucid.optim.SGD``) and ``lucid.nn.modules`` get no pages, nor does anything inside them.
    ``lucid.optim.lr_scheduler`` (listed) does, and so would ``lucid.nn.init`` or
    ``lucid.utils.data``: a package without ``__all__`` (``lucid.utils``) has no page of
    its own but its modules are looked at.
    """
    root = importlib.import_module(PACKAGE)
    found, hidden = [root], []
    for info in pkgutil.walk_packages(root.__path__, PACKAGE + ".", onerror=lambda name: None):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        if any(info.name.startswith(name + ".") for name in hidden):
            continue  # inside an implementation package
        module = importlib.import_module(info.name)
        parent = importlib.import_module(info.name.rpartition(".")[0])
        short = info.name.rpartition(".")[2]
        implements_parent = any(
            (getattr(getattr(parent, n, None), "__module__", None) or "").startswith(info.name)
            for n in _exports(parent))
        if implements_parent and short not in _exports(parent):
            hidden.append(info.name)
        elif hasattr(module, "__all__"):  # a package without __all__ (lucid.utils) has no page; its modules may
            found.append(module)
    return found


def kind(obj) -> str:
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def summary(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


# --- page text -----------------------------------------------------------------------------
def _title(text: str, char: str = "=") -> str:
    return f"{text}\n{char * len(text)}\n"


def _members(cls, documented: dict) -> tuple:
    """(constructors, methods, properties, inherited) of ``cls``, in source order.

    Members inherited from a documented lucid class are only linked to; those from an
    undocumented base (a private helper class) are documented here.
    """
    constructors, methods, properties, inherited = ["__init__"], [], [], []
    seen = set()
    for base in cls.__mro__:
        if base is object or not base.__module__.startswith(PACKAGE):
            continue
        linked = base is not cls and documented.get(id(base))
        for name, value in vars(base).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if linked:
                if inspect.isfunction(value) or isinstance(value, (property, classmethod, staticmethod)):
                    inherited.append((linked, name))
            elif isinstance(value, property):
                properties.append(name)
            elif isinstance(value, classmethod):
                constructors.append(name)
            elif inspect.isfunction(value) or isinstance(value, staticmethod):
                methods.append(name)
    return constructors, methods, properties, inherited


def class_page(module: str, name: str, cls, documented: dict) -> str:
    constructors, methods, properties, inherited = _members(cls, documented)
    lines = [_title(name), f".. currentmodule:: {module}", "", f".. autoclass:: {name}"]
    lines += ["   :show-inheritance:", ""] if cls.__bases__ != (object,) else [""]
    figure = FIGURES.get(f"{module}.{name}")
    if figure:
        lines += [f"   .. image:: /{figure}", f"      :alt: {name}, drawn when the documentation was built", ""]
    sections = [("Constructors", "automethod", constructors), ("Instance methods", "automethod", methods),
                ("Properties", "autoproperty", properties)]
    for heading, directive, names in sections:
        if names:
            lines += [f"   .. rubric:: {heading}", ""]
            lines += [f"   .. {directive}:: {member}" for member in names] + [""]
    if inherited:
        lines += ["   .. rubric:: Inherited", ""]
        by_base: dict = {}
        for base, member in inherited:
            by_base.setdefault(base, []).append(f":meth:`~{base}.{member}`")
        for base, links in by_base.items():
            lines += [f"   From :class:`~{base}`: {', '.join(links)}.", ""]
    return "\n".join(lines)


def function_page(module: str, name: str) -> str:
    return "\n".join([_title(name), f".. currentmodule:: {module}", "", f".. autofunction:: {name}", ""])


def alias_page(module: str, name: str, obj, canonical: str) -> str:
    """The page of a name that a module exports again (``lucid.random.manual_seed`` is
    ``lucid.manual_seed``): a link to the object's own page, so it is documented once."""
    role = "class" if kind(obj) == "class" else "func"
    return "\n".join([_title(name), f".. currentmodule:: {module}", "",
                      f"``{module}.{name}`` is :{role}:`{canonical}`: {summary(obj)}", ""])


def module_page(module, objects: list, submodules: list, documented: dict) -> str:
    name = module.__name__
    lines = [_title(name), f".. automodule:: {name}", "", f".. currentmodule:: {name}", ""]
    for heading, wanted in (("Classes", "class"), ("Functions", "function")):
        names = [n for n, obj in objects if kind(obj) == wanted]
        if names:  # a table of our own: autosummary's first-sentence cut splits ``0 .. n-1``
            role = "class" if wanted == "class" else "func"
            lines += [_title(heading, "-"), ".. list-table::", "   :widths: 30 70", ""]
            for n in names:
                target = documented.get(id(getattr(module, n)), f"{name}.{n}")  # an alias links to its object
                lines += [f"   * - :{role}:`{n} <{target}>`", f"     - {summary(getattr(module, n)) or ' '}"]
            lines += [""]
    data = [(n, obj) for n, obj in objects if kind(obj) == "data"]
    if data:
        lines += [_title("Data", "-")]
        for n, obj in data:
            described = f"An instance of :class:`~{type(obj).__module__}.{type(obj).__qualname__}`"
            lines += [f".. py:data:: {n}", f"   :value: {obj!r}", "", f"   {described}.", ""]
    if submodules:
        lines += [_title("Submodules", "-")]
        lines += [f"* :mod:`{m.__name__}` — {summary(m)}" for m in submodules] + [""]
    pages = [f"{name}.{n}" for n, obj in objects if kind(obj) in ("class", "function")]
    lines += [".. toctree::", "   :hidden:", ""] + [f"   {p}" for p in pages] + [""]
    return "\n".join(lines)


def pages() -> dict:
    """Every API page: path in the source folder without ``.rst`` -> text."""
    modules = public_modules()
    documented = {}
    plan = []
    for module in modules:
        objects = [(n, getattr(module, n)) for n in _exports(module)]
        objects = [(n, obj) for n, obj in objects if kind(obj) != "module"]
        plan.append((module, objects))
        for n, obj in objects:
            if kind(obj) in ("class", "function"):  # documented where first exported
                documented.setdefault(id(obj), f"{module.__name__}.{n}")
    out = {}
    for module, objects in plan:
        children = [m for m in modules if m.__name__.rpartition(".")[0] == module.__name__]
        out[f"{OUT}/{module.__name__}"] = module_page(module, objects, children, documented)
        for n, obj in objects:
            own = documented.get(id(obj), f"{module.__name__}.{n}")
            if own != f"{module.__name__}.{n}":
                out[f"{OUT}/{module.__name__}.{n}"] = alias_page(module.__name__, n, obj, own)
            elif kind(obj) == "class":
                out[f"{OUT}/{module.__name__}.{n}"] = class_page(module.__name__, n, obj, documented)
            elif kind(obj) == "function":
                out[f"{OUT}/{module.__name__}.{n}"] = function_page(module.__name__, n)
    index = [_title("API reference"),
             "One page per module, and one per class or function it exports (its ``__all__``).", "",
             ".. toctree::", "   :maxdepth: 1", ""]
    index += [f"   {m.__name__}" for m in modules]
    out[f"{OUT}/index"] = "\n".join(index) + "\n"
    return out


def write_pages(srcdir: str) -> None:
    """Write the pages under ``srcdir/api``, touching only files whose text changed."""
    wanted = pages()
    folder = os.path.join(srcdir, OUT)
    os.makedirs(folder, exist_ok=True)
    for stale in set(os.listdir(folder)) - {os.path.basename(p) + ".rst" for p in wanted}:
        if stale.endswith(".rst"):
            os.remove(os.path.join(folder, stale))
    for page, text in wanted.items():
        path = os.path.join(srcdir, page + ".rst")
        if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)


# --- typed signatures ------------------------------------------------------------------------
_SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}$", re.M)


def sections(doc: str) -> dict:
    """A numpydoc docstring's sections: heading -> body text."""
    parts = _SECTION.split(doc or "")
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def documented_types(doc: str) -> tuple:
    """``({parameter: type text}, return type text or None)`` from the numpydoc sections."""
    found = sections(doc)
    types = {}
    for line in found.get("Parameters", "").splitlines():
        match = re.match(r"^(\*{0,2}[\w, *]+?) : (.+)$", line)
        if match and not line.startswith(" "):
            for name in match.group(1).split(","):
                types[name.strip().lstrip("*")] = match.group(2).strip()
    returns = [line for line in found.get("Returns", "").splitlines() if line.strip() and not line.startswith(" ")]
    result = None
    if returns:
        result = returns[0].split(" : ", 1)[1] if " : " in returns[0] else returns[0]
    return types, result


_WORDS = {"callable": "Callable", "iterable": "Iterable", "sequence": "Sequence", "array_like": "ArrayLike",
          "int": "int", "float": "float", "bool": "bool", "str": "str", "dict": "dict", "list": "list",
          "tuple": "tuple", "number": "float", "module": "Module", "schedule": "Schedule", "object": "object"}


def annotation(text: str):
    """A numpydoc type (``iterable of Parameter or iterable of dict, optional``) as a Python annotation.

    None when the text reads as no Python type; ``optional`` adds ``| None``.

    Examples
    --------
    >>> annotation("iterable of Parameter or iterable of dict")
    'Iterable[Parameter] | Iterable[dict]'
    >>> annotation("tuple of float, default (0.9, 0.999)")
    'tuple[float, ...]'
    >>> annotation('{"cpu", "gpu"}, optional')
    "Literal['cpu', 'gpu'] | None"
    >>> annotation("int or None")
    'int | None'
    """
    text = re.split(r",\s*default\b|\s+default\s", text)[0].strip()
    optional = bool(re.search(r",\s*optional$", text))
    text = re.sub(r",?\s*optional$", "", text).strip()
    if not text:
        return None
    if text.startswith("{") and text.endswith("}"):
        choices = [c.strip().strip("\"'`") for c in text[1:-1].split(",")]
        result = "Literal[" + ", ".join(repr(c) for c in choices) + "]"
    else:
        alternatives = []
        for part in re.split(r"\s+or\s+|\s*\|\s*", text.replace("`", "")):
            part = part.strip().removeprefix("a ").removeprefix("an ")
            match = re.fullmatch(r"(iterable|list|sequence|tuple) of (\w[\w.]*?)s?", part)
            if match:
                outer, inner = match.groups()
                inner = _WORDS.get(inner, inner)
                part = f"tuple[{inner}, ...]" if outer == "tuple" else f"{_WORDS[outer]}[{inner}]"
            else:
                part = _WORDS.get(part, part)
                part = re.sub(r"^(?:lucid\.)?(?:nn\.)?(\w+)$", r"\1", part)
            alternatives.append(part)
        result = " | ".join(alternatives)
    if optional and not result.endswith("None"):
        result += " | None"
    try:
        ast.parse(result, mode="eval")
    except SyntaxError:
        return None
    return result


def _render(parameters, return_text) -> str:
    text = "(" + ", ".join(parameters) + ")"
    ast.parse(f"def f{text}: pass")  # raises SyntaxError when Sphinx could not read it
    return text


def typed_signature(app, what, name, obj, options, signature, return_annotation):
    """autodoc-process-signature: annotations from the code, else from the docstring's types."""
    if what not in ("class", "function", "method") or signature is None:
        return None
    target = obj
    doc = inspect.getdoc(obj) or ""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    if what == "class" or name.endswith(".__init__"):
        owner = obj if what == "class" else _owner(name)
        doc = inspect.getdoc(owner) or doc if owner is not None else doc
    types, returns = documented_types(doc)
    parameters = list(sig.parameters.values())
    if what == "method" and parameters and parameters[0].name in ("self", "cls"):
        parameters = parameters[1:]  # autodoc shows methods as bound
    rendered = []
    for parameter in parameters:
        text = parameter.name
        ann = parameter.annotation
        ann = ann if isinstance(ann, str) else (inspect.formatannotation(ann) if ann is not parameter.empty else None)
        ann = _builtin_names(ann)
        ann = ann or (annotation(types[parameter.name]) if parameter.name in types else None)
        if ann and parameter.default is None and not ann.endswith("None"):
            ann += " | None"
        prefix = {parameter.VAR_POSITIONAL: "*", parameter.VAR_KEYWORD: "**"}.get(parameter.kind, "")
        text = prefix + text + (f": {ann}" if ann else "")
        if parameter.default is not parameter.empty:
            text += (" = " if ann else "=") + _default(parameter.default)
        rendered.append((parameter.kind, text))
    rendered = _with_markers(rendered)
    if what == "class":
        result = None
    elif name.endswith(".__init__"):
        result = "None"
    else:
        ret = sig.return_annotation
        result = _builtin_names(ret) if isinstance(ret, str) else None
        result = result or (annotation(returns) if returns else None)
    try:
        return _render(rendered, result), result
    except SyntaxError:
        return None


# type aliases of the code's annotations, shown as what they stand for: (module, name)
TYPE_ALIASES = {"ParamsT": ("lucid.optim.optimizer", "ParamsT")}


def _builtin_names(annotation: str | None) -> str | None:
    """``builtins.float`` as ``float`` (Tensor's methods spell the builtins so, beside its
    float()), and a type alias (``ParamsT``) as the union it names."""
    if not annotation:
        return annotation
    for alias, (module, name) in TYPE_ALIASES.items():
        if re.search(rf"\b{alias}\b", annotation):
            value = getattr(importlib.import_module(module), name)
            text = re.sub(r"\b(?:\w+\.)+(\w+)", r"\1", str(value))  # collections.abc.Iterable -> Iterable
            annotation = re.sub(rf"\b{alias}\b", text, annotation)
    return annotation.replace("builtins.", "")


def _default(value) -> str:
    text = repr(value)
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        text = getattr(value, "__name__", None) or type(value).__name__
    return text


def _with_markers(rendered):
    """Insert ``/`` and ``*`` where positional-only and keyword-only parameters begin."""
    import inspect as _i

    out, saw_star = [], False
    kinds = [k for k, _ in rendered]
    for i, (k, text) in enumerate(rendered):
        if k == _i.Parameter.KEYWORD_ONLY and not saw_star:
            out.append("*")
            saw_star = True
        if k == _i.Parameter.VAR_POSITIONAL:
            saw_star = True
        out.append(text)
        if k == _i.Parameter.POSITIONAL_ONLY and (i + 1 == len(kinds) or kinds[i + 1] != k):
            out.append("/")
    return out


def _owner(name: str):
    """The class of a dotted method name (``lucid.optim.SparseAdam.__init__`` -> SparseAdam)."""
    path = name.split(".")[:-1]
    for cut in range(len(path) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(path[:cut]))
        except ImportError:
            continue
        for part in path[cut:]:
            obj = getattr(obj, part, None)
        return obj
    return None


# --- constructors ----------------------------------------------------------------------------
def constructor_docstring(app, what, name, obj, options, lines):
    """autodoc-process-docstring: an ``__init__`` without a docstring of its own says what it makes.

    It then shows the class's Examples, so that every constructor on a page has an example.
    """
    if what != "method" or not name.endswith(".__init__"):
        return
    owner = _owner(name)
    if owner is None:
        return
    own = vars(owner).get("__init__")
    if own is None or not own.__doc__:  # inherited, or none: object's "Initialize self" is no help
        lines[:] = [f"Create a :class:`{owner.__name__}`; its parameters are described above.", ""]
    if not any(line.strip() in ("Examples", ".. rubric:: Examples") for line in lines):
        examples = sections(inspect.getdoc(owner) or "").get("Examples", "").strip("\n")
        if examples:
            lines += ["", ".. rubric:: Examples", ""] + examples.splitlines() + [""]


def setup(app):
    """Register the page generation and the two autodoc hooks."""
    app.connect("builder-inited", lambda app: write_pages(app.srcdir), priority=400)
    app.connect("autodoc-process-signature", typed_signature)
    app.connect("autodoc-process-docstring", constructor_docstring)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
