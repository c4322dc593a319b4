"""The Rendered view of an answer: markdown rendered, then sanitized (checks/rendering.py)."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.template import Context, Template
from django.utils.safestring import SafeString

from checks.rendering import ALLOWED_TAGS, render_markdown
from tests.security.xss_corpus import corpus


def test_markdown_becomes_markup() -> None:
    html = render_markdown("# Title\n\n*one* and **two**\n\n- a\n- b\n\n```\ncode\n```")
    assert isinstance(html, SafeString)
    for part in ("<h1>Title</h1>", "<em>one</em>", "<strong>two</strong>", "<li>a</li>", "<pre><code>code"):
        assert part in html


@pytest.mark.parametrize(
    ("text", "href"),
    [
        ("[docs](https://example.org/a?b=1)", 'href="https://example.org/a?b=1"'),
        ("[site](http://example.org)", 'href="http://example.org"'),
        ("<mailto:someone@example.org>", 'href="mailto:someone@example.org"'),
    ],
)
def test_http_and_mailto_links_are_kept_with_rel(text: str, href: str) -> None:
    html = render_markdown(text)
    assert href in html
    assert 'rel="noopener noreferrer nofollow"' in html


@pytest.mark.parametrize(
    "text",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](java&#x73;cript:alert(1))",
        "[x](<javascript:alert(1)>)",
        "[x](vbscript:msgbox(1))",
        "[x](data:text/html,<script>alert(1)</script>)",
        "[x](/p/acme/keys)",
        "[x](//evil.example/)",
        "[x][r]\n\n[r]: javascript:alert(1)",
    ],
)
def test_other_links_lose_their_target(text: str) -> None:
    html = render_markdown(text)
    assert "href" not in html
    assert "javascript" not in html.lower() or "href" not in html


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("![a cat](https://tracker.example/cat.png)", "[image: a cat]"),
        ("![](https://tracker.example/pixel.gif)", "[image: https://tracker.example/pixel.gif]"),
    ],
)
def test_images_are_not_loaded_but_named(text: str, shown: str) -> None:
    html = render_markdown(text)
    assert "<img" not in html
    assert shown in html


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "<svg onload=alert(1)>",
        '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
        '<div style="background:url(javascript:alert(1))">x</div>',
        "<style>body{background:url(https://tracker.example/x)}</style>",
        "<a href=javascript:alert(1)>x</a>",
    ],
)
def test_raw_html_is_shown_as_text(text: str) -> None:
    html = render_markdown(text)
    assert "&lt;" in html
    assert "<script" not in html and "<img" not in html and "<svg" not in html and "<iframe" not in html


class _Markup(HTMLParser):
    """The tags and attributes of some HTML, as a browser's tokenizer would see them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, "", ""))
        self.found.extend((tag, name, value or "") for name, value in attrs)


def test_no_payload_of_the_corpus_leaves_markup_that_could_run() -> None:
    allowed = {"a": {"href", "title", "rel"}, "span": {"class"}, "th": {"align"}, "td": {"align"}}
    for payload in corpus():
        parser = _Markup()
        parser.feed(render_markdown(payload.text))
        for tag, name, value in parser.found:
            assert tag in ALLOWED_TAGS, (payload.id, tag)
            if name:
                assert name in allowed.get(tag, set()), (payload.id, tag, name)
            if name == "href":
                assert urlsplit(value).scheme in ("http", "https", "mailto"), (payload.id, value)


def test_the_filter_renders_through_the_sanitizer(db: Any) -> None:
    template = Template("{% load receipts %}{{ text|as_markdown }}")
    html = template.render(Context({"text": "**bold** <script>alert(1)</script>"}))
    assert "<strong>bold</strong>" in html
    assert "&lt;script&gt;" in html
    assert template.render(Context({"text": None})) == ""


# --- the answer rendered with its claims marked ----------------------------------------------


def test_claims_are_marked_in_the_rendered_answer_with_escaped_attributes() -> None:
    from checks.rendering import render_marked

    text = "Ticket **T-9** moves to <b>queue</b> Q-4 today."
    start = text.index("Q-4")
    label = '"><script>alert(1)</script>'
    html = str(render_marked(text, [(start, start + 3, {"class": "claim", "title": label})]))
    assert '<mark class="claim" title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">Q-4</mark>' in html
    assert "<strong>T-9</strong>" in html and "<b>" not in html and "<script>" not in html


def test_a_claim_holding_markdown_or_a_fence_is_not_placed() -> None:
    """A span that markdown would cut, or an answer that writes the fence characters itself,
    leaves the caller to show the text as written with every mark."""
    from checks.rendering import render_marked

    text = "Bin **A-12** holds 40."
    assert render_marked(text, [(4, 11, {"class": "claim"})]) is None
    assert render_marked("Bin \ue000A-12\ue001", [(5, 9, {"class": "claim"})]) is None
    assert render_marked(text, []) is not None
