"""What a system prompt grants of a thing for each of some unit, and whether a write's records meet
its terms.

A policy often writes a count per unit, once for each tier or class: "If the member is on the
standard plan, 1 free guest pass for each adult visitor and 0 for each junior visitor. If the
member is on the family plan, 2 free guest passes for each adult visitor and 1 for each junior
visitor." A user who asks for "the free passes my plan includes" is given that count times the
units the records list, and the number follows from the records as a fee per head does. So a
grant is read as its count, its noun (``passes``; a clause with none, "1 for each junior visitor",
grants the noun before it), the words the prompt writes of it (``free``), the unit it is counted
per (``adult visitor``) and the condition its sentence opens with ("If the member is on the family
plan,"; where the sentence opens with none, the heading of its line, "- Family plan: ..."). A limit
("up to 4 guests per booking", "at most", "a maximum of") grants nothing. A grant applies to a
write only where:

- **its terms name what the write's records hold**, whole: of the unit's words, those its sibling
  grants in the sentence do not share ("adult", "junior") form one value held
  (``"visitor_type": "adult"``), and no sibling's is (a list of adults and juniors meets neither);
  of the condition's words, those its sibling sentences (of the same noun, anywhere in the prompt)
  do not share ("standard", "family") form such a value, and no sibling's does. A condition with
  no sibling to tell its value from the words around it applies to no record. "economy" is no
  part of ``basic_economy``: a value is matched whole, never a word of it. The write's records are
  read nearest first: its own arguments, then the results that hold at their top a text the write
  gives under the same key (the booking whose id it carries), then those that share such a pair
  with them (the member the booking belongs to), then every result; the nearest that holds any of
  the rival values decides, so a member's other bookings in another class leave the one being
  changed alone;
- **the records count its unit**: a list under a key naming the unit (``visitors``), nearest
  first as the terms are, gives how many;
- **the key is the grant's**: it names the grant's noun, and its other words are the grant's own
  ("free") or say a count ("total"): ``paid_hours`` and ``nonfree_bags`` take no free allowance;
- **the user asked for it**, in a sentence naming the noun and a word the prompt writes of the
  grant, with no negation ("use my free passes", never "don't use the free passes"): an allowance
  nobody asked to use is the model's choice, not the user's, however well it matches the policy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .evidence_index import json_leaves
from .text import COUNT_WORD, name_tokens, parse_number, sentences, singular

# "2 free checked bags for each business passenger", "and 0 for each junior visitor": the count, up to
# three words and the noun (or none: the noun before it), then the unit it is counted per, up to the
# end of its clause.
_GRANT = re.compile(
    rf"(?<![\w.,])(\d{{1,3}}(?:,\d{{3}})+|\d+|{COUNT_WORD})(?![.,]\d)\s+(?:((?:[a-z-]+\s+){{0,3}}?)([a-z]+)\s+)?"
    r"(?:for\s+(?:each|every)|per)\s+([a-z][a-z -]{0,40}?)(?=\s*(?:[,.;:)]|\band\b|\bor\b|$))",
    re.I,
)
# Right before a count, these make it a limit, not a grant.
_LIMIT = re.compile(
    r"\b(?:up\s+to|at\s+most|max(?:imum)?(?:\s+of)?|no\s+more\s+than|limit\s+of|cap\s+of)\s*$", re.I
)
_WORDS = re.compile(r"[a-z][a-z-]*")
# Words that say how a sentence is put, never which case it covers.
_PLAIN = frozenset(
    "a an the is are be if when where whenever for of on in to and or with who whose that this "
    "each every any their its his her your our they he she it".split()
)
# A key's words that say it counts, beside the grant's own words: ``total_bags`` takes the allowance.
_COUNTING = frozenset("total num number count qty quantity".split())
_NEGATION = re.compile(r"\b(?:not|no|never|without|don't|dont|won't|skip)\b|n't\b", re.I)
MAX_VALUE = 40  # characters of a held text that could be a tier's or a class's name
MAX_GRANTS = 60  # grants read from one prompt: a policy's table, not a document


@dataclass(frozen=True)
class Grant:
    count: Decimal
    noun: str  # the first three letters of the noun's singular
    words: frozenset[str]  # what the prompt writes of it between the count and the noun ("free")
    unit: str  # the unit's noun, singular ("passenger")
    # Each term is the values that name it and its rivals' (siblings') values, its own among them:
    # the unit's words ("basic economy" of basic economy, economy, business), the condition's ("silver").
    terms: tuple[tuple[frozenset[str], frozenset[str]], ...]
    unit_class: bool = False  # the first term is the unit's class ("basic economy" passenger)


@dataclass
class _Clause:
    count: int
    noun: str
    words: frozenset[str]
    unit_words: list[str]
    condition: list[str]  # its sentence's opening, or its line's heading


def _words(text: str) -> list[str]:
    return _WORDS.findall(text.lower())


def _content(words: list[str]) -> list[str]:
    return [word for word in words if word not in _PLAIN]


def _distinct(own: list[str], siblings: list[list[str]]) -> str:
    """The words of ``own`` that not every one of ``siblings`` (``own`` among them) holds."""
    shared = set(own).intersection(*map(set, siblings))
    return " ".join(word for word in _content(own) if word not in shared)


def _forms(words: list[str], siblings: list[list[str]], *, with_lead: bool) -> frozenset[str]:
    """The values that name a clause against its siblings: its distinct words, and (of a unit) all
    its words before the unit ("dedicated" or "dedicated desk" of "dedicated desk seat")."""
    lead = " ".join(_content(words[:-1])) if with_lead else ""
    return frozenset({_distinct(words, siblings), lead}) - {""}


def _clauses(prompt: str) -> list[list[_Clause]]:
    """The grants of each sentence of the prompt, in order."""
    out: list[list[_Clause]] = []
    for line in prompt.splitlines():
        heading, colon, _ = line.partition(":")
        for sentence in sentences(line):
            found: list[_Clause] = []
            noun, words = "", frozenset[str]()
            for match in _GRANT.finditer(sentence.text):
                count, before, written, unit = match.groups()
                if written:
                    noun, words = singular(written)[:3], frozenset(_content(_words(before or "")))
                number = parse_number(count)
                if not noun or number is None or _LIMIT.search(sentence.text[: match.start()]):
                    continue
                unit_words = _words(unit.split(" of ")[0])
                opening = _content(_words(sentence.text[: match.start()].rpartition(":")[2]))
                if found:
                    opening = found[0].condition
                elif not opening and colon and sentence.start < len(heading):
                    opening = _content(_words(heading))
                if unit_words:
                    found.append(_Clause(number, noun, words, unit_words, opening))
            if found:
                out.append(found)
    return out


def read(prompt: str) -> list[Grant]:
    """The grants a system prompt writes, each with the terms it applies under."""
    grouped: list[list[_Clause]] = []
    for clauses in _clauses(prompt):  # the first MAX_GRANTS: a policy's table, not a document
        grouped.append(clauses[: MAX_GRANTS - sum(map(len, grouped))])
        if sum(map(len, grouped)) >= MAX_GRANTS:
            break
    # Per noun, the conditions of the sentences that grant it, and the values that tell them apart.
    siblings: dict[str, list[list[str]]] = {}
    for clauses in grouped:
        for noun in dict.fromkeys(c.noun for c in clauses):
            siblings.setdefault(noun, []).append(clauses[0].condition)
    condition_rivals = {
        noun: frozenset().union(*(_forms(c, conditions, with_lead=False) for c in conditions))
        for noun, conditions in siblings.items()
    }
    out: list[Grant] = []
    for clauses in grouped:
        for clause in clauses:
            peers = [c.unit_words for c in clauses if c.noun == clause.noun]
            terms: list[tuple[frozenset[str], frozenset[str]]] = []
            if len(peers) > 1:
                rivals = frozenset().union(*(_forms(p, peers, with_lead=True) for p in peers))
                terms.append((_forms(clause.unit_words, peers, with_lead=True), rivals))
            elif lead := " ".join(_content(clause.unit_words[:-1])):
                terms.append((frozenset({lead}), frozenset()))
            unit_class = bool(terms)
            conditions = siblings[clause.noun]
            if len(conditions) > 1:
                own = _forms(clause.condition, conditions, with_lead=False)
                terms.append((own, condition_rivals[clause.noun]))
            elif clause.condition:
                continue  # a condition alone: which of its words name the case, nothing tells
            if any(not forms for forms, _ in terms):
                continue
            unit = singular(clause.unit_words[-1])
            out.append(
                Grant(Decimal(clause.count), clause.noun, clause.words, unit, tuple(terms), unit_class)
            )
    return out


def _texts(value: Any) -> list[str]:
    return [
        text for _, text in json_leaves(value, lambda leaf: isinstance(leaf, str)) if len(text) <= MAX_VALUE
    ]


def _held(records: list[Any]) -> set[str]:
    """The short texts ``records`` hold, as a prompt's words would name them (``basic_economy`` and
    ``basic-economy`` are "basic economy")."""
    return {
        " ".join(_words(text.replace("_", " ").replace("-", " ")))
        for record in records
        for text in _texts(record)
    }


def _pairs(records: list[Any]) -> set[tuple[str, str]]:
    """The texts ``records`` hold at their top, each with its key."""
    return {
        (key, value)
        for record in records
        if isinstance(record, dict)
        for key, value in record.items()
        if isinstance(value, str)
    }


@dataclass
class Records:
    """A write's records, nearest first (the module's docstring), with the texts each layer holds."""

    layers: list[list[Any]]
    helds: list[set[str]]

    @classmethod
    def of(cls, arguments: Any, results: list[tuple[Any, Any]]) -> Records:
        layers: list[list[Any]] = [[arguments]]
        named = _pairs([arguments])
        left = [list(pair) for pair in results]
        for _ in range(2):
            near = [record for record in left if _pairs(record) & named]
            left = [record for record in left if not _pairs(record) & named]
            named = _pairs([part for record in near for part in record])
            layers.append([part for record in near for part in record])
        layers.append([part for pair in results for part in pair])
        return cls(layers, [_held(layer) for layer in layers])

    def counts(self, grant: Grant) -> set[int]:
        """How many of the grant's unit its records list, where they meet its terms (none where they
        do not): the nearest of the write's own records that list the unit, and no farther than the
        one that told its class (a desk's seats, not another desk's)."""
        farthest = len(self.layers) - 2  # the last layer, every result, names no unit of the write
        for index, (forms, rivals) in enumerate(grant.terms):
            wanted = rivals or forms
            at = next((i for i, held in enumerate(self.helds) if held & wanted), None)
            if at is None or not self.helds[at] & wanted <= forms:
                return set()
            if index == 0 and grant.unit_class:
                farthest = min(farthest, at)
        for layer in self.layers[: farthest + 1]:
            out = {
                len(node)
                for path, node in json_leaves(layer, lambda leaf: isinstance(leaf, list) and bool(leaf))
                if (words := name_tokens(path.rsplit(".", 1)[-1].split("[")[0]))
                and singular(words[-1]) == grant.unit
            }
            if out:
                return out
        return set()


def takes(grant: Grant, key: str) -> bool:
    """Whether ``key`` names the grant's noun and otherwise only its words or a count ("total")."""
    words = [singular(word) for word in name_tokens(key)]
    nouns = [word for word in words if word[:3] == grant.noun]
    return bool(nouns) and all(
        word in grant.words or word in _COUNTING for word in words if word not in nouns
    )


def asked_for(grant: Grant, user_texts: Iterable[str]) -> bool:
    """Whether a user's sentence names the grant's noun and a word the prompt writes of it, with no
    negation and no count of its own ("2 hours" asks for two, not for the allowance)."""
    for text in user_texts:
        for sentence in sentences(text):
            tokens = re.findall(r"[\w-]+", sentence.text.lower())
            said = {singular(word) for word in _words(sentence.text)}
            counted = any(
                parse_number(word) is not None and singular(after)[:3] == grant.noun
                for word, after in zip(tokens, tokens[1:], strict=False)
            )
            if (
                any(word[:3] == grant.noun for word in said)
                and said & grant.words
                and not counted
                and not _NEGATION.search(sentence.text)
            ):
                return True
    return False
