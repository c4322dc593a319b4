"""Tool results folded on the turn page: pretty-printed, long nodes closed, only a budget of
lines drawn (the rest fetched as it is opened), the spans that ground claims always drawn
and marked where they are written, and every piece of the result escaped."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from checks.models import Turn
from checks.views import result_tree
from checks.views.highlight import Mark

ROWS = [
    {"id": f"ORD-{i:06d}", "status": "open", "total": round(10 + i * 1.37, 2), "placed": "2026-11-02"}
    for i in range(500)
]


def _link(params: dict[str, Any]) -> str:
    return "/part?" + "&".join(f"{k}={v}" for k, v in params.items())


def _span(text: str, value: str, anchor: str = "grounded-0") -> Mark:
    start = text.index(value)
    return Mark(start, start + len(value), "evidence", "span", anchor, f"ref-{start}")


def _marked(lines: list[result_tree.Line]) -> list[str]:
    """The text of every marked piece the lines draw."""
    return [
        p.text
        for line in lines
        for segments in ([line.value] + [[result_tree.Segment(line.key)]])
        for s in segments
        for p in s.pieces
        if p.mark
    ]


def _leaf_text(line: result_tree.Line) -> str:
    return "".join(p.text for s in line.value for p in s.pieces)


# --- the tree ---------------------------------------------------------------------------


def test_a_small_object_is_pretty_printed_open_as_written() -> None:
    text = '{"name":"Ada","age":36,"tags":["a","b"],"extra":null,"ok":true}'
    tree = result_tree.draw(text, [], link=_link, budget=100)
    assert tree.is_json
    kinds = [line.kind for line in tree.lines]
    assert kinds == ["open", "leaf", "leaf", "open", "leaf", "leaf", "close", "leaf", "leaf", "close"]
    root, name, age, tags = tree.lines[:4]
    assert root.open and root.bracket == "{" and root.count == 5
    assert ("".join(p.text for p in name.key), _leaf_text(name), name.scalar, name.comma) == (
        '"name"',
        '"Ada"',
        "str",
        True,
    )
    assert (_leaf_text(age), age.scalar) == ("36", "num")
    assert tags.open and tags.bracket == "[" and [line.index for line in tree.lines[4:6]] == [0, 1]
    assert [line.scalar for line in tree.lines[7:9]] == ["null", "bool"]
    assert tree.lines[-1].closing == "}" and not tree.lines[-1].comma


def test_a_long_array_starts_closed_and_is_not_drawn() -> None:
    text = json.dumps(ROWS)
    tree = result_tree.draw(text, [], link=_link, budget=300)
    [root] = tree.lines
    assert (root.kind, root.open, root.count, root.noun) == ("lazy", False, 500, "items")
    assert root.url == "/part?at=0&depth=0"
    assert root.table_url == "/part?at=0&view=table"  # an array of objects reads as a table
    assert root.preview.startswith('{"id": "ORD-000000"') and root.preview.endswith("…")


def test_nodes_nested_deep_start_closed() -> None:
    text = json.dumps({"a": {"b": {"c": {"d": 1}}}})
    lines = result_tree.draw(text, [], link=_link, budget=100).lines
    opened = {"".join(p.text for p in line.key): line.open for line in lines if line.kind in ("open", "lazy")}
    assert opened == {"": True, '"a"': True, '"b"': True, '"c"': False}


def test_a_span_deep_in_a_long_array_is_drawn_with_the_way_to_it() -> None:
    """Row 317's total: its range of rows and its row are drawn (closed in the conversation,
    open in the evidence); every other range is left to fetch."""
    text = json.dumps(ROWS)
    span = _span(text, "444.29")
    for open_marked in (False, True):
        lines = result_tree.draw(text, [span], link=_link, budget=300, open_marked=open_marked).lines
        assert _marked(lines) == ["444.29"]
        ranges = [line for line in lines if line.label]
        assert [r.label for r in ranges] == [f"[{i} … {i + 99}]" for i in range(0, 500, 100)]
        assert [r.kind for r in ranges] == ["lazy", "lazy", "lazy", "open", "lazy"]
        assert ranges[0].url == "/part?at=0&depth=0&from=0&to=100"
        row = next(line for line in lines if line.index == 317 and line.kind == "open")
        assert row.marked and row.open is open_marked
        neighbour = next(line for line in lines if line.index == 318)
        assert neighbour.kind == "lazy" and not neighbour.marked
        assert len(lines) < 120  # a hundred rows of the range, one line each, and row 317


def test_a_span_covering_the_whole_result_opens_nothing() -> None:
    """A count's evidence is the whole result: it is marked where drawn, but the tree stays
    as closed as without it."""
    text = json.dumps(ROWS)
    whole = Mark(0, len(text), "evidence", "the result", "finding-1")
    [root] = result_tree.draw(text, [whole], link=_link, budget=300).lines
    assert root.kind == "lazy" and not root.marked


def test_a_long_value_is_clipped_around_its_span() -> None:
    note = "x" * 5000 + " ORD-777777 " + "y" * 5000
    text = json.dumps({"note": note})
    span = _span(text, "ORD-777777")
    leaf = result_tree.draw(text, [span], link=_link, budget=10).lines[1]
    shown = [s for s in leaf.value if not s.url]
    gaps = [s for s in leaf.value if s.url]
    assert len(shown) == 2 and len(gaps) == 2  # the start, a gap, around the span, the rest
    assert "ORD-777777" in "".join(p.text for p in shown[1].pieces)
    assert sum(len(p.text) for s in shown for p in s.pieces) + sum(g.chars for g in gaps) == len(note) + 2
    assert re.fullmatch(r"/part\?text=\d+-\d+", gaps[0].url)


def test_text_that_is_not_json_is_shown_as_text() -> None:
    for text in ("Error: the search timed out", '{"a": 1} and then some words', "[1, 2", '"just a string"'):
        tree = result_tree.draw(text, [], link=_link, budget=100)
        assert not tree.is_json
        assert [line.kind for line in tree.lines] == ["text"] and _leaf_text(tree.lines[0]) == text


def test_a_long_text_keeps_its_spans_and_leaves_the_rest_to_fetch() -> None:
    text = "log line\n" * 10_000 + "found ORD-123456 here\n" + "log line\n" * 10_000
    tree = result_tree.draw(text, [_span(text, "ORD-123456")], link=_link, budget=100)
    [line] = tree.lines
    assert _marked(tree.lines) == ["ORD-123456"]
    drawn = sum(len(p.text) for s in line.value for p in s.pieces)
    assert drawn < result_tree.TEXT_CHARS and sum(s.chars for s in line.value) == len(text) - drawn


def test_locate_finds_a_path_as_the_suite_writes_it() -> None:
    text = json.dumps({"tickets": [{"id": "T-1", "opened": "2026-11-01"}, {"id": "T-2", "n": 7}]})
    start, end = result_tree.locate(text, "tickets[1].id") or (0, 0)
    assert text[start:end] == "T-2"
    start, end = result_tree.locate(text, "tickets[1].n") or (0, 0)
    assert text[start:end] == "7"
    assert result_tree.locate(text, "tickets[2].id") is None
    assert result_tree.locate(text, "tickets.id") is None
    assert result_tree.locate("not json", "[0]") is None


def test_a_table_has_a_column_per_key_and_pages_its_rows() -> None:
    rows = [{"id": 1, "name": "a"}, {"id": 2, "extra": {"deep": [1, 2]}}, *[{"id": i} for i in range(3, 250)]]
    text = json.dumps(rows)
    table = result_tree.draw_table(text, at=0, first=0, marks=[_span(text, '"a"')], link=_link)
    assert table.columns == ["id", "name", "extra"]
    assert (len(table.rows), table.count, table.first, table.last) == (100, 249, 0, 99)
    first, second = table.rows[:2]
    assert first.cells[2] is None  # the first row has no "extra"
    assert second.cells[2] is not None and second.cells[2].segments[0].pieces[0].text == "{1 keys…"
    assert first.cells[1] is not None and any(p.mark for s in first.cells[1].segments for p in s.pieces)
    assert table.previous_url == "" and table.next_url.endswith("from=100")
    last = result_tree.draw_table(text, at=0, first=200, marks=[], link=_link)
    assert (len(last.rows), last.next_url, last.previous_url.endswith("from=100")) == (49, "", True)


def test_a_five_megabyte_result_draws_a_few_lines() -> None:
    rows = [{"id": f"ORD-{i:06d}", "note": "n" * 150} for i in range(30_000)]
    text = json.dumps(rows)
    assert len(text) > 5_000_000
    span = _span(text, "ORD-020317")
    lines = result_tree.draw(text, [span], link=_link, budget=300).lines
    assert _marked(lines) == ["ORD-020317"]
    assert [line.label for line in lines if line.label][:3] == [
        "[0 … 9999]",
        "[10000 … 19999]",
        "[20000 … 29999]",
    ]
    assert len(lines) < 250


# --- the turn page and the parts it fetches --------------------------------------------

pytestmark_db = pytest.mark.django_db


def _orders_conversation(rows: list[dict[str, Any]], extra: str = "") -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "search_orders", "arguments": "{}"}}
    return {
        "external_id": f"orders-{len(rows)}{extra}",
        "messages": [
            {"role": "user", "content": "How many orders are open?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(rows)},
            {
                "role": "assistant",
                "content": f"I found 490 open orders; one totals ${ROWS[317]['total']:.2f}.",
            },
        ],
    }


@pytestmark_db
def test_the_turn_page_draws_a_500_row_result_folded(client: Any, alice: Any, ingest: Any) -> None:
    conversation = ingest(_orders_conversation(ROWS))
    client.force_login(alice)
    turn = Turn.objects.get(conversation=conversation)
    response = client.get(turn.get_absolute_url())
    html = response.content.decode()
    [grounded] = [g for g in response.context["grounded"] if g["item"]["value"] == "444.29"]
    [source] = grounded["sources"]
    # The grounded total is marked where it is written in the conversation's copy, with the
    # id the grounded value's link leads to; rows not on the way to it are not drawn.
    assert re.search(rf'data-for="{grounded["anchor"]}" id="{source["ref"]}">444.29</mark>', html)
    assert f'href="#{source["ref"]}" data-reveal="{source["ref"]}"' in html
    assert "ORD-000499" not in html
    assert len(html) < 150_000  # the result alone is 40 kB; drawn whole it was four times that
    # The part that was left out is a request away, with its rows in it.
    [count] = [c for c in response.context["cards"] if c["finding"].code == "count_misstatement"]
    [evidence] = count["evidence"]
    [root] = evidence["tree"].lines
    part = client.get(root.url)
    assert part.status_code == 200
    assert "[400 … 499]" in part.content.decode()
    rows_part = client.get(f"{root.url}&from=400&to=500").content.decode()
    assert "&quot;ORD-000499&quot;" in rows_part and "ORD-000399" not in rows_part
    table = client.get(root.table_url)
    assert table.status_code == 200 and '<th scope="col">status</th>' in table.content.decode()


@pytestmark_db
def test_keys_and_values_of_a_result_are_escaped(client: Any, alice: Any, ingest: Any) -> None:
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    rows = [{hostile: hostile, "id": f"ORD-{i:06d}"} for i in range(30)]
    conversation = ingest(_orders_conversation(rows, "-hostile"))
    client.force_login(alice)
    turn = Turn.objects.get(conversation=conversation)
    html = client.get(turn.get_absolute_url()).content.decode()
    message = turn.messages.get(role="tool")
    url = f"/p/acme/turns/{turn.pk}/results/{message.seq}"
    parts = [
        client.get(url, {"at": 0, "depth": 0}).content.decode(),
        client.get(url, {"at": 0, "view": "table"}).content.decode(),
        client.get(url, {"text": "0-200"}).content.decode(),
    ]
    for page in [html, *parts]:
        assert "<script>alert" not in page and "<img src=x" not in page
    assert all("&lt;script&gt;alert" in page for page in parts)


@pytestmark_db
def test_a_part_asked_for_wrongly_is_refused_with_the_field(client: Any, alice: Any, ingest: Any) -> None:
    conversation = ingest(_orders_conversation(ROWS))
    client.force_login(alice)
    turn = Turn.objects.get(conversation=conversation)
    url = f"/p/acme/turns/{turn.pk}/results/{turn.messages.get(role='tool').seq}"
    cases = {
        "": "at:",
        "at=abc": "at:",
        "at=99999999": "at:",
        "at=3": "at: no JSON object or array starts at character 3",
        "at=0&from=600&to=700": "from/to:",
        "at=0&depth=999": "depth:",
        "at=0&view=chart": "view:",
        "at=0&view=table&marks=5-2": "marks:",
        "text=10-5": "text:",
    }
    for query, field in cases.items():
        response = client.get(f"{url}?{query}")
        assert response.status_code == 400, query
        assert response.content.decode().startswith(field), (query, response.content)
    # Only a tool message has parts; a message of another role, or another turn, is not found.
    assert client.get(f"/p/acme/turns/{turn.pk}/results/0?at=0").status_code == 404


@pytestmark_db
def test_a_number_in_digits_other_than_ascii_is_refused_with_the_field(
    client: Any, alice: Any, ingest: Any
) -> None:
    """int() and str.isdigit() take Arabic-Indic, fullwidth and superscript digits (and
    int() then fails on a superscript): a part's numbers are ASCII digits or a 400."""
    conversation = ingest(_orders_conversation(ROWS))
    client.force_login(alice)
    turn = Turn.objects.get(conversation=conversation)
    url = f"/p/acme/turns/{turn.pk}/results/{turn.messages.get(role='tool').seq}"
    cases = {
        "at": {"at": "\u0660"},
        "depth": {"at": "0", "depth": "\uff13"},
        "from": {"at": "0", "from": "\u00b2", "to": "200"},
        "to": {"at": "0", "from": "100", "to": "\u0662\u0660\u0660"},
        "text": {"text": "\uff10-\uff15"},
        "marks": {"at": "0", "view": "table", "marks": "\u0661-\u0665"},
    }
    answers = {field: client.get(url, query) for field, query in cases.items()}
    assert {field: r.status_code for field, r in answers.items()} == dict.fromkeys(cases, 400)
    for field, response in answers.items():
        assert response.content.decode().startswith(f"{field}:"), (field, response.content)
    # More digits than int() converts (4,300) are a 400 too, not its ValueError.
    assert client.get(url, {"at": "0", "to": "9" * 5000}).content.decode().startswith("to:")
    assert client.get(url, {"at": "0", "from": "100", "to": "200"}).status_code == 200


@pytestmark_db
def test_an_outsider_cannot_read_a_part(client: Any, olga: Any, vic: Any, ingest: Any) -> None:
    conversation = ingest(_orders_conversation(ROWS))
    turn = Turn.objects.get(conversation=conversation)
    url = f"/p/acme/turns/{turn.pk}/results/{turn.messages.get(role='tool').seq}?at=0"
    client.force_login(olga)
    assert client.get(url).status_code == 404
    client.force_login(vic)  # a viewer reads what the page shows
    assert client.get(url).status_code == 200
