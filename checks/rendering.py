"""Model output rendered as markdown, for reading, without trusting a byte of it.

Everywhere else Receipts shows untrusted text (answers, tool results, tool names, titles)
as plain text that Django's templates escape. The one exception is the *Rendered* view of
an answer: there the text is turned into HTML by the ``markdown`` package and the HTML is
then cleaned by nh3 (a sanitizer built on html5ever and ammonia), and only nh3's output is
marked safe. Three layers, each enough on its own for what it guards:

1. Markdown is parsed with its raw-HTML rules removed, so ``<script>`` or ``<img onerror>``
   written in the answer comes out as escaped text, never as markup.
2. Images written in markdown are not loaded: each becomes the text ``[image: alt]`` (or
   ``[image: url]`` when it has no alt text), so no remote request leaves the reviewer's
   browser and nothing can track who read the answer.
3. nh3 keeps an allowlist of tags and attributes; links keep only ``http``, ``https`` and
   ``mailto`` targets (a ``javascript:``, ``data:`` or ``vbscript:`` link loses its href)
   and always carry ``rel="noopener noreferrer nofollow"``.

The page's Content-Security-Policy (no inline script) stays on top of all three.

An answer on the turn page is shown rendered with its claims marked (``render_marked``):
each claim's span is fenced in the text by two private-use characters before rendering, and
only after nh3 has cleaned the HTML are the fences turned into ``<mark>`` tags built here,
their attributes escaped. A claim whose text holds markdown's own marks (``*``, ``_``, a
backtick, a bracket, a line break) could open in one element and close in another: such an
answer is shown as written, with every mark, and rendered on demand.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET  # noqa: S405  builds markdown's own tree, never parses input
from typing import Any
from urllib.parse import urlsplit

import markdown
import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString
from markdown.treeprocessors import Treeprocessor

# What a rendered answer may contain: text structure, code, tables and links. No images,
# media, forms, frames, styles or scripts, and no attribute that could carry one.
ALLOWED_TAGS = frozenset(
    {
        "a", "p", "br", "hr", "blockquote", "pre", "code", "em", "strong", "b", "i", "del", "s",
        "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "span", "sub", "sup", "kbd",
        "table", "thead", "tbody", "tr", "th", "td", "dl", "dt", "dd",
    }
)  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}, "ol": {"start"}}
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"
# Removed together with everything inside them (not just their tags).
DROPPED_WITH_CONTENT = frozenset({"script", "style", "iframe", "object", "embed", "template", "noscript"})
IMAGE_CLASS = "md-image"
MAX_MARKDOWN_CHARS = 200_000  # beyond this the rendered view shows the start only


class _ImagesAsText(Treeprocessor):
    """Replaces every image with a text placeholder: nothing is fetched on render."""

    def run(self, root: ET.Element) -> None:
        for element in root.iter():
            if element.tag != "img":
                continue
            alt = (element.get("alt") or "").strip()
            src = (element.get("src") or "").strip()
            element.attrib.clear()
            element.tag = "span"
            element.set("class", IMAGE_CLASS)
            element.text = f"[image: {alt or src or 'no address'}]"


class _UntrustedMarkdown(markdown.Extension):
    """Markdown without its raw-HTML rules, and with images turned into text."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802  (Markdown's API name)
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_ImagesAsText(md), "images_as_text", 1)


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    """Links only to absolute http(s) and mailto addresses: a relative link would point
    into this site with the reviewer's session, a scheme-less one could be anything."""
    if tag == "a" and attribute == "href":
        scheme = urlsplit(value.strip()).scheme.lower()
        return value if scheme in LINK_SCHEMES else None
    return value


def sanitize(html: str) -> str:
    """HTML cut down to the allowlist by nh3 (tags, attributes, link schemes, rel)."""
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        allowed_classes={"span": {IMAGE_CLASS}},
        url_schemes=set(LINK_SCHEMES),
        link_rel=LINK_REL,
        attribute_filter=_keep_attribute,
        strip_comments=True,
        generic_attribute_prefixes=set(),
    )


def markdown_to_html(text: str) -> str:
    """The markdown as (unsanitized) HTML; callers must pass it through ``sanitize``."""
    md = markdown.Markdown(
        extensions=[_UntrustedMarkdown(), "fenced_code", "tables", "sane_lists"],
        output_format="html",
    )
    return md.convert(text[:MAX_MARKDOWN_CHARS])


def render_markdown(text: Any) -> SafeString:
    """Untrusted markdown as HTML a template may insert unescaped.

    This is the only place in Receipts where escaping is delegated to a sanitizer: the
    SafeString is built from nh3's output and nothing else, so whatever the model wrote
    is either escaped by Markdown or removed by nh3 before it reaches the page.
    """
    cleaned = sanitize(markdown_to_html("" if text is None else str(text)))
    return SafeString(cleaned)  # nh3's output only: see the module docstring


# Private-use characters that fence a claim in the text while markdown and nh3 read it.
_OPEN, _CLOSE = "\ue000", "\ue001"
_MARKDOWN_MARKS = frozenset("*_`[]<>|#\\\n")


def render_marked(text: str, marks: list[tuple[int, int, dict[str, str]]]) -> SafeString | None:
    """The answer rendered as ``render_markdown`` renders it, with each ``(start, end,
    attributes)`` span wrapped in a ``<mark>`` of those attributes (escaped); None where a
    span cannot be placed (it holds a mark of markdown's, or rendering lost its fence), so
    the caller shows the text as written with every mark instead. Spans must not overlap."""
    text = "" if text is None else str(text)
    kept = sorted(marks, key=lambda m: m[0])
    clean = text.replace(_OPEN, "").replace(_CLOSE, "")
    if len(clean) != len(text) or len(text) > MAX_MARKDOWN_CHARS:
        return None  # the answer writes a fence itself, or is rendered cut short
    if any(not _MARKDOWN_MARKS.isdisjoint(text[start:end]) for start, end, _ in kept):
        return None
    fenced, position = [], 0
    for start, end, _ in kept:
        fenced += [clean[position:start], _OPEN, clean[start:end], _CLOSE]
        position = end
    fenced.append(clean[position:])
    html = sanitize(markdown_to_html("".join(fenced)))
    tags = iter(
        "<mark " + " ".join(f'{name}="{escape(value)}"' for name, value in attributes.items()) + ">"
        for _, _, attributes in kept
    )
    opened = html.count(_OPEN)
    if opened != len(kept) or html.count(_CLOSE) != opened:
        return None  # a fence was lost in rendering (inside a code block's escaping, say)
    out = "".join(part if i == 0 else next(tags) + part for i, part in enumerate(html.split(_OPEN)))
    return SafeString(out.replace(_CLOSE, "</mark>"))  # nh3's output and tags built here only
