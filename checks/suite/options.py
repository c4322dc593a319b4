"""Checker options (CONTRACT.md §3): one JSON object, every key optional.

Every section is validated here, including those whose checkers are not registered yet, so
a project's settings are refused or accepted once, the same way in the dashboard, the API
and on the command line. A refusal names the option and says what would be accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

POSTURES = ("assist", "guard", "rails")
CODE_MODES = ("check", "match")
UNESTABLISHED = ("fallback", "state-searched")


class OptionsError(ValueError):
    """Options that cannot be used; the message names the option and the accepted values."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}")
        self.option = option


@dataclass(frozen=True)
class Shape:
    """A user-named identifier shape the evidence checker should read as one token."""

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
    # tool -> the tools whose results may supply its arguments
    arguments_from: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class NegativeClaimsOptions:
    tools: tuple[str, ...] | None = None  # None: every tool with a read receipt
    unestablished: str = "fallback"


@dataclass(frozen=True)
class EntailmentOptions:
    # None here means "use the site-wide judge from the environment, if any".
    judge_url: str | None = None
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


# --- small validators ---------------------------------------------------------------------
# ``where`` is the option's dotted name (``evidence.figures``); its last part is the key.


def _section(raw: dict[str, Any], name: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    value = raw.get(name, {})
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise OptionsError(name, f"must be an object with any of the keys {', '.join(allowed)}")
    _no_unknown_keys(value, allowed, prefix=f"{name}.")
    return value


def _no_unknown_keys(obj: dict[str, Any], allowed: tuple[str, ...], prefix: str = "") -> None:
    for key in obj:
        if key not in allowed:
            where = f"{prefix}{key}"
            raise OptionsError(where, f"is not an option; accepted here: {', '.join(allowed)}")


def _bool(section: dict[str, Any], where: str, default: bool) -> bool:
    value = section.get(where.rpartition(".")[2], default)
    if not isinstance(value, bool):
        raise OptionsError(where, f"must be true or false, not {value!r}")
    return value


def _choice(section: dict[str, Any], where: str, default: str, choices: tuple[str, ...]) -> str:
    value = section.get(where.rpartition(".")[2], default)
    if value not in choices:
        raise OptionsError(where, f"must be one of {', '.join(choices)}, not {value!r}")
    return value


def _whole(section: dict[str, Any], where: str, default: int, minimum: int) -> int:
    value = section.get(where.rpartition(".")[2], default)
    # bool is an int in Python; `true` is not a number of anything.
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise OptionsError(where, f"must be a whole number of at least {minimum}, not {value!r}")
    return value


def _pattern(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise OptionsError(where, "must be a non-empty regular expression string")
    try:
        re.compile(value)
    except re.error as exc:
        raise OptionsError(where, f"is not a valid regular expression ({exc})") from None
    return value


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise OptionsError(where, 'must be a list of tool names, e.g. ["find_logins"]')
    return tuple(value)


# --- sections -----------------------------------------------------------------------------

_EVIDENCE_KEYS = tuple("min_digits figures decimal_rounding code prior_turn posture shapes exempt".split())


def _evidence(raw: dict[str, Any]) -> EvidenceOptions:
    s = _section(raw, "evidence", _EVIDENCE_KEYS)
    default = EvidenceOptions()
    exempt_values, exempt_patterns = _exempt(s.get("exempt", []))
    return EvidenceOptions(
        min_digits=_whole(s, "evidence.min_digits", default.min_digits, 1),
        figures=_bool(s, "evidence.figures", default.figures),
        decimal_rounding=_bool(s, "evidence.decimal_rounding", default.decimal_rounding),
        code=_choice(s, "evidence.code", default.code, CODE_MODES),
        prior_turn=_bool(s, "evidence.prior_turn", default.prior_turn),
        posture=_choice(s, "evidence.posture", default.posture, POSTURES),
        shapes=_shapes(s.get("shapes", [])),
        exempt_values=exempt_values,
        exempt_patterns=exempt_patterns,
    )


def _shapes(value: Any) -> tuple[Shape, ...]:
    if not isinstance(value, list):
        raise OptionsError("evidence.shapes", 'must be a list of {"name": …, "pattern": …} objects')
    shapes: list[Shape] = []
    for i, item in enumerate(value):
        where = f"evidence.shapes[{i}]"
        if not isinstance(item, dict):
            raise OptionsError(where, 'must be an object like {"name": "wwn", "pattern": "…"}')
        _no_unknown_keys(item, ("name", "pattern"), prefix=f"{where}.")
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise OptionsError(
                f"{where}.name", "is required: a non-empty label for values this shape catches"
            )
        if any(shape.name == name.strip() for shape in shapes):
            # The name labels flagged values; two alike would make the record ambiguous.
            raise OptionsError(
                f"{where}.name", f"{name!r} is used by another shape; give each a distinct name"
            )
        shapes.append(Shape(name=name.strip(), pattern=_pattern(item.get("pattern"), f"{where}.pattern")))
    return tuple(shapes)


def _exempt(value: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if not isinstance(value, list):
        raise OptionsError("evidence.exempt", 'must be a list of strings and {"pattern": …} objects')
    values: list[str] = []
    patterns: list[str] = []
    for i, item in enumerate(value):
        where = f"evidence.exempt[{i}]"
        if isinstance(item, str) and item:
            values.append(item)
        elif isinstance(item, dict):
            _no_unknown_keys(item, ("pattern",), prefix=f"{where}.")
            patterns.append(_pattern(item.get("pattern"), f"{where}.pattern"))
        else:
            raise OptionsError(
                where, 'must be a non-empty string or an object like {"pattern": "INC[0-9]{6}"}'
            )
    return tuple(values), tuple(patterns)


def _arguments(raw: dict[str, Any]) -> ArgumentsOptions:
    s = _section(raw, "arguments", ("arguments_from",))
    value = s.get("arguments_from", {})
    if not isinstance(value, dict):
        raise OptionsError(
            "arguments.arguments_from",
            'must be an object of tool: [producer tools], e.g. {"backup_status": ["fleet_report"]}',
        )
    return ArgumentsOptions(
        arguments_from={
            tool: _names(producers, f"arguments.arguments_from.{tool}") for tool, producers in value.items()
        }
    )


def _negative_claims(raw: dict[str, Any]) -> NegativeClaimsOptions:
    s = _section(raw, "negative_claims", ("tools", "unestablished"))
    tools = s.get("tools")
    return NegativeClaimsOptions(
        tools=None if tools is None else _names(tools, "negative_claims.tools"),
        unestablished=_choice(s, "negative_claims.unestablished", "fallback", UNESTABLISHED),
    )


_ENTAILMENT_KEYS = tuple("judge_url model timeout_s sample token_budget daily_token_budget".split())


def _entailment(raw: dict[str, Any]) -> EntailmentOptions:
    if isinstance(raw.get("entailment"), dict) and "api_key_env" in raw["entailment"]:
        # Options once named the environment variable holding the judge's key, which let
        # whoever edits them send any such variable (the site's key among them) to a URL of
        # their choosing. A key is now never named by options.
        raise OptionsError(
            "entailment.api_key_env",
            "is not accepted: options cannot name where a key is read from. A project's own "
            "judge key is set on its settings page (it is kept write-only and sent only to the "
            "judge_url of these options); the site's judge uses the site's key",
        )
    s = _section(raw, "entailment", _ENTAILMENT_KEYS)
    default = EntailmentOptions()
    judge_url = s.get("judge_url")
    if judge_url is not None and not (
        isinstance(judge_url, str) and re.match(r"https?://[^\s/]+", judge_url)
    ):
        raise OptionsError(
            "entailment.judge_url", "must be an http:// or https:// URL of an OpenAI-compatible API"
        )
    model = s.get("model")
    if model is not None and not (isinstance(model, str) and model.strip()):
        raise OptionsError("entailment.model", "must be a non-empty model name")
    timeout = s.get("timeout_s", default.timeout_s)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 600:
        raise OptionsError(
            "entailment.timeout_s", f"must be a number of seconds above 0 and at most 600, not {timeout!r}"
        )
    return EntailmentOptions(
        judge_url=judge_url,
        model=model,
        timeout_s=float(timeout),
        sample=_whole(s, "entailment.sample", default.sample, 1),
        token_budget=_whole(s, "entailment.token_budget", default.token_budget, 1),
        daily_token_budget=_whole(s, "entailment.daily_token_budget", default.daily_token_budget, 1),
    )


SECTIONS = ("evidence", "arguments", "negative_claims", "entailment")


def parse_options(raw: dict[str, Any] | Options | None) -> Options:
    """Validated options with the CONTRACT's defaults filled in; raises OptionsError."""
    if isinstance(raw, Options):
        return raw
    if raw is None:
        return Options()
    if not isinstance(raw, dict):
        raise OptionsError("options", f"must be a JSON object with any of the keys {', '.join(SECTIONS)}")
    _no_unknown_keys(raw, SECTIONS)
    return Options(
        evidence=_evidence(raw),
        arguments=_arguments(raw),
        negative_claims=_negative_claims(raw),
        entailment=_entailment(raw),
    )
