"""How often the suite flags answers that are right, on desks no shared corpus covers.

Each set is a JSONL file of conversations in the native format, written by hand for this
measure: every answer is correct against its tool results, the system prompt and the
user's words (each figure recomputed when the set was written), so every flag on them is a
false one. The desks are of domains no shared corpus has (claims, payroll, clinics,
permits, ...), and the answers are written as strong models write them: tables, totals,
shares, dates in words resolved against the prompt's date, durations, unit conversions.

Split as the real corpora are: ``development`` is read while working; ``validation`` was
written afterwards, without sight of the rules, and is only counted. A rule that clears
development and not validation fits the set, not the class. Once rules have been kept or
dropped by validation, it has been used; ``holdout`` was written last, by someone who saw
neither the rules nor the other sets, and measures what the choices are worth.
``development_2``, ``development_3`` and ``development_4`` (fifteen more desks each: print
shop, catering, lab samples, ...; dry cleaning, a ferry line, a film festival, ...; a hair
salon, a car wash, a locksmith, ..., in a plain chat style) were written later still, without
sight of the rules or of validation and holdout, to be read as ``development`` is: their false
flags show classes the first set has too few cases of. ``validation_2`` (twenty more desks:
bookbinding, an ice rink, a tool library, ...; half in a rich markdown style, half in plain
chat, with money, dates and times written in many notations) was written later still, by
someone who saw no rule and no other set, once ``validation`` had chosen enough rules to be
used up: like ``validation``, it is only counted. ``development_5`` and ``development_6`` (twenty
desks more each, in the same mixed style) were written with it, to be read; ``validation_3``
and ``validation_4``, written with them by someone who saw no rule and no set, are counted as
``holdout`` is: once the rules are chosen, never to choose one. ``validation_5`` and
``validation_6`` (forty desks more, written the same way by two people who saw no rule and no set,
the second half business-to-business) came once validation_2 had judged some thirty candidates:
the first is only counted, to choose rules; the second is counted as ``holdout`` is. Since
validation_6 showed business-to-business desks the hardest, ``development_7`` (twenty such
desks: telemetry, SCADA, LIMS, dispatch, ...) was written to be read, and ``validation_7``
(half such desks, half public services) only to be counted, each by someone who saw no rule and
no set. ``development_8`` (twenty desks: a vet clinic, a marina, a court clerk, HVAC dispatch, ...)
and ``validation_8`` (ten business-to-business desks, ten public and consumer ones: claims
adjusting, a port's truck appointments, a blood bank, a notary, ...) came once validation_7 had
judged some thirty more candidates, each written by someone who saw no rule and no set: the first
is read, the second only counted, to choose rules. ``validation_9`` (twenty desks, eight of them
business-to-business: a dairy co-op's milk pickups, a sawmill, a wine broker's customs entries, a
seismic network, ...; every conversation with a write) came once validation_8 had judged some
fifteen, written the same way: only counted, to choose rules. ``validation_10`` (twenty desks, eight
of them business-to-business: a wafer fab, a quarry's dispatch, a calibration lab, ...; the rest
consumer and public: an optician, a food bank, municipal snow removal, ...) came once validation_9
had judged some ten more, written the same way: only counted, to choose rules. ``development_9`` and
``validation_11`` (twenty desks each, written together by someone who saw no rule and no set, of the
transactional kind real runtimes serve: rail and coach tickets, car sharing, shops, streaming and
loyalty accounts, passports and permits; every conversation with a write, most confirmed first)
came with them: the first is read, the second only counted, to choose rules. ``development_10`` and
``validation_12`` (twenty desks each, written apart by two people who saw no rule and no set: hostels,
rail, ferries, car and bike hire, theatres, clinics, claims, cards, parcels; and half consumer, half
business-to-business: cinemas, campsites, ski schools, a print supplier, an inbound dock, a lab's
intake, plant hire, freight quotes) came next: the first is read, the second only counted, to choose
rules. ``development_11`` and ``validation_13`` (twenty desks each, written apart by two people who saw
no rule and no set) are policy-driven desks: their prompts state tiers, allowances, fees per unit and
compensation rules, and their writes carry the counts and amounts those imply. ``development_12`` and
``validation_14`` (fifteen conversations each), and ``development_13`` and ``validation_15`` (fifteen
each), are the shared corpora's own desks, the airline's and the shop's, with their prompts word for
word but new users, records and tasks, answered as a careful frontier model answers: the shared
corpora's desks are two of those the suite is judged on, with other agents. Each first one is read,
each second only counted, to choose rules. The last four are in the messages shape runtimes log.

    .venv/bin/python bench/correct_answers.py        # every set
    .venv/bin/python bench/correct_answers.py -v     # and each development set's flags
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checks.suite import run_suite  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
SETS = (
    "development",
    "development_2",
    "development_3",
    "development_4",
    "development_5",
    "development_6",
    "development_7",
    "development_8",
    "development_9",
    "development_10",
    "development_11",
    "development_12",
    "development_13",
    "validation",
    "validation_2",
    "validation_3",
    "validation_4",
    "validation_5",
    "validation_6",
    "validation_7",
    "validation_8",
    "validation_9",
    "validation_10",
    "validation_11",
    "validation_12",
    "validation_13",
    "validation_14",
    "validation_15",
    "holdout",
)


def measure(path: Path, verbose: bool) -> str:
    conversations = turns = flagged_turns = 0
    codes: Counter[str] = Counter()
    lines: list[str] = []
    for line in path.open(encoding="utf-8"):
        if not line.strip():
            continue
        conversation = json.loads(line)
        conversations += 1
        report = run_suite(conversation)  # native turns, or messages as a runtime logs them
        turns += len(report["turns"])
        flags = [f for f in report["findings"] if f["severity"] == "flag"]
        flagged_turns += len({f["turn"] for f in flags})
        codes.update(f["code"] for f in flags)
        for f in flags if verbose else ():
            claim = f["claim"]["text"] if f.get("claim") else ""
            lines.append(f"    {conversation['external_id']} turn {f['turn']}: {f['code']} {claim!r}")
    by_code = ", ".join(f"{code} {n}" for code, n in codes.most_common()) or "none"
    head = (
        f"  {path.stem.removeprefix('correct_answers_'):13} {sum(codes.values())} flags, all false, on "
        f"{flagged_turns} of {turns} turns ({conversations} conversations); by code: {by_code}"
    )
    return "\n".join([head, *lines])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list the development sets' flags")
    args = parser.parse_args(argv)
    print("correct answers on other desks:")
    for name in SETS:
        path = DATA / f"correct_answers_{name}.jsonl"
        if path.exists():
            print(measure(path, args.verbose and name.startswith("development")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
