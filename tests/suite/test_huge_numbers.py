"""Numbers of any size a result, a call or an answer writes: read exactly, never a failure.

Numbers are Decimals from their reading on (``checks.suite.decimals``). A 400-digit integer,
a 400-digit fraction or 1e400 leaves every other value judged as it is without it; two
numbers that differ only in their last digit are two values, in a sum, a write and a
claim's subject alike.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from huge_numbers import INTEGER, NEIGHBOUR, PAST_THE_DOOR, VARIANTS, Key, Variant, conversation
from suite_helpers import build_conversation, build_turn

from checks.suite import run_suite
from checks.suite.decimals import LongNumber, read_json


def keys(result: dict[str, Any]) -> set[Key]:
    return {(f["turn"], f["checker"], f["code"], f.get("value") or "") for f in result["findings"]}


def test_the_conversation_has_findings_of_every_kind_to_lose() -> None:
    checkers = {checker for _, checker, _, _ in keys(run_suite(conversation("plain")))}
    assert {"action_claims", "tool_receipts", "evidence"} <= checkers


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda variant: variant.name)
def test_a_huge_number_leaves_every_other_finding_as_it_is(variant: Variant) -> None:
    """The run reports what it reports without the number, and besides only what it finds of
    the number itself (a value nothing supplied); the same number in the rows and the
    answer grounds it, and one that differs in its last digit does not."""
    plain = run_suite(conversation("plain"))
    huge = run_suite(variant.apply(conversation("plain")))
    assert keys(huge) == keys(plain) | variant.extra


def _volumes(answer: str, *files: int) -> dict[str, Any]:
    rows = [{"name": f"vol-{i}", "files": count} for i, count in enumerate(files)]
    turn = build_turn(answer, calls=[{"tool": "list_volumes", "result": {"volumes": rows}}])
    return run_suite(build_conversation(turn), only={"evidence"})


def test_a_sum_of_huge_numbers_is_exact() -> None:
    """Twice a 400-digit count is their sum to the last digit; one more is no sum at all."""
    total = 2 * int(INTEGER)
    summed = _volumes(f"Together they hold {total} files.", int(INTEGER), int(INTEGER))
    [finding] = summed["findings"]
    assert (finding["code"], finding["derivation"]["kind"]) == ("computed_value", "column-sum")
    wrong = _volumes(f"Together they hold {total + 1} files.", int(INTEGER), int(INTEGER))
    assert [f["code"] for f in wrong["findings"]] == ["unsupported_value"]


@pytest.mark.parametrize("digits", [30, 400])
def test_a_write_of_a_number_read_but_for_its_last_digit_is_flagged(digits: int) -> None:
    """Read as floats, 10^29 and 10^29 + 1 were one number, and 10^399 no number at all."""
    read = 10 ** (digits - 1)

    def write(units: int) -> list[dict[str, Any]]:
        turn = build_turn(
            "Done.",
            user="Please store the stock of QX-77 again.",
            calls=[
                {"tool": "get_stock", "args": {"sku": "QX-77"}, "result": {"sku": "QX-77", "units": read}},
                {"tool": "set_stock", "args": {"sku": "QX-77", "units": units}, "result": {"ok": True}},
            ],
        )
        return run_suite(build_conversation(turn), only={"arguments"})["findings"]

    assert write(read) == []
    [finding] = write(read + 1)
    assert (finding["code"], finding["path"], finding["value"]) == (
        "unsupported_argument",
        "units",
        str(read + 1),
    )


def test_a_count_past_the_doors_digits_is_a_value_no_list_has() -> None:
    """A count said of a noun the results count is a candidate at any size; one of more digits
    than a number may have is looked up as written, and no result writes it."""
    turn = build_turn(
        f"The share holds {PAST_THE_DOOR} files.",
        calls=[{"tool": "list_share", "result": {"files": [{"name": "a.txt"}, {"name": "b.txt"}]}}],
    )
    result = run_suite(build_conversation(turn), {"evidence": {"min_digits": 9000}}, only={"evidence"})
    [finding] = result["findings"]
    assert (finding["code"], finding["shape"]) == ("unsupported_value", "count")


def _claim_about(about: int) -> list[str]:
    subject = int(INTEGER)
    turn = build_turn(
        "No entries were recorded for that account.",
        calls=[
            {
                "tool": "find_entries",
                "args": {"account": subject},
                "result": {"absent": True, "looked_for": {"account": subject}},
            }
        ],
        receipts=[
            {
                "call_id": "call-1",
                "tool": "find_entries",
                "ok": True,
                "effect": "read",
                "result_count": 0,
                "emptiness": "declared-absent",
                "handle": "r1",
                "scope": {"filters": {"account": subject}, "complete": True},
            }
        ],
    )
    turn["negative_claims"] = [{"kind": "none", "about": about, "restsOn": ["r1"]}]
    result = run_suite(build_conversation(turn), only={"negative_claims"})
    return [f["code"] for f in result["findings"]]


def test_a_claim_about_a_400_digit_subject_is_judged_exactly() -> None:
    """A subject of 400 digits is no float: the claim about the one searched is established,
    a claim about its neighbour is about something else."""
    assert _claim_about(int(INTEGER)) == ["established"]
    assert _claim_about(int(NEIGHBOUR)) == ["about_mismatch"]


def test_json_numbers_are_read_exactly_and_the_longest_kept_as_written() -> None:
    """Past the digits the door accepts, a number is its text, and the rest is read around it."""
    value = read_json(f'{{"a": {INTEGER}.5, "b": 1e400, "c": {PAST_THE_DOOR}, "d": 1e999999999999999999999}}')
    assert value["a"] == Decimal(f"{INTEGER}.5") != Decimal(f"{INTEGER}.6")
    assert value["b"] == Decimal(10) ** 400
    assert value["c"] == PAST_THE_DOOR and isinstance(value["c"], LongNumber)
    assert value["d"] == "1e999999999999999999999" and isinstance(value["d"], LongNumber)


@pytest.mark.parametrize(
    "written",
    ["1e9999", "-2.5E+4400", "7e-0004401", "1" + "0" * 5000 + ".5", "0." + "3" * 5000],
)
def test_a_number_past_the_doors_digits_is_kept_as_written_beside_ordinary_json(written: str) -> None:
    # No integer too long for ``int`` beside it: the reading that keeps it must be chosen
    # from the text alone, and an identifier that looks like an exponent must not stop it.
    value = read_json(f'{{"serial": "SN1E234", "figure": {written}, "price": 2.50, "stock": 3}}')
    assert value["figure"] == written and isinstance(value["figure"], LongNumber)
    assert value["price"] == Decimal("2.50") and value["stock"] == 3 and value["serial"] == "SN1E234"


def test_an_identifier_shaped_like_an_exponent_leaves_the_numbers_exact() -> None:
    value = read_json('{"serial": "SN1E234", "lot": "7e100x", "weight": 0.1}')
    assert value["weight"] == Decimal("0.1") and type(value["weight"]) is Decimal
