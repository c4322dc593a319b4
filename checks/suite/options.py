"""Checker options (CONTRACT.md §3): one JSON object, every key optional.

Every section is validated here, whether or not its checker is registered, so a project's settings are
accepted or refused once, the same way in the dashboard, the API and on the command line. A refusal names
the option and says what would be accepted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any


class OptionsError(ValueError):
    """Options that cannot be used; the message names the option and the accepted values."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}")
        self.option = option


@dataclass(frozen=True)
class Shape:
    """A user-named identifier shape the evidence checker reads as one token."""

    name: str
    pattern: str


@dataclass(frozen=True)
class EvidenceOptions:
    min_digits: int = 4
    figures: bool = True
    decimal_rounding: bool = False
    code: str = "check"
    prior_turn: bool = True
    posture: str = "assist"
    shapes: tuple[Shape, ...] = ()
    exempt_values: tuple[str, ...] = ()
    exempt_patterns: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArgumentsOptions:
    arguments_from: dict[str, tuple[str, ...]] = field(default_factory=dict)  # tool -> its producers


@dataclass(frozen=True)
class NegativeClaimsOptions:
    tools: tuple[str, ...] | None = None  # None: every tool with a read receipt
    unestablished: str = "fallback"


@dataclass(frozen=True)
class EntailmentOptions:
    judge_url: str | None = None  # None (here and in model): the site-wide judge, if any
    model: str | None = None
    timeout_s: float = 30.0
    sample: int = 20
    token_budget: int = 50_000
    daily_token_budget: int = 1_000_000


@dataclass(frozen=True)
class Options:
    evidence: EvidenceOptions = field(default_factory=EvidenceOptions)
    arguments: ArgumentsOptions = field(default_factory=ArgumentsOptions)
    negative_claims: NegativeClaimsOptions = field(default_factory=NegativeClaimsOptions)
    entailment: EntailmentOptions = field(default_factory=EntailmentOptions)


# A rule: what a value must be, and how a refusal says it.
Rule = tuple[Callable[[Any], bool], str]
_BOOL: Rule = (lambda v: isinstance(v, bool), "true or false")
_COUNT: Rule = (lambda v: type(v) is int and v >= 1, "a whole number of at least 1")  # `true` counts nothing


def _one_of(*choices: str) -> Rule:
    return (lambda v: v in choices, f"one of {', '.join(choices)}")


_EVIDENCE = {"min_digits": _COUNT, "figures": _BOOL, "decimal_rounding": _BOOL}
_EVIDENCE |= {"code": _one_of("check", "match"), "prior_turn": _BOOL}
_EVIDENCE |= {"posture": _one_of("assist", "guard", "rails")}
_NEGATIVE_CLAIMS = {"unestablished": _one_of("fallback", "state-searched")}
_URL_START = re.compile(r"https?://[^\s/]+")
_URL = "an http:// or https:// URL of an OpenAI-compatible API"
_SECONDS = "a number of seconds above 0 and at most 600"
_ENTAILMENT: dict[str, Rule] = {
    "judge_url": (lambda v: v is None or (isinstance(v, str) and bool(_URL_START.match(v))), _URL),
    "model": (lambda v: v is None or (isinstance(v, str) and bool(v.strip())), "a non-empty model name"),
    "timeout_s": (lambda v: type(v) in (int, float) and 0 < v <= 600, _SECONDS),
}
_ENTAILMENT |= dict.fromkeys(("sample", "token_budget", "daily_token_budget"), _COUNT)
SECTIONS = ("evidence", "arguments", "negative_claims", "entailment")


def _no_unknown_keys(obj: dict[str, Any], allowed: tuple[str, ...], prefix: str = "") -> None:
    for key in obj:
        if key not in allowed:
            raise OptionsError(f"{prefix}{key}", f"is not an option; accepted here: {', '.join(allowed)}")


def _section(raw: dict[str, Any], name: str, *allowed: str) -> dict[str, Any]:
    value = {} if raw.get(name) is None else raw[name]
    if not isinstance(value, dict):
        raise OptionsError(name, f"must be an object with any of the keys {', '.join(allowed)}")
    _no_unknown_keys(value, allowed, prefix=f"{name}.")
    return value


def _checked(section: dict[str, Any], name: str, default: Any, rules: dict[str, Rule]) -> dict[str, Any]:
    """Each key of ``rules``, as given or its default, refused unless its rule holds."""
    out = {key: section.get(key, getattr(default, key)) for key in rules}
    for key, (ok, wanted) in rules.items():
        if not ok(out[key]):
            raise OptionsError(f"{name}.{key}", f"must be {wanted}, not {out[key]!r}")
    return out


def _pattern(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise OptionsError(where, "must be a non-empty regular expression string")
    try:
        re.compile(value)
    except re.error as exc:
        raise OptionsError(where, f"is not a valid regular expression ({exc})") from None
    return value


def _listed(value: Any, where: str, wanted: str) -> Iterator[tuple[str, Any]]:
    """Each item of a list option, with where it is (``evidence.shapes[0]``); refused unless a list."""
    if not isinstance(value, list):
        raise OptionsError(where, f"must be a list of {wanted}")
    return ((f"{where}[{i}]", item) for i, item in enumerate(value))


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise OptionsError(where, 'must be a list of tool names, e.g. ["find_logins"]')
    return tuple(value)


def _evidence(raw: dict[str, Any]) -> EvidenceOptions:
    s = _section(raw, "evidence", *_EVIDENCE, "shapes", "exempt")
    exempt = s.get("exempt", [])
    for path, item in _listed(exempt, "evidence.exempt", 'strings and {"pattern": …} objects'):
        if isinstance(item, dict):
            _no_unknown_keys(item, ("pattern",), prefix=f"{path}.")
            _pattern(item.get("pattern"), f"{path}.pattern")
        elif not isinstance(item, str) or not item:
            raise OptionsError(
                path, 'must be a non-empty string or an object like {"pattern": "INC[0-9]{6}"}'
            )
    return EvidenceOptions(
        **_checked(s, "evidence", EvidenceOptions(), _EVIDENCE),
        shapes=_shapes(s.get("shapes", [])),
        exempt_values=tuple(item for item in exempt if isinstance(item, str)),
        exempt_patterns=tuple(item["pattern"] for item in exempt if isinstance(item, dict)),
    )


def _shapes(value: Any) -> tuple[Shape, ...]:
    shapes: list[Shape] = []
    for where, item in _listed(value, "evidence.shapes", '{"name": …, "pattern": …} objects'):
        if not isinstance(item, dict):
            raise OptionsError(where, 'must be an object like {"name": "wwn", "pattern": "…"}')
        _no_unknown_keys(item, ("name", "pattern"), prefix=f"{where}.")
        name, at = item.get("name"), f"{where}.name"
        if not isinstance(name, str) or not name.strip():
            raise OptionsError(at, "is required: a non-empty label for values this shape catches")
        if any(shape.name == name.strip() for shape in shapes):  # the name labels flagged values
            raise OptionsError(at, f"{name!r} is used by another shape; give each a distinct name")
        shapes.append(Shape(name=name.strip(), pattern=_pattern(item.get("pattern"), f"{where}.pattern")))
    return tuple(shapes)


def parse_options(raw: dict[str, Any] | Options | None) -> Options:
    """Validated options with the CONTRACT's defaults filled in; raises OptionsError."""
    if raw is None or isinstance(raw, Options):
        return Options() if raw is None else raw
    if not isinstance(raw, dict):
        raise OptionsError("options", f"must be a JSON object with any of the keys {', '.join(SECTIONS)}")
    _no_unknown_keys(raw, SECTIONS)
    evidence = _evidence(raw)
    where = "arguments.arguments_from"
    producers = _section(raw, "arguments", "arguments_from").get("arguments_from", {})
    if not isinstance(producers, dict):
        example = '{"backup_status": ["fleet_report"]}'
        raise OptionsError(where, f"must be an object of tool: [producer tools], e.g. {example}")
    arguments = {tool: _names(names, f"{where}.{tool}") for tool, names in producers.items()}
    negative = _section(raw, "negative_claims", "tools", "unestablished")
    tools = None if negative.get("tools") is None else _names(negative["tools"], "negative_claims.tools")
    checked = _checked(negative, "negative_claims", NegativeClaimsOptions(), _NEGATIVE_CLAIMS)
    negative_claims = NegativeClaimsOptions(tools, **checked)
    if isinstance(raw.get("entailment"), dict) and "api_key_env" in raw["entailment"]:
        # Naming the variable that holds the key let whoever edits options send the site's key anywhere.
        raise OptionsError(
            "entailment.api_key_env",
            "is not accepted: options cannot name where a key is read from. A project's own "
            "judge key is set on its settings page (it is kept write-only and sent only to the "
            "judge_url of these options); the site's judge uses the site's key",
        )
    section = _section(raw, "entailment", *_ENTAILMENT)
    entailment = _checked(section, "entailment", EntailmentOptions(), _ENTAILMENT)
    entailment["timeout_s"] = float(entailment["timeout_s"])
    return Options(evidence, ArgumentsOptions(arguments), negative_claims, EntailmentOptions(**entailment))
