"""Answers that a full-text search ranks beside another, within one project.

The judge is asked whether such neighbours contradict each other, so the search only has to
put answers about the same thing side by side: SQLite's FTS5 on the embedded default,
PostgreSQL's full-text search in production (see migration 0005).
"""

from __future__ import annotations

import re
from typing import Any

from django.db import connection
from django.db.models.expressions import RawSQL

from .models import Conversation, Turn

_WORD = re.compile(r"[a-z0-9]{3,}")
# Words too common to say what an answer is about.
_STOP = frozenset(
    "the and but for with from this that these those you your our their are was were been being "
    "have has had will would can could should may might there here what which who when where how "
    "all any some than then also just only into about over under out not yes please thanks thank".split()
)
MAX_TERMS = 24


def terms(text: str) -> list[str]:
    """The distinctive words of a text, at most MAX_TERMS, in the order they first appear."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in _STOP:
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


# The queue's text filter: each word of the query, as the start of a word of the answer.
_QUERY_WORD = re.compile(r"[^\W_]+")
MAX_QUERY_WORDS = 8


def turns_with_words(text: str) -> RawSQL | None:
    """A subquery of the ids of turns whose answer has a word starting with each word of
    ``text`` ("refund ORD-12" finds "Refunds for ORD-1234"), read from the full-text index
    instead of scanning every answer; None when ``text`` has no word to look for."""
    words = _QUERY_WORD.findall(text.lower())[:MAX_QUERY_WORDS]
    if not words:
        return None
    if connection.vendor == "postgresql":
        # The expression is the index's own (migration 0005), so the index serves it. The
        # words hold only letters and digits, so none of tsquery's operators can reach it.
        # PostgreSQL reads "ORD-1234" as the words "ord" and "-1234", so a number is also
        # looked for with the minus sign in front.
        query = " & ".join(f"({word}:* | -{word}:*)" if word[0].isdigit() else f"{word}:*" for word in words)
        return RawSQL(
            "SELECT id FROM checks_turn "
            "WHERE to_tsvector('english'::regconfig, answer) @@ to_tsquery('english'::regconfig, %s)",
            [query],
        )
    query = " ".join(f'"{word}"*' for word in words)
    return RawSQL("SELECT rowid FROM checks_turn_fts WHERE checks_turn_fts MATCH %s", [query])


def similar_answers(conversation: Conversation, answer: str, limit: int = 2) -> list[dict[str, Any]]:
    """Turns of the project's other conversations whose answers rank best against ``answer``."""
    words = terms(answer)
    if not words:
        return []
    if connection.vendor == "postgresql":
        sql = (
            "SELECT t.id FROM checks_turn t WHERE t.project_id = %s AND t.conversation_id <> %s "
            "AND to_tsvector('english'::regconfig, t.answer) @@ to_tsquery('english'::regconfig, %s) "
            "ORDER BY ts_rank(to_tsvector('english'::regconfig, t.answer), "
            "to_tsquery('english'::regconfig, %s)) DESC, t.id LIMIT %s"
        )
        query = " | ".join(words)
        params: list[Any] = [conversation.project_id, conversation.pk, query, query, limit]
    elif connection.vendor == "sqlite":
        sql = (
            "SELECT rowid FROM checks_turn_fts WHERE checks_turn_fts MATCH %s "
            "AND project_id = %s AND conversation_id <> %s ORDER BY rank, rowid LIMIT %s"
        )
        query = " OR ".join(f'"{word}"' for word in words)
        params = [query, conversation.project_id, conversation.pk, limit]
    else:
        return []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids = [row[0] for row in cursor.fetchall()]
    found = {t.pk: t for t in Turn.objects.filter(pk__in=ids).select_related("conversation")}
    return [
        {
            "external_id": found[pk].conversation.external_id,
            "turn": found[pk].index,
            "answer": found[pk].answer,
        }
        for pk in ids
        if pk in found
    ]
