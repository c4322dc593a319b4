"""What the app must have made of one run of the scripted tool loop, however it arrived.

One conversation, whole: the user's question, the ``get_order`` call with its result, and
the final answer; checked; and the answer's wrong figure (5 items, where the result says
2) flagged. Shared by the replays of captured exports and the live runs of the libraries.
"""

from __future__ import annotations

import json
from typing import Any

from checks.models import CheckRun, Conversation, Finding, Message, ToolCall
from tests.integrations.model_server import FINAL_ANSWER, ORDER, QUESTION, TOOL_NAME, WRONG_FIGURE


def assert_one_whole_conversation(project: Any, sent: object = "") -> Conversation:
    """``sent``: what the exports were answered, shown when the assertion fails."""
    conversations = list(Conversation.objects.filter(project=project))
    assert len(conversations) == 1, (
        f"{len(conversations)} conversations stored, "
        f"ids {[c.external_id for c in conversations]}; answers: {sent}"
    )
    conversation = conversations[0]
    turns = list(conversation.turns.order_by("index"))
    assert len(turns) == 1, f"{len(turns)} turns: the loop is one question and its answer"
    turn = turns[0]
    assert turn.answer == FINAL_ANSWER, f"the stored answer is {turn.answer!r}; answers: {sent}"

    users = Message.objects.filter(turn=turn, role="user").values_list("text", flat=True)
    assert QUESTION in list(users)
    calls = list(ToolCall.objects.filter(turn=turn))
    assert [c.tool for c in calls] == [TOOL_NAME], f"tool calls stored: {[c.tool for c in calls]}"
    call = calls[0]
    assert json.loads(call.arguments) == {"order_id": ORDER["order_id"]}
    assert call.has_result and json.loads(call.result) == ORDER, f"the call's result: {call.result!r}"

    runs = list(CheckRun.objects.filter(conversation=conversation).values_list("status", flat=True))
    assert runs and runs[-1] == "done", f"check runs: {runs}"
    return conversation


def assert_wrong_figure_flagged(conversation: Conversation) -> None:
    turn = conversation.turns.get()
    flags = Finding.objects.filter(conversation=conversation, turn=turn, severity="flag")
    on_figure = [
        f
        for f in flags
        if f.value == WRONG_FIGURE
        or (f.claim_start is not None and WRONG_FIGURE in turn.answer[f.claim_start : f.claim_end])
    ]
    assert on_figure, f"no flag on '{WRONG_FIGURE}': {[(f.code, f.value, f.claim_text) for f in flags]}"
