"""Sphinx configuration of ocolearn's documentation site (``make docs``: docs/_build/html).

Why Sphinx: the site is written in Markdown (MyST-parser) and its reference is rendered from the
code (autodoc reads the docstrings as they are written, napoleon their Google/NumPy sections; the
CLI and config pages come from ``docs/_ext/ocolearn_docs.py``, which reads the argument parser and
the config checker). Sphinx is what optax and scikit-learn use; Material for MkDocs, river's
generator, is in maintenance mode. The theme is furo: well kept, no network at build or read time,
and Sphinx's own search index works from the built folder opened as file://.

The build runs with warnings as errors (``-W --keep-going``) and nitpicky: a cross-reference to a
name that has no page fails it. Names of other projects (NumPy, JAX, optax, ...) have no inventory
offline (no intersphinx: the build reaches no network), so ``nitpick_ignore_regex`` lets those
through, and only those.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "docs" / "_ext")]

import ocolearn  # noqa: E402  (first: XLA's CPU flags before anything starts JAX)

project = "ocolearn"
author = "the ocolearn authors"
copyright = "the ocolearn authors, MIT licence"
release = version = ocolearn.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "ocolearn_docs",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "**/.pytest_cache"]

myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = True

nitpicky = True
# Other projects' names (no inventory offline) and the private or type-variable names annotations carry.
nitpick_ignore_regex = [
    (r"py:.*", r"(np|numpy|jax|jnp|optax|scipy|sklearn|pandas|polars|mlflow|typing|collections|pathlib)\b.*"),
    (r"py:.*", r"(Array|ArrayLike|PRNGKeyArray|Any|Callable|Iterable|Iterator|Sequence|Mapping|NamedTuple)"),
    (r"py:.*", r"(ndarray|optional|callable|array-like|array|bool|int|float|str|tuple|list|dict|None|Path)"),
    (r"py:.*", r".*\._[A-Za-z].*|_[A-Za-z].*"),
]
# ocolearn's own types that annotations name but no page documents (internal to the streaming runs).
nitpick_ignore = [("py:class", "ocolearn.data.stream.Source"), ("py:class", "ocolearn.progress.Progress")]

html_theme = "furo"
html_title = f"ocolearn {release}"
html_static_path = []
html_copy_source = False
html_show_sphinx = False
html_theme_options = {"navigation_with_keys": True}
