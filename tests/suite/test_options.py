"""Checker options: CONTRACT §3 defaults, and refusals that name the option and the fix."""

from __future__ import annotations

from typing import Any

import pytest

from checks.suite import Options, OptionsError, parse_options


def test_it_fills_in_the_contract_defaults() -> None:
    """No options at all gives the documented defaults (figures on, unlike the reference)."""
    options = parse_options(None)
    evidence = options.evidence
    assert (evidence.min_digits, evidence.figures, evidence.decimal_rounding) == (4, True, False)
    assert (evidence.code, evidence.prior_turn, evidence.posture) == ("check", True, "assist")
    assert options.negative_claims.tools is None
    assert options.negative_claims.unestablished == "fallback"
    assert options.arguments.arguments_from == {}
    assert parse_options({}) == options


def test_it_accepts_the_contract_example_in_full() -> None:
    """Every key of the CONTRACT's example is understood and kept."""
    raw = {
        "evidence": {
            "min_digits": 4,
            "figures": True,
            "decimal_rounding": False,
            "code": "check",
            "prior_turn": True,
            "posture": "assist",
            "shapes": [{"name": "wwn", "pattern": "(?:[0-9a-f]{2}:){7}[0-9a-f]{2}"}],
            "exempt": ["0x650000", {"pattern": "INC[0-9]{6}"}],
        },
        "arguments": {"arguments_from": {"backup_status": ["fleet_report"]}},
        "negative_claims": {"tools": ["find_logins"], "unestablished": "fallback"},
        "entailment": {
            "judge_url": "http://127.0.0.1:11434/v1",
            "model": "qwen2.5:7b-instruct",
            "timeout_s": 30,
            "sample": 20,
            "token_budget": 50000,
            "daily_token_budget": 1000000,
        },
    }
    options = parse_options(raw)
    assert options.evidence.shapes[0].name == "wwn"
    assert options.evidence.exempt_values == ("0x650000",)
    assert options.evidence.exempt_patterns == ("INC[0-9]{6}",)
    assert options.arguments.arguments_from == {"backup_status": ("fleet_report",)}
    assert options.negative_claims.tools == ("find_logins",)
    assert options.entailment.model == "qwen2.5:7b-instruct"
    assert options.entailment.timeout_s == 30.0


def test_it_passes_parsed_options_through_unchanged() -> None:
    """Options already parsed are not parsed again."""
    options = Options()
    assert parse_options(options) is options


@pytest.mark.parametrize(
    ("raw", "option", "hint"),
    [
        ("strict", "options", "JSON object"),
        ({"evidnce": {}}, "evidnce", "evidence"),
        ({"evidence": []}, "evidence", "min_digits"),
        ({"evidence": {"min_digit": 3}}, "evidence.min_digit", "min_digits"),
        ({"evidence": {"min_digits": 0}}, "evidence.min_digits", "at least 1"),
        ({"evidence": {"min_digits": True}}, "evidence.min_digits", "whole number"),
        ({"evidence": {"min_digits": 2.5}}, "evidence.min_digits", "whole number"),
        ({"evidence": {"figures": "yes"}}, "evidence.figures", "true or false"),
        ({"evidence": {"decimal_rounding": 1}}, "evidence.decimal_rounding", "true or false"),
        ({"evidence": {"prior_turn": None}}, "evidence.prior_turn", "true or false"),
        ({"evidence": {"code": "skip"}}, "evidence.code", "check, match"),
        ({"evidence": {"posture": "strict"}}, "evidence.posture", "assist, guard, rails"),
        ({"evidence": {"shapes": {}}}, "evidence.shapes", "list"),
        ({"evidence": {"shapes": [{"pattern": "x"}]}}, "evidence.shapes[0].name", "non-empty"),
        ({"evidence": {"shapes": [{"name": "a", "pattern": "("}]}}, "evidence.shapes[0].pattern", "regular"),
        (
            {"evidence": {"shapes": [{"name": "a", "pattern": "x"}, {"name": "a", "pattern": "y"}]}},
            "evidence.shapes[1].name",
            "distinct",
        ),
        (
            {"evidence": {"shapes": [{"name": "a", "pattern": "x", "flags": "i"}]}},
            "evidence.shapes[0].flags",
            "name",
        ),
        ({"evidence": {"exempt": [3]}}, "evidence.exempt[0]", "pattern"),
        ({"evidence": {"exempt": [{"regex": "x"}]}}, "evidence.exempt[0].regex", "pattern"),
        ({"arguments": {"arguments_from": ["fleet_report"]}}, "arguments.arguments_from", "object"),
        (
            {"arguments": {"arguments_from": {"backup_status": "fleet_report"}}},
            "arguments.arguments_from.backup_status",
            "list",
        ),
        ({"negative_claims": {"tools": "find_logins"}}, "negative_claims.tools", "list"),
        ({"negative_claims": {"unestablished": "refuse"}}, "negative_claims.unestablished", "state-searched"),
        ({"entailment": {"judge_url": "localhost:11434"}}, "entailment.judge_url", "http"),
        ({"entailment": {"model": ""}}, "entailment.model", "model name"),
        (
            # Options never name where a key is read from: that sent the site's key anywhere.
            {"entailment": {"api_key_env": "RECEIPTS_JUDGE_API_KEY"}},
            "entailment.api_key_env",
            "settings page",
        ),
        ({"entailment": {"timeout_s": 0}}, "entailment.timeout_s", "above 0"),
        ({"entailment": {"sample": -1}}, "entailment.sample", "at least 1"),
        ({"entailment": {"token_budget": "lots"}}, "entailment.token_budget", "whole number"),
        ({"entailment": {"daily_token_budget": 0}}, "entailment.daily_token_budget", "at least 1"),
        ({"entailment": {"judge": "x"}}, "entailment.judge", "judge_url"),
    ],
)
def test_it_refuses_bad_options_naming_the_option_and_what_is_accepted(
    raw: Any, option: str, hint: str
) -> None:
    """Every refusal says which option is wrong and what would be accepted instead."""
    with pytest.raises(OptionsError) as caught:
        parse_options(raw)
    assert caught.value.option == option
    assert str(caught.value).startswith(f"{option}:")
    assert hint in str(caught.value)


def test_its_error_is_a_value_error() -> None:
    """Callers that catch ValueError catch bad options too."""
    assert issubclass(OptionsError, ValueError)
