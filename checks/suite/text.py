"""Text helpers shared by the checkers that read the answer.

Every helper keeps character offsets intact (replacements are one character for one), so a
span found in the prepared text is a span of the answer as written.

Reading an answer costs time in proportion to its length, whatever it holds: the checkers
weigh each claim against its sentence, so a sentence is at most ``MAX_SENTENCE`` characters
long. A run of text with no sentence end past that is read as several sentences, cut at a
space. Written sentences are far shorter (under 300 characters in the real traffic read so
far), so the cut changes nothing a person writes, and a claim repeated without end can no
longer make each of its repetitions reread everything before it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from .decimals import MAX_DIGITS

# Typographic apostrophes a model may write for "I've"; each is one character, like "'".
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'"})

# In a pattern, where an apostrophe is written, any of these may stand.
APOSTROPHE = "['\u2019\u2018\u02bc\u2032]"

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE_END = re.compile(r"[.!?]+(?=[\s\"')\]*_]|\Z)|\n\s*\n|\n(?=\s*(?:[-*#>]|\d+[.)])\s)")

NUMBER_WORDS = {
    "zero": 0,
    "one": 1,
    "a single": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "twenty-four": 24,
    "thirty": 30,
    "forty": 40,
    "forty-five": 45,
    "forty-eight": 48,
    "fifty": 50,
    "sixty": 60,
    "seventy-two": 72,
    "ninety": 90,
}
# The number words of one word, as a pattern (longest first): counts said in words.
COUNT_WORD = "|".join(sorted((w for w in NUMBER_WORDS if " " not in w), key=len, reverse=True))
# Longest first, so "a single" wins over a shorter alternative.
NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"


# "I can" offers ("I can search for that"), except where it introduces a report of what is
# already known ("I can confirm the search returned 3 results").
CAN_OFFER = r"\bI\s+can\b(?!\s+(?:confirm|see|tell\s+you|report|verify)\b)"
# First-person intent: an offer or a plan, never a report of something done. Both checkers
# that read reports out of prose skip what this matches.
OFFER_OR_PLAN = (
    rf"\bI{APOSTROPHE}ll\b|\bI{APOSTROPHE}d\b|\bI\s+(?:will|shall|should|might|may)\b|{CAN_OFFER}"
    rf"|\bI(?:{APOSTROPHE}m|\s+am)\s+going\s+to\b|\blet\s+me\b(?!\s+know)|\bwant\s+me\s+to\b|\bwould\s+you\s+like\b"
)


def normalize_apostrophes(text: str) -> str:
    return text.translate(_APOSTROPHES)


def mask_code(text: str) -> str:
    """Blank out fenced code blocks: a claim typed inside code is code, not a report."""
    return _FENCE.sub(lambda m: " " * len(m.group()), text)


def prepare(text: str) -> str:
    """The answer as the pattern matchers read it: same length, same offsets."""
    return normalize_apostrophes(mask_code(text))


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str

    @property
    def is_question(self) -> bool:
        return self.text.rstrip(" \t\n*_\"')").endswith("?")


# The longest stretch read as one sentence (see the module's docstring).
MAX_SENTENCE = 1000


def sentences(text: str) -> list[Sentence]:
    """Split into sentences (and list items / paragraphs), keeping offsets, in text order."""
    out: list[Sentence] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        _add_sentence(out, text, start, end)
        start = end
    _add_sentence(out, text, start, len(text))
    return out


def _add_sentence(out: list[Sentence], text: str, start: int, end: int) -> None:
    while end - start > MAX_SENTENCE:
        # Cut at the last space of the allowed stretch, so no word is split (a stretch with
        # no space in its second half is cut where the limit falls).
        cut = text.rfind(" ", start + MAX_SENTENCE // 2, start + MAX_SENTENCE) + 1 or start + MAX_SENTENCE
        _add_one(out, text, start, cut)
        start = cut
    _add_one(out, text, start, end)


def _add_one(out: list[Sentence], text: str, start: int, end: int) -> None:
    chunk = text[start:end]
    stripped = chunk.lstrip()
    if stripped.strip():
        begin = start + (len(chunk) - len(stripped))
        out.append(Sentence(begin, end, text[begin:end]))


def sentence_at(sentences_: list[Sentence], offset: int) -> Sentence | None:
    """The sentence holding ``offset``, in a list in text order (as ``sentences`` gives)."""
    at = bisect_right(sentences_, offset, key=lambda sentence: sentence.start) - 1
    if at >= 0 and offset < sentences_[at].end:
        return sentences_[at]
    return None


def parse_number(text: str) -> int | None:
    """A whole number written in figures (thousands separators allowed) or as a word; None
    past MAX_DIGITS digits, which no count has and ``int`` refuses to read."""
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
    tokens = name_tokens(name)
    variants = {re.escape(name)}
    if tokens:
        variants.add(r"[\s_.-]?".join(re.escape(token) for token in tokens))
    alternatives = "|".join(sorted(variants, key=len, reverse=True))
    return rf"(?<![\w.-])(?:{alternatives})(?![\w-]|\.\w)"


def singular(word: str) -> str:
    """A rough singular, enough to compare 'logins' with 'login' and 'entries' with 'entry';
    a word in -us ('status', 'bus') is its own."""
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


def alternation(words: Iterable[str]) -> str:
    """A regular expression matching any of ``words``, the longest first, so that "sept" is
    tried before "sep" (the vocabularies of ``values`` and ``money``)."""
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
