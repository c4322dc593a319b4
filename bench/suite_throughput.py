"""How fast the deterministic suite judges turns, beside the floor of merely parsing their results.

    .venv/bin/python bench/suite_throughput.py [--turns 10000] [--seed 7]

A generated corpus of conversations (one to three turns each) whose tool results are JSON
tables of 10 to 500 rows: hosts, serials, sizes, percentages, timestamps. Each answer
restates values read from its results, and some state a computed ratio, an earlier turn's
value or an invented identifier, so every path of the evidence checker runs.

Printed: turns per second on one core for the full suite (``run_suite`` from the stored
JSON, as a worker calls it), for the checkers alone (from the parsed conversation), and for
a bare loop that only ``json.loads`` every tool result of the same turns; their ratio; and
the 50th and 99th percentile time per turn (a conversation's time divided over its turns).
Needs no database and no network.

Figures on the shared 2-core machine, ``--turns 2000``, back to back (the parse floor
moves with the machine's other work, so compare turns per second within one pair):

| suite | floor | full | checkers | ratio full / checkers | p50 / p99 | load average |
| --- | --- | --- | --- | --- | --- | --- |
| before 50c6c5a | 1,655/s | 151/s | 184/s | 10.9x / 9.0x | 5.8 / 16.7 ms | 1.46 |
| after 50c6c5a | 1,535/s | 193/s | 221/s | 8.0x / 6.9x | 5.1 / 10.3 ms | 1.70 |

Later, with the load of other work at 2 to 5, wall time was too noisy to compare, so the
CPU time of the process (``time.process_time``, the best of three passes over the corpus
of ``--turns 1000``; bench/RESULTS.md, issue 26) is: at f4ffcb8, 93 turns/s against a
floor of 2,779 (30.0x, 10.8 ms a turn); after 443725c, 163 turns/s against 2,717 (16.7x,
6.1 ms a turn). Back to back on the wall clock, ``--turns 2000``: 82/s and 98/s (33.1x,
p50 11.5 ms) before, 166/s and 172/s (16.2x, p50 5.1 ms) after.

Where the time goes now (cProfile over 300 turns): a fifth in ``derivations`` for the
answers whose figure no result writes (a result's numbers sorted, the column sums of every
group of its tables; and the forms and amounts of every result, read for that figure), a
seventh in finding the JSON path of each grounded value (the C scanner decodes every row
before the one that holds it), a seventh in decoding the results with exact decimals, and
a tenth in splitting each result into its tokens and filing them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from checks.suite import parse, run_suite  # noqa: E402

STATES = ["ok", "degraded", "down", "maintenance"]
REGIONS = ["eu-west", "eu-north", "us-east", "ap-south"]


def table(rng: random.Random, rows: int) -> dict[str, Any]:
    out = []
    for i in range(rows):
        total = rng.choice([100.0, 200.0, 250.0, 500.0])
        out.append(
            {
                "host": f"node-{rng.randrange(10_000):04d}.{rng.choice(REGIONS)}",
                "serial": f"SN{rng.getrandbits(40):012X}",
                "region": rng.choice(REGIONS),
                "state": rng.choice(STATES),
                "used_tb": round(rng.uniform(1, total), 2),
                "total_tb": total,
                "iops": rng.randrange(1_000, 90_000),
                "latency_ms": round(rng.uniform(0.2, 40.0), 1),
                "checked_at": f"2026-11-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:"
                f"{rng.randrange(60):02d}:00Z",
                "row": i,
            }
        )
    return {"cluster": f"cl-{rng.randrange(100, 999)}", "rows": out}


def answer_for(rng: random.Random, result: dict[str, Any], earlier: list[str]) -> str:
    rows = result["rows"]
    picks = rng.sample(rows, k=min(3, len(rows)))
    parts = [f"{p['host']} ({p['serial']}) is {p['state']} with {p['iops']} IOPS" for p in picks]
    text = "; ".join(parts) + "."
    roll = rng.random()
    if roll < 0.25:
        used = sum(r["used_tb"] for r in rows)
        total = sum(r["total_tb"] for r in rows)
        text += f" Overall {100 * used / total:.1f}% of the capacity is used."
    elif roll < 0.35:
        text += f" Its FCID is 0x{rng.getrandbits(24):06x}."  # invented
    elif roll < 0.45 and earlier:
        text += f" Earlier we saw {rng.choice(earlier)}."
    return (
        "| host | state |\n|---|---|\n"
        + "\n".join(f"| **{p['host']}** | {p['state']} |" for p in picks)
        + ("\n\n" + text)
    )


def corpus(turns: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    conversations: list[dict[str, Any]] = []
    made = 0
    while made < turns:
        n_turns = min(rng.randint(1, 3), turns - made)
        earlier: list[str] = []
        out_turns = []
        for t in range(n_turns):
            result = table(rng, rng.randint(10, 500))
            call_id = f"call-{t}"
            out_turns.append(
                {
                    "tools_offered": ["storage_report"],
                    "messages": [
                        {"role": "user", "content": f"How is cluster {result['cluster']} doing?"},
                        {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": call_id,
                                    "type": "function",
                                    "function": {
                                        "name": "storage_report",
                                        "arguments": json.dumps({"cluster": result["cluster"]}),
                                    },
                                }
                            ],
                        },
                        {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)},
                        {"role": "assistant", "content": answer_for(rng, result, earlier)},
                    ],
                }
            )
            earlier.extend(r["serial"] for r in result["rows"][:5])
        conversations.append({"external_id": f"bench-{len(conversations)}", "turns": out_turns})
        made += n_turns
    return conversations


def tool_texts(conversation: dict[str, Any]) -> list[str]:
    return [m["content"] for t in conversation["turns"] for m in t["messages"] if m["role"] == "tool"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    data = corpus(args.turns, args.seed)
    n_turns = sum(len(c["turns"]) for c in data)
    size = sum(len(text) for c in data for text in tool_texts(c))
    print(f"corpus: {len(data)} conversations, {n_turns} turns, {size / 1e6:.1f} MB of tool results")

    started = time.perf_counter()
    for conversation in data:
        for text in tool_texts(conversation):
            json.loads(text)
    floor = time.perf_counter() - started

    per_turn: list[float] = []
    flags = 0
    started = time.perf_counter()
    for conversation in data:
        t0 = time.perf_counter()
        result = run_suite(conversation)
        elapsed = time.perf_counter() - t0
        per_turn.extend([elapsed / len(conversation["turns"])] * len(conversation["turns"]))
        flags += sum(f["severity"] == "flag" for f in result["findings"])
    full = time.perf_counter() - started

    parsed = [parse(c) for c in data]
    started = time.perf_counter()
    for conversation in parsed:
        run_suite(conversation)
    checkers = time.perf_counter() - started

    cuts = statistics.quantiles(per_turn, n=100)
    print(f"parse floor (json.loads of every result): {n_turns / floor:10.0f} turns/s/core")
    print(f"suite from stored JSON (run_suite):        {n_turns / full:10.0f} turns/s/core")
    print(f"suite from a parsed conversation:          {n_turns / checkers:10.0f} turns/s/core")
    print(f"ratio to the floor: full {full / floor:.2f}x, checkers {checkers / floor:.2f}x")
    print(f"time per turn: p50 {cuts[49] * 1e3:.2f} ms, p99 {cuts[98] * 1e3:.2f} ms")
    print(f"flags raised: {flags} (cpu count here: {os.cpu_count()}; one core used)")


if __name__ == "__main__":
    main()
