"""Every provenance path names the exact node that holds the value: in whatever order a
result's values are looked up (the path finder keeps what it has read of a result between
lookups), and over whole real results, from the suite's output down to the JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from checks.suite import parse, run_suite
from checks.suite.evidence_index import json_path_at

CORPORA = Path(__file__).resolve().parents[1] / "data" / "corpora"
# A path's steps: a plain key, an index, or a quoted key (``variants["7747408585"]``).
_STEP = re.compile(r'([^.\[\]"]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def _at(value: Any, path: str) -> Any:
    for key, index, quoted in _STEP.findall(path):
        value = value[int(index)] if index else value[json.loads(quoted) if quoted else key]
    return value


def _holds(text: str, e: dict[str, Any]) -> bool:
    """Whether the node at the evidence's path holds the text of its span."""
    try:
        node = _at(json.loads(text), e["path"])
    except (KeyError, IndexError, TypeError, ValueError):
        return False
    span = text[e["start"] : e["end"]].strip('"')
    last = _STEP.findall(e["path"])[-1]
    return span in json.dumps(node, ensure_ascii=False) or span in last  # a key names its member


def _leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]


_KEYS = st.sampled_from(["legs", "people", "payments", "created", "note", "id"])
_DOCS = st.recursive(
    st.one_of(st.integers(0, 10_000), st.text("abcxyz-", min_size=1, max_size=6)),
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=4), st.dictionaries(_KEYS, inner, min_size=1)
    ),
    max_leaves=20,
).filter(lambda doc: isinstance(doc, (dict, list)))


@given(_DOCS, st.randoms(use_true_random=False))
def test_a_leaf_s_path_is_its_own_whatever_was_looked_up_before(doc: Any, rng: Any) -> None:
    text = json.dumps(doc)
    leaves = []
    position = 0
    for path, value in _leaves(doc):  # each leaf's offset, in document order
        written = json.dumps(value)
        position = text.index(written, position)
        leaves.append((path, position))
        position += len(written)
    rng.shuffle(leaves)
    nodes: dict[int, Any] = {}
    for path, offset in leaves:
        assert json_path_at(text, offset, nodes) == path, (text, offset)


def test_every_path_the_suite_reports_on_real_results_holds_its_span() -> None:
    checked = 0
    for corpus in ("airline-dev", "retail-dev"):
        for line in (CORPORA / corpus / "conversations.jsonl").read_text().splitlines():
            payload = json.loads(line)
            result, conversation = run_suite(payload), parse(payload)
            texts = {
                (turn.index, m.tool_call_id): m.text for turn in conversation.turns for m in turn.tool_results
            }
            items = [(p["turn"], p["evidence"]) for p in result["provenance"]]
            items += [(f["turn"], f["evidence"]) for f in result["findings"]]
            for turn, evidence in items:
                for e in evidence:
                    if not e.get("path") or e.get("start") is None or e.get("of") == "arguments":
                        continue
                    # An id may be used again in a later turn: one of its results up to the
                    # turn holds the span at the path.
                    found = [t for (i, call), t in texts.items() if call == e["call_id"] and i <= turn]
                    if not found:
                        continue
                    assert any(_holds(text, e) for text in found), (payload["external_id"], e)
                    checked += 1
    assert checked > 300


@given(_DOCS, st.data())
def test_json_cut_off_anywhere_yields_the_path_so_far_and_never_fails(doc: Any, data: Any) -> None:
    """A result cut off mid-document (a runtime's size limit) is still read: every offset of
    every prefix has a path, and a complete leaf keeps its own."""
    text = json.dumps(doc)
    cut = data.draw(st.integers(1, len(text)))
    prefix = text[:cut]
    for offset in range(cut):
        assert isinstance(json_path_at(prefix, offset), str)
    assert json_path_at('{"a": {"b": ', 10) == "a.b"
    assert json_path_at('[1, {"x": ', 9) == "[1].x"
