"""Content text to HTML: Markdown (markdown-it-py; raw HTML shown as text, unsafe links and
images dropped) and code highlighting (Pygments)."""

from __future__ import annotations

import functools

from markdown_it import MarkdownIt
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

_SAFE_SCHEMES = ("https:", "http:", "mailto:")
_FORMATTER = HtmlFormatter(nowrap=True)


@functools.lru_cache(maxsize=256)
def _lexer(language: str) -> Lexer:
    try:
        return get_lexer_by_name(language)
    except ClassNotFound:
        return get_lexer_by_name("text")


def highlight_code(code: str, language: str) -> str:
    lexer = _lexer(language)
    spans = highlight(code, lexer, _FORMATTER)
    # Starts with <pre so that markdown-it uses it as the whole fenced block.
    return f'<pre class="highlight"><code class="language-{lexer.aliases[0] if lexer.aliases else "text"}">{spans}</code></pre>'


def _is_safe_link(url: str) -> bool:
    """Allow web links, mail links and relative links; refuse javascript:, data: and the like."""
    lowered = "".join(url.split()).lower()
    if ":" not in lowered.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]:
        return True
    return lowered.startswith(_SAFE_SCHEMES)


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table").disable("image")
    md.validateLink = _is_safe_link  # type: ignore[method-assign]
    md.options["highlight"] = lambda code, lang, _attrs: highlight_code(code, lang or "text")
    return md


_MD = _markdown()


def render_markdown(text: str) -> Markup:
    """Return Markdown rendered to HTML with raw HTML shown as text and unsafe links dropped."""
    return Markup(_MD.render(text))


def render_inline(text: str) -> Markup:
    """Return one line of Markdown rendered without a wrapping paragraph."""
    return Markup(_MD.renderInline(text))
