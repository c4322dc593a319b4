"""How the suite's time grows with the length of one conversation.

    .venv/bin/python bench/suite_scaling.py                       # 1000 2000 4000 8000 turns, both shapes
    .venv/bin/python bench/suite_scaling.py --turns 1000 2000 --shape support --checkers

One conversation of each size and shape is judged by ``run_suite`` from its JSON, as a
worker and ``/api/v1/check`` call it (reading the payload included). Two shapes:

- ``support``: the support conversations of ``bench/generate.py`` (``template``), one
  question, one call and one answer a turn, some answers miscounting, inventing an
  identifier, claiming an action no tool ran or passing an argument nobody gave;
- ``airline``: the labelled conversations of ``../shared/corpora/airline-dev`` joined end
  to end (call ids made unique), repeated until the size is reached: real agent traffic,
  with confirmations, bookings that "have been" made, refunds and absences.

Printed for each: the process's CPU seconds (and wall-clock seconds, which the machine's
other work stretches), CPU seconds per thousand turns, and the time over the smallest
size's time scaled by size (1.0 where the suite is linear in turns); with ``--checkers``
also each checker's CPU seconds (from the parsed conversation, so they exclude reading it).
Needs no database and no network. A suite whose work per turn grows with the turns before
it shows a ratio rising with the size.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generate import template  # noqa: E402

from checks.suite import parse, parse_options, run_suite  # noqa: E402
from checks.suite.conversation import split_into_turns  # noqa: E402
from checks.suite.registry import CHECKERS  # noqa: E402
from checks.suite.types import RunContext  # noqa: E402

AIRLINE = ROOT.parent / "shared" / "corpora" / "airline-dev" / "conversations.jsonl"


def support(turns: int, seed: int) -> dict[str, Any]:
    return template(random.Random(seed), 0, turns)


def airline(turns: int, seed: int) -> dict[str, Any]:
    """The corpus's conversations end to end, from a seeded start, until ``turns`` turns."""
    corpus = [json.loads(line) for line in AIRLINE.open() if line.strip()]
    order = list(range(len(corpus)))
    random.Random(seed).shuffle(order)
    messages: list[dict[str, Any]] = []
    made, k = 0, 0
    while made < turns:
        piece = copy.deepcopy(corpus[order[k % len(order)]]["messages"])
        for message in piece:
            for call in message.get("tool_calls") or []:
                call["id"] = f"k{k}-{call['id']}"
            if message.get("tool_call_id"):
                message["tool_call_id"] = f"k{k}-{message['tool_call_id']}"
        made += len(split_into_turns(piece))
        messages.extend(piece)
        k += 1
    messages = [message for turn in split_into_turns(messages)[:turns] for message in turn]
    return {"external_id": f"airline-{turns}", "system": corpus[0].get("system"), "messages": messages}


SHAPES = {"support": support, "airline": airline}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    parser.add_argument("--shape", choices=[*SHAPES, "both"], default="both")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--checkers", action="store_true", help="also time each checker alone")
    args = parser.parse_args()
    shapes = list(SHAPES) if args.shape == "both" else [args.shape]
    if "airline" in shapes and not AIRLINE.exists():
        print(f"no {AIRLINE}: airline shape skipped")
        shapes.remove("airline")
    sizes = sorted(args.turns)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    extra = (" checkers |", " --- |") if args.checkers else ("", "")
    print("| shape | turns | CPU seconds (wall) | CPU s per 1000 turns | ratio to linear |" + extra[0])
    print("| --- | --- | --- | --- | --- |" + extra[1])
    for shape in shapes:
        base: float | None = None
        for size in sizes:
            data = SHAPES[shape](size, args.seed)
            n_turns = len(parse(data).turns)
            started, wall = time.process_time(), time.perf_counter()
            run_suite(data)
            seconds, wall = time.process_time() - started, time.perf_counter() - wall
            per_turn = seconds / n_turns
            base = per_turn if base is None else base
            row = (
                f"| {shape} | {n_turns} | {seconds:.2f} ({wall:.2f}) | {1000 * per_turn:.2f} | "
                f"{per_turn / base:.2f} |"
            )
            if args.checkers:
                conversation, options = parse(data), parse_options(None)
                parts = []
                for checker in CHECKERS:
                    started = time.process_time()
                    checker.check(conversation, options, RunContext())
                    parts.append(f"{checker.name} {time.process_time() - started:.2f}")
                row += " " + ", ".join(parts) + " |"
            print(row, flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print(
        f"\n(.venv/bin/python bench/suite_scaling.py --turns {' '.join(map(str, sizes))}"
        f"{'' if args.shape == 'both' else ' --shape ' + args.shape}{' --checkers' if args.checkers else ''})"
    )


if __name__ == "__main__":
    main()
