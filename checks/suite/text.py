"""Text helpers shared by the checkers that read the answer.

Every helper keeps character offsets (replacements are one character for one), so a span
found in the prepared text is a span of the answer as written. A sentence is at most
``MAX_SENTENCE`` characters: a longer run with no sentence end is read as several, cut at a
space, so an answer costs time in proportion to its length however its claims repeat.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .decimals import MAX_DIGITS

# Typographic apostrophes a model may write for "I've"; in a pattern, APOSTROPHE matches any.
_APOSTROPHES = str.maketrans(dict.fromkeys("\u2019\u2018\u02bc\u2032", "'"))
APOSTROPHE = "['\u2019\u2018\u02bc\u2032]"

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE_END = re.compile(r"[.!?]+(?=[\s\"')\]*_]|\Z)|\n\s*\n|\n(?=\s*(?:[-*#>]|\d+[.)])\s)")

_SMALL = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
_SMALL += " sixteen seventeen eighteen nineteen twenty"
NUMBER_WORDS = dict(zip(_SMALL.split(), range(21), strict=True))
# Every number below a hundred in words, the tens with their units hyphened ("seventy-two").
_TENS = dict(
    zip("twenty thirty forty fifty sixty seventy eighty ninety".split(), range(20, 100, 10), strict=True)
)
NUMBER_WORDS |= _TENS | {
    f"{tens}-{unit}": n + u for tens, n in _TENS.items() for unit, u in list(NUMBER_WORDS.items())[1:10]
}
NUMBER_WORDS |= {"a single": 1}


def alternation(words: Iterable[str]) -> str:
    """A regular expression matching any of ``words``, the longest first ("sept" before "sep")."""
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


COUNT_WORD = alternation(w for w in NUMBER_WORDS if " " not in w)  # counts said in one word
NUMBER = rf"(?:\d{{1,3}}(?:,\d{{3}})+|\d+|{alternation(NUMBER_WORDS)})"


# First-person intent: an offer or a plan, never a report of something done. "I can" offers
# ("I can search for that") unless it introduces what is known ("I can confirm the search…").
OFFER_OR_PLAN = (
    rf"\bI{APOSTROPHE}ll\b|\bI{APOSTROPHE}d\b|\bI\s+(?:will|shall|should|might|may)\b"
    r"|\bI\s+can\b(?!\s+(?:confirm|see|tell\s+you|report|verify)\b)"
    rf"|\bI(?:{APOSTROPHE}m|\s+am)\s+going\s+to\b|\blet\s+me\b(?!\s+know)|\bwant\s+me\s+to\b|\bwould\s+you\s+like\b"
)


def prepare(text: str) -> str:
    """The answer as matched: fenced code blanked (a claim in code is no report), apostrophes made plain."""
    return _FENCE.sub(lambda m: " " * len(m.group()), text).translate(_APOSTROPHES)


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str

    @property
    def is_question(self) -> bool:
        return self.text.rstrip(" \t\n*_\"')").endswith("?")


MAX_SENTENCE = 1000  # the longest stretch read as one sentence (see the module's docstring)


def sentences(text: str) -> list[Sentence]:
    """Split into sentences (and list items / paragraphs), keeping offsets, in text order."""
    out: list[Sentence] = []
    start = 0
    for end in [match.end() for match in _SENTENCE_END.finditer(text)] + [len(text)]:
        while start < end:  # a stretch over the limit is cut at its last space (else at the limit)
            limit = start + MAX_SENTENCE
            cut = end if end <= limit else text.rfind(" ", limit - MAX_SENTENCE // 2, limit) + 1 or limit
            stripped = text[start:cut].lstrip()
            if stripped.rstrip():
                out.append(Sentence(cut - len(stripped), cut, stripped))
            start = cut
    return out


def sentence_at(sentences_: list[Sentence], offset: int) -> Sentence | None:
    """The sentence holding ``offset``, in a list in text order (as ``sentences`` gives)."""
    at = bisect_right(sentences_, offset, key=lambda sentence: sentence.start) - 1
    return sentences_[at] if at >= 0 and offset < sentences_[at].end else None


def find_all(text: str, words: Iterable[str]) -> Iterator[int]:
    """Each place each of ``words`` stands in ``text`` (overlaps too), word by word."""
    for word in words:
        at = text.find(word)
        while at != -1:
            yield at
            at = text.find(word, at + 1)


def parse_number(text: str) -> int | None:
    """A whole number in figures (commas allowed) or a word; None past MAX_DIGITS digits (``int`` refuses)."""
    word = re.sub(r"\s+", " ", text.strip().lower())
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    digits = word.replace(",", "")
    return int(digits) if digits.isdigit() and len(digits) <= MAX_DIGITS else None


def name_tokens(name: str) -> list[str]:
    """A tool name's words: `find_logins` and `findLogins` are both find, logins."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [token.lower() for token in re.split(r"[^A-Za-z0-9]+", spaced) if token]


def name_pattern(name: str) -> str:
    """A regex for a tool's name as written or with its words spaced, hyphenated or joined."""
    spaced = r"[\s_.-]?".join(re.escape(token) for token in name_tokens(name))  # "" for no words
    alternatives = "|".join(sorted({re.escape(name), spaced} - {""}, key=len, reverse=True))
    return rf"(?<![\w.-])(?:{alternatives})(?![\w-]|\.\w)"


def singular(word: str) -> str:
    """A rough singular ('logins': 'login', 'entries': 'entry'); a word in -us ('status') is its own."""
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us")) and len(word) > 3:
        return word[:-1]
    return word


def clause_start(text: str, sentence: Sentence, offset: int) -> int:
    """Where the clause holding `offset` begins: after a comma, semicolon, colon or dash."""
    head = text[sentence.start : offset]
    cut = max((m.end() for m in re.finditer(r"[,;:\u2014\u2013(]\s*|\s(?:and|but|so)\s+", head)), default=0)
    begin = sentence.start + cut
    while begin < offset and text[begin] in " \t\n*_#>-":
        begin += 1
    return begin
