"""What a system prompt grants of a thing for each of some unit, and whether a write's records meet
its terms.

A policy often writes a count per unit, once for each tier or class: "If the member is on the
standard plan, 1 free guest pass for each adult visitor and 0 for each junior visitor. If the
member is on the family plan, 2 free guest passes for each adult visitor and 1 for each junior
visitor." A user who asks for "the free passes my plan includes" is given that count times the
units the records list, and the number follows from the records as a fee per head does. So a
grant is read as its count, its noun (``passes``), the words the prompt writes of it (``free``,
and the line's heading before a colon), the unit it is counted per (``adult visitor``) and the
condition its sentence opens with ("If the member is on the family plan,"), and it applies to a
write only where:

- **its terms name what the write's records hold**, whole: of the unit's words, those its sibling
  grants in the sentence do not share ("adult", "junior") form one value held
  (``"visitor_type": "adult"``), and no sibling's is; of the condition's words, those its sibling
  sentences do not share ("standard", "family") form such a value, and no sibling's does (in a
  sentence with no sibling, one of its words is held). "economy" is no part of ``basic_economy``:
  a value is matched whole, never a word of it. The write's records are read nearest first: its
  own arguments, then the results that share a text with them (the booking it names, the member
  whose id it carries), then every result; the nearest that holds any of the rival values
  decides, so a member's other bookings in another class leave the one being changed alone;
- **the records count its unit**: a list under a key naming the unit (``visitors``), nearest
  first as the terms are, gives how many;
- **the user asked for it**, in a message naming the noun and a word the prompt writes of the
  grant ("use my free passes"): an allowance nobody asked to use is the model's choice, not the
  user's, however well it matches the policy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .evidence_index import json_leaves, last_key
from .text import COUNT_WORD, parse_number, singular

# "2 free checked bags for each business passenger": the count, up to three words, the noun, then
# the unit it is counted per, up to the end of its clause.
_GRANT = re.compile(
    rf"\b(\d+|{COUNT_WORD})\s+((?:[a-z-]+\s+){{0,3}}?)([a-z]+)\s+(?:for\s+(?:each|every)|per)\s+"
    r"([a-z][a-z -]{0,40}?)(?=\s*(?:[,.;:)]|\band\b|\bor\b|$))",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORDS = re.compile(r"[a-z][a-z-]*")
# Words that say how a sentence is put, never which case it covers.
_PLAIN = frozenset(
    "a an the is are be if when where whenever for of on in to and or with who whose that this "
    "each every any their its his her your our they he she it".split()
)
MAX_VALUE = 40  # characters of a held text that could be a tier's or a class's name


@dataclass(frozen=True)
class Grant:
    count: Decimal
    noun: str  # the first three letters of the noun's singular
    words: frozenset[str]  # what the prompt writes of it: the words before the noun, the heading
    unit: str  # the unit's noun, singular ("passenger")
    # Each term is the values that name it and its rivals' (siblings') values, its own among them:
    # the unit's words ("basic economy" of basic economy, economy, business), the condition's ("silver").
    terms: tuple[tuple[frozenset[str], frozenset[str]], ...]


def _words(text: str) -> list[str]:
    return _WORDS.findall(text.lower())


def _distinct(own: list[str], siblings: list[list[str]]) -> str:
    """The words of ``own`` that not every one of ``siblings`` (``own`` among them) holds."""
    shared = set(own).intersection(*map(set, siblings))
    return " ".join(word for word in own if word not in shared and word not in _PLAIN)


def _term(
    own: list[str], siblings: list[list[str]], *, alone: list[str]
) -> list[tuple[frozenset[str], frozenset[str]]]:
    """The values a grant's words name, either of which held meets it, against its siblings'; with
    no sibling, any of ``alone``. A clause's unit is named by its distinct words or by
    all its words before the unit ("dedicated" or "dedicated desk" of "dedicated desk seat")."""
    if len(siblings) > 1:

        def forms(words: list[str]) -> frozenset[str]:
            return frozenset(
                {_distinct(words, siblings), " ".join(w for w in words[:-1] if w not in _PLAIN)}
            ) - {""}

        rivals = frozenset().union(*map(forms, siblings))
        return [(forms(own), rivals)] if forms(own) else []
    values = frozenset(alone) - {""}
    return [(values, frozenset())] if values else []


def read(prompt: str) -> list[Grant]:
    """The grants a system prompt writes, each with the terms it applies under."""
    out: list[Grant] = []
    for line in prompt.splitlines():
        heading, colon, _ = line.partition(":")
        heading_words = set(_words(heading)) if colon else set()
        # Each sentence of the line with its grants and the condition written before the first.
        sentences: list[tuple[list[str], list[re.Match[str]]]] = []
        for sentence in _SENTENCE.split(line):
            matches = list(_GRANT.finditer(sentence))
            if matches:
                opening = sentence[: matches[0].start()]
                sentences.append((_words(opening.rpartition(":")[2]), matches))
        for condition, matches in sentences:
            for match in matches:
                noun = singular(match.group(3))[:3]
                unit_words = _words(match.group(4))
                if (count := parse_number(match.group(1))) is None or not unit_words:
                    continue
                peers = [_words(m.group(4)) for m in matches if singular(m.group(3))[:3] == noun]
                siblings = [c for c, ms in sentences if any(singular(m.group(3))[:3] == noun for m in ms)]
                out.append(
                    Grant(
                        count=Decimal(count),
                        noun=noun,
                        words=frozenset(
                            w for w in {*_words(match.group(2)), *heading_words} if w not in _PLAIN
                        ),
                        unit=singular(unit_words[-1]),
                        terms=(
                            *_term(unit_words, peers, alone=[" ".join(unit_words[:-1])]),
                            *_term(condition, siblings, alone=[w for w in condition if w not in _PLAIN]),
                        ),
                    )
                )
    return out


def _texts(value: Any) -> list[str]:
    return [
        text for _, text in json_leaves(value, lambda leaf: isinstance(leaf, str)) if len(text) <= MAX_VALUE
    ]


def _held(records: list[Any]) -> set[str]:
    """The short texts ``records`` hold, as a prompt's words would name them (``basic_economy`` is
    "basic economy")."""
    return {" ".join(_words(text.replace("_", " "))) for record in records for text in _texts(record)}


def _pairs(records: list[Any]) -> set[tuple[str, str]]:
    """The texts ``records`` hold at their top, each with its key."""
    return {
        (key, value)
        for record in records
        if isinstance(record, dict)
        for key, value in record.items()
        if isinstance(value, str)
    }


def nearest_first(arguments: Any, results: list[tuple[Any, Any]]) -> list[list[Any]]:
    """A write's records, nearest first: its arguments; each result (with the arguments of its call)
    that holds at its top a text the write gives under the same key (the booking whose id it
    carries); each that shares such a pair with those (the member the booking belongs to); every
    result."""
    layers: list[list[Any]] = [[arguments]]
    named = _pairs([arguments])
    left = [list(pair) for pair in results]
    for _ in range(2):
        near = [record for record in left if _pairs(record) & named]
        left = [record for record in left if not _pairs(record) & named]
        named = _pairs([part for record in near for part in record])
        layers.append([part for record in near for part in record])
    return [*layers, [part for pair in results for part in pair]]


def applies(grant: Grant, layers: list[list[Any]]) -> bool:
    """Whether the write's records (``nearest_first``) meet the grant's terms."""
    helds = [_held(layer) for layer in layers]
    for forms, rivals in grant.terms:
        named = next((held & (rivals or forms) for held in helds if held & (rivals or forms)), set())
        if not named or not named <= forms:
            return False
    return True


def unit_counts(layers: list[list[Any]], unit: str) -> set[int]:
    """How many of ``unit`` the nearest records that list it list, under a key naming it
    (``passengers`` for passenger)."""
    stem = singular(unit)[:3]
    for layer in layers:
        out: set[int] = set()
        for path, node in json_leaves(layer, lambda leaf: isinstance(leaf, list)):
            words = _words(last_key(path).replace("_", " "))
            if node and words and singular(words[-1])[:3] == stem:
                out.add(len(node))
        if out:
            return out
    return set()


def asked_for(grant: Grant, user_texts: Iterable[str]) -> bool:
    """Whether a user message names the grant's noun and a word the prompt writes of it."""
    for text in user_texts:
        words = {singular(word) for word in _words(text)}
        stems = {word[:3] for word in words}
        if grant.noun in stems and words & {
            singular(w) for w in grant.words if singular(w)[:3] != grant.noun
        }:
            return True
    return False
