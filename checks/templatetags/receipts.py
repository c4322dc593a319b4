"""Template filters of Receipts.

``{{ text|as_markdown }}`` shows untrusted markdown (a model's answer) rendered and then
sanitized by nh3; see checks/rendering.py. It is the one filter whose output is not escaped
by the template, because escaping is delegated there to the sanitizer: everywhere else,
untrusted text goes through Django's autoescaping as plain text.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from ..finding_titles import title_of
from ..rendering import render_markdown

register = template.Library()


@register.filter(name="as_markdown")
def as_markdown(text: Any) -> SafeString:
    """The text as markdown, rendered, with everything outside nh3's allowlist removed."""
    return render_markdown(text)


@register.filter(name="code_title")
def code_title(code: Any) -> str:
    """A finding code's plain title (``finding_titles``)."""
    return title_of(str(code))
