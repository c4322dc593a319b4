"""Copy the repository's samples of the shared corpora from ``../shared/corpora``.

Each sample is every k-th conversation of the corpus's development part (even tasks, as
``bench/real_traffic.py`` splits it), in the corpus's order, from a fixed offset, with the
labels of those conversations and the corpus's LICENSE. Run it again when a shared corpus
changes; the READMEs beside the samples say what each holds.

    .venv/bin/python tests/data/corpora/resample.py
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[3] / "shared" / "corpora"
# corpus -> (k, offset). Airline starts at the second conversation: from the first, three
# of the twelve would hold no value for a rewrite to change.
SAMPLES = {"airline-dev": (2, 1), "retail-dev": (6, 0)}
_TASK = re.compile(r"\d+")


def develops(external_id: str) -> bool:
    """Whether a conversation is in the development part: its task, the first number in its
    external_id, is even (bench/real_traffic.py's split)."""
    task = _TASK.search(external_id)
    return not (task and int(task.group()) % 2)


def resample(name: str, every: int, offset: int) -> list[str]:
    source, target = SHARED / name, HERE / name
    target.mkdir(exist_ok=True)
    lines = [line for line in (source / "conversations.jsonl").read_text().splitlines() if line.strip()]
    development = [line for line in lines if develops(json.loads(line)["external_id"])]
    chosen = development[offset::every]
    ids = {json.loads(line)["external_id"] for line in chosen}
    labels = [
        line
        for line in (source / "labels.jsonl").read_text().splitlines()
        if line.strip() and json.loads(line)["external_id"] in ids
    ]
    (target / "conversations.jsonl").write_text("".join(line + "\n" for line in chosen))
    (target / "labels.jsonl").write_text("".join(line + "\n" for line in labels))
    shutil.copyfile(source / "LICENSE", target / "LICENSE")
    return [json.loads(line)["external_id"] for line in chosen]


if __name__ == "__main__":
    for name, (every, offset) in SAMPLES.items():
        print(name, " ".join(resample(name, every, offset)))
