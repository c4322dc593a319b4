"""Generated conversations sent to every ingest route, on PostgreSQL: no 5xx, ever.

The schema describes a conversation body only as "an object", so Schemathesis cannot reach
past validation. Here Hypothesis builds conversations the validator accepts (2 to 4 turns,
tool calls with JSON results, receipts, metadata of any JSON shape) with arbitrary text in
every free-text field, and sends each to `POST /api/v1/conversations`, the bulk route and
`POST /api/v1/check?store=true`.

Input that valid JSON can carry but the database cannot store (NUL, unpaired surrogates,
NaN and infinities) is pinned case by case below, each expected to fail until the app turns
it into a 400 naming the path: strict, so the fix shows up as XPASS and the mark comes off.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from django.conf import settings as django_settings
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.conftest import load_example

pytestmark = [pytest.mark.fuzz, pytest.mark.services, pytest.mark.django_db(transaction=True)]

MAX_EXAMPLES = 60
# Examples share the test's database: each conversation gets an id of its own, so a resend
# (200) or a conflict (409) comes only from what the test sends on purpose.
SERIAL = itertools.count()
ACCEPTED = {201, 200, 400, 409}

# Text PostgreSQL can store: no NUL, no unpaired surrogate (those are pinned separately).
TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=60)
SCALAR = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT
JSON_VALUE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def turns(draw: Any, index: int) -> dict[str, Any]:
    tool = draw(st.sampled_from(["search", "lookup_orders", "save_note", "db.query"]))
    rows = draw(st.lists(st.dictionaries(TEXT, SCALAR, min_size=1, max_size=3), min_size=0, max_size=12))
    call_id = f"call-{index}"
    ok = draw(st.booleans())
    messages: list[dict[str, Any]] = [{"role": "user", "content": draw(TEXT)}]
    if draw(st.booleans()):
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": tool, "arguments": json.dumps(draw(JSON_VALUE))},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps(rows)},
        ]
        receipts = [{"call_id": call_id, "tool": tool, "ok": ok, "result_count": len(rows), "effect": "read"}]
    else:
        receipts = []
    answer = draw(
        st.sampled_from(
            [
                f"The {tool} tool returned {len(rows)} rows.",
                f"I found {draw(st.integers(0, 99))} results.",
                "I've saved that for you.",
                "Nothing was found.",
            ]
        )
        | TEXT
    )
    messages.append({"role": "assistant", "content": answer})
    return {"tools_offered": [tool], "messages": messages, "receipts": receipts}


@st.composite
def conversations(draw: Any) -> dict[str, Any]:
    count = draw(st.integers(2, 4))
    return {
        "external_id": f"fz-{next(SERIAL)}-"
        + draw(st.text("abcdefghijklmnopqrstuvwxyz0123456789-_.:", min_size=1, max_size=30)),
        "title": draw(TEXT),
        "agent": {"name": draw(TEXT), "model": draw(TEXT)},
        "metadata": draw(st.dictionaries(TEXT, JSON_VALUE, max_size=4)),
        "turns": [draw(turns(index)) for index in range(count)],
    }


@pytest.fixture
def api_key_header(transactional_db: Any, settings: Any) -> dict[str, str]:
    engine = django_settings.DATABASES["default"]["ENGINE"]
    if engine != "django.db.backends.postgresql":
        pytest.fail(
            f"the fuzz tests run on PostgreSQL (the engine is {engine}; set DATABASE_URL)", pytrace=False
        )
    from checks.models import ApiKey, Project

    settings.RECEIPTS_API_RATE = "100000/min"
    project = Project.objects.create(name="Fuzz payloads", slug="fuzz-payloads")
    _, secret = ApiKey.issue(project=project, name="fuzz")
    return {"Authorization": f"Bearer {secret}"}


def _send(client: Any, headers: dict[str, str], path: str, body: str, **extra: str) -> Any:
    client.raise_request_exception = False  # a 5xx is an answer to assert on, not an exception
    return client.post(
        path, data=body.encode(), content_type="application/json", headers={**headers, **extra}
    )


@given(conversation=conversations())
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_generated_conversations_never_get_a_server_error(
    client: Any, api_key_header: dict[str, str], conversation: dict[str, Any]
) -> None:
    body = json.dumps(conversation)
    first = _send(client, api_key_header, "/api/v1/conversations", body)
    assert first.status_code in ACCEPTED, first.content[:500]
    event(f"first POST answered {first.status_code}")  # --hypothesis-show-statistics shows the mix
    again = _send(client, api_key_header, "/api/v1/conversations", body)
    assert again.status_code in ACCEPTED, again.content[:500]
    if first.status_code in (200, 201):
        assert again.status_code == 200 and again.json()["status"] == "unchanged"
        detail = client.get(f"/api/v1/conversations/{first.json()['id']}", headers=api_key_header)
        assert detail.status_code == 200
        assert detail.json()["turns"] == len(conversation["turns"])
    bulk = _send(client, api_key_header, "/api/v1/conversations/bulk", json.dumps([conversation]))
    assert bulk.status_code == 207, bulk.content[:500]
    inline = _send(client, api_key_header, "/api/v1/check?store=true", body)
    assert inline.status_code in ACCEPTED, inline.content[:500]


# --- what JSON carries and the database cannot store -----------------------------------

UNSTORABLE = [
    pytest.param('"title": "a\\u0000b"', id="NUL in the title (PostgreSQL text)"),
    pytest.param('"metadata": {"k": "v\\u0000"}', id="NUL in metadata (PostgreSQL jsonb)"),
    pytest.param('"metadata": {"k\\u0000": 1}', id="NUL in a metadata key"),
    pytest.param('"title": "a\\ud800b"', id="unpaired surrogate in the title"),
    pytest.param('"metadata": {"k": "\\udfff"}', id="unpaired surrogate in metadata"),
    pytest.param('"metadata": {"k": NaN}', id="NaN in metadata"),
    pytest.param('"metadata": {"k": Infinity}', id="Infinity in metadata"),
    pytest.param('"metadata": {"k": 1e400}', id="a number beyond float range in metadata"),
]


def _with_field(field: str) -> str:
    payload = load_example("05")
    payload.pop("title", None)
    return "{" + field + ", " + json.dumps(payload)[1:]


@pytest.mark.parametrize("field", UNSTORABLE)
@pytest.mark.parametrize("path", ["/api/v1/conversations", "/api/v1/check?store=true"])
def test_unstorable_values_are_a_400_naming_the_path(
    client: Any, api_key_header: dict[str, str], path: str, field: str
) -> None:
    response = _send(client, api_key_header, path, _with_field(field))
    assert response.status_code == 400, response.content[:300]
    assert response.json()["errors"][0]["path"].startswith("$.")


@pytest.mark.parametrize("field", UNSTORABLE)
def test_an_unstorable_item_is_refused_alone_in_bulk(
    client: Any, api_key_header: dict[str, str], field: str
) -> None:
    good = json.dumps(load_example("01"))
    response = _send(client, api_key_header, "/api/v1/conversations/bulk", f"[{good}, {_with_field(field)}]")
    assert response.status_code == 207, response.content[:300]
    assert [item["status"] for item in response.json()["items"]] == ["created", "invalid"]


def test_a_nul_in_the_external_id_query_finds_nothing(client: Any, api_key_header: dict[str, str]) -> None:
    # Stored ids the NUL could be mistaken for: the query with its NUL dropped, and cut at it.
    for external_id in ("ab", "a"):
        stored = _send(
            client,
            api_key_header,
            "/api/v1/conversations",
            json.dumps({**load_example("01"), "external_id": external_id}),
        )
        assert stored.status_code == 201, stored.content[:300]
        found = client.get("/api/v1/conversations", {"external_id": external_id}, headers=api_key_header)
        assert [c["external_id"] for c in found.json()] == [external_id]

    client.raise_request_exception = False  # a 5xx is an answer to assert on, not an exception
    response = client.get("/api/v1/conversations", {"external_id": "a\x00b"}, headers=api_key_header)
    assert response.status_code == 200, response.content[:300]
    assert response.json() == []


def test_a_nul_in_the_idempotency_key_is_a_400(client: Any, api_key_header: dict[str, str]) -> None:
    response = _send(
        client,
        api_key_header,
        "/api/v1/conversations",
        json.dumps(load_example("01")),
        **{"Idempotency-Key": "a\x00b"},
    )
    assert response.status_code == 400
