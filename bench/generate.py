"""Fills a PostgreSQL database with a project of a million turns, for the benchmarks at scale.

    .venv/bin/python bench/generate.py [--conversations 100000] [--templates 1000] [--seed 5]
        [--database receipts_scale] [--admin-url postgres://postgres@127.0.0.1:5432/postgres]
        [--decided 0.25] [--verify 50] [--processes 2]

The project ("scale") gets ``--conversations`` conversations of 4 to 16 turns (10 on
average, exactly): support agents searching orders, tickets and stock, whose tool results are JSON
tables of 10 to 50 rows (about 2 kB), one result in a hundred of 100 to 500 rows; some
answers misstate a count, claim an absence the rows contradict, name an identifier no
result carried, claim an action no tool ran or a write that failed, or pass an argument
nobody gave. Their findings are the suite's own:

1. ``--templates`` distinct conversations are made from ``--seed`` and go through the
   project's real path: stored by ``ingestion.ingest_many`` into a second project
   ("templates"), then checked by ``checking.check_runs`` (the suite, the findings writer),
   in ``--processes`` processes.
2. Each template is then copied in SQL, ``--conversations / --templates`` times, into the
   "scale" project: new ids, its own external_id, creation times spread over 180 days
   (newest now), the document, raw payload and content hash rewritten to match, and each
   finding's fingerprint computed as ``Finding.make_fingerprint`` computes it, from the
   copy's own conversation id. A copy's content differs from its template's only in
   external_id and started_at, which no checker reads, so its findings are the ones the
   suite gives it; ``--verify`` conversations picked at random are checked again by the
   suite at the end and must match what was stored, finding for finding.
3. A share (``--decided``) of the flags is decided by three reviewers (confirmed or
   dismissed, with a Decision row each), and a tenth of the rest assigned.

The database is dropped and made anew, and kept at the end for the benchmarks
(``bench/page_times.py``); drop it with ``dropdb receipts_scale``. Needs a PostgreSQL the
admin URL can create databases on, and about 20 GB of disk for the defaults.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ingest_throughput import create_database, setup_django, with_database

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPAN = timedelta(days=180)
AGENTS = ["support-agent", "billing-agent", "stock-agent", "returns-agent", "triage-agent", "concierge"]
MODELS = ["example-9b", "example-32b", "other-70b"]
PEOPLE = ["Ada Ortiz", "Bo Lindqvist", "Chen Wei", "Dana Kowalski", "Eli Haddad", "Femi Adeyemi"]
STATES = ["open", "pending", "shipped", "closed", "on_hold"]
READ_TOOLS = ["search_orders", "list_tickets", "query_stock"]
WRITE_TOOLS = ["update_order", "cancel_order"]
REVIEWERS = ["rev-ana", "rev-bruno", "rev-chidi"]
# What each turn does, and how often: most answers are grounded, a few carry each fault.
KINDS = [
    ("lookup", 40),
    ("chat", 11),
    ("saved", 7),
    ("miscount", 7),
    ("invented", 7),
    ("ratio", 6),
    ("false_absence", 4),
    ("established", 4),
    ("unverified_action", 5),
    ("failed_write", 5),
    ("invented_argument", 4),
]


# --- the template conversations ------------------------------------------------------------


def rows_for(rng: random.Random, tool: str, count: int) -> list[dict[str, Any]]:
    """A compact table, about 70 bytes a row, as a search tool would return it."""
    out = []
    for _ in range(count):
        day = f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}"
        if tool == "search_orders":
            out.append(
                {
                    "id": f"ORD-{rng.randrange(10**6):06d}",
                    "status": rng.choice(STATES),
                    "total": round(rng.uniform(5, 2500), 2),
                    "placed": day,
                }
            )
        elif tool == "list_tickets":
            out.append(
                {
                    "id": f"T-{rng.randrange(10**5):05d}",
                    "state": rng.choice(STATES),
                    "priority": rng.choice(["low", "normal", "high"]),
                    "opened": day,
                }
            )
        else:
            out.append(
                {
                    "sku": f"SKU-{rng.randrange(10**6):06d}",
                    "site": rng.choice(["AMS-1", "FRA-2", "WAW-1"]),
                    "on_hand": rng.randint(0, 5000),
                    "updated": day,
                }
            )
    return out


def row_count(rng: random.Random) -> int:
    return rng.randint(100, 500) if rng.random() < 0.01 else rng.randint(10, 50)


class TurnMaker:
    """Makes the turns of one conversation, numbering its calls and citation handles."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.calls = 0

    def call(self, tool: str, arguments: dict[str, Any], result: Any, receipt: dict[str, Any]) -> tuple:
        self.calls += 1
        call_id = f"call-{self.calls}"
        request = {
            "id": call_id,
            "type": "function",
            "function": {"name": tool, "arguments": json.dumps(arguments)},
        }
        message = {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)}
        return request, message, {"call_id": call_id, "tool": tool, "handle": f"r{self.calls}", **receipt}

    def turn(self, kind: str) -> dict[str, Any]:
        rng = self.rng
        customer = rng.choice(PEOPLE)
        tool = rng.choice(READ_TOOLS)
        noun = {"search_orders": "orders", "list_tickets": "tickets", "query_stock": "stock lines"}[tool]
        question = {"role": "user", "content": f"Which {noun} does {customer} have open right now?"}
        turn: dict[str, Any] = {"tools_offered": READ_TOOLS + WRITE_TOOLS}
        if kind in ("chat", "unverified_action"):
            if kind == "chat":
                said = rng.choice(["Thanks, that helps.", "Good morning!", "Can you explain the last part?"])
                answer = rng.choice(["You're welcome. Anything else?", "Happy to help with that."])
            else:
                order = f"ORD-{rng.randrange(10**6):06d}"
                said = f"Please cancel order {order} for {customer}."
                answer = f"Done: I've cancelled order {order}, and {customer} will get an email."
            turn["messages"] = [{"role": "user", "content": said}, {"role": "assistant", "content": answer}]
            turn["receipts"] = []
            return turn
        if kind == "established":
            result = {"absent": True, "looked_for": {"customer": customer}}
            request, message, receipt = self.call(
                tool,
                {"customer": customer},
                result,
                {
                    "ok": True,
                    "effect": "read",
                    "result_count": 0,
                    "emptiness": "declared-absent",
                    "scope": {"filters": {"customer": customer}, "complete": True},
                },
            )
            answer = f"No {noun} were recorded for {customer}."
            turn["negative_claims"] = [{"kind": "none", "about": customer, "restsOn": [receipt["handle"]]}]
            return self._finish(turn, question, [request], [message], [receipt], answer)
        if kind in ("saved", "failed_write", "invented_argument"):
            order = f"ORD-{rng.randrange(10**6):06d}"
            write = rng.choice(WRITE_TOOLS)
            asked = {"role": "user", "content": f"Put order {order} of {customer} on hold, please."}
            target = order if kind != "invented_argument" else f"ORD-{rng.randrange(10**6):06d}"
            if kind == "failed_write":
                result, receipt = {"error": "order is already shipped"}, {"ok": False, "outcome": "error"}
            else:
                result, receipt = {"ok": True, "id": target, "status": "on_hold"}, {"ok": True}
            request, message, receipt = self.call(
                write, {"order_id": target, "status": "on_hold"}, result, {**receipt, "effect": "write"}
            )
            answer = f"I've updated order {order}: it is on hold now."
            return self._finish(turn, asked, [request], [message], [receipt], answer)
        rows = rows_for(rng, tool, row_count(rng))
        request, message, receipt = self.call(
            tool,
            {"customer": customer, "state": "open"},
            rows,
            {"ok": True, "effect": "read", "result_count": len(rows), "emptiness": "non-empty"},
        )
        first = rows[0]
        named = first.get("id") or first["sku"]
        if kind == "miscount":
            answer = (
                f"The {tool} tool returned {len(rows) + rng.randint(1, 9)} results; the first is {named}."
            )
        elif kind == "false_absence":
            answer = f"No {noun} were found for {customer}."
        elif kind == "invented":
            answer = f"The first is {named}, and reference RX-{rng.randrange(10**7):07d} covers the rest."
        elif kind == "ratio":
            field = "total" if tool == "search_orders" else ("on_hand" if tool == "query_stock" else None)
            if field:
                share = 100 * first[field] / sum(r[field] for r in rows)
                answer = f"{named} alone accounts for {share:.1f}% of the {field} across these {noun}."
            else:
                answer = f"I found {len(rows)} {noun}; the first is {named}."
        else:
            answer = f"I found {len(rows)} {noun}; the first is {named}."
        return self._finish(turn, question, [request], [message], [receipt], answer)

    @staticmethod
    def _finish(
        turn: dict[str, Any],
        question: dict[str, Any],
        requests: list[dict[str, Any]],
        results: list[dict[str, Any]],
        receipts: list[dict[str, Any]],
        answer: str,
    ) -> dict[str, Any]:
        turn["messages"] = [
            question,
            {"role": "assistant", "content": None, "tool_calls": requests},
            *results,
            {"role": "assistant", "content": answer},
        ]
        turn["receipts"] = receipts
        return turn


def turn_counts(rng: random.Random, count: int) -> list[int]:
    """4 to 16 turns a conversation, in pairs that sum to 20, so the average is 10 exactly
    and a hundred thousand conversations hold a million turns."""
    out: list[int] = []
    while len(out) < count:
        n = rng.randint(4, 16)
        out.extend([n, 20 - n])
    return out[:count]


def template(rng: random.Random, number: int, turns: int) -> dict[str, Any]:
    """One template conversation; external_id comes first, so a copy's raw body can be
    rewritten by replacing it (and started_at) as text."""
    kinds, weights = zip(*KINDS, strict=True)
    maker = TurnMaker(rng)
    agent = rng.choice(AGENTS)
    return {
        "external_id": f"tpl-{number:06d}",
        "started_at": "2026-01-01T00:00:00Z",
        "title": f"{agent} session {number}",
        "agent": {"name": agent, "model": rng.choice(MODELS)},
        "metadata": {"channel": rng.choice(["web", "email", "chat"]), "tenant": f"t-{rng.randrange(50)}"},
        "turns": [maker.turn(rng.choices(kinds, weights)[0]) for _ in range(turns)],
    }


# --- storing and checking the templates ----------------------------------------------------


def store_templates(project: Any, count: int, seed: int) -> list[int]:
    """The templates through ingest_many, the path the bulk API takes; returns their run ids."""
    from checks import ingestion

    rng = random.Random(seed)
    counts = turn_counts(rng, count)
    run_ids: list[int] = []
    for start in range(0, count, 100):
        items = []
        for number in range(start, min(count, start + 100)):
            payload = template(rng, number, counts[number])
            items.append((payload, json.dumps(payload)))
        results = ingestion.ingest_many(project=project, items=items)
        bad = [r for r in results if r.status != "created"]
        if bad:
            raise SystemExit(f"a template was refused: {bad[0]}")
        run_ids.extend(r.conversation.runs.get().pk for r in results)
    return run_ids


def _check_chunk(run_ids: list[int]) -> int:
    from checks import checking

    return len(checking.check_runs(run_ids=run_ids))


def check_templates(run_ids: list[int], processes: int) -> None:
    """The real check of each template, spread over processes (forked after Django is set up,
    each with a connection of its own)."""
    from django.db import connections

    connections.close_all()
    chunks = [run_ids[i : i + 10] for i in range(0, len(run_ids), 10)]
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        done = sum(pool.map(_check_chunk, chunks))
    if done != len(run_ids):
        raise SystemExit(f"only {done} of {len(run_ids)} template runs were checked")


# --- copying them in SQL -------------------------------------------------------------------


def columns(model: Any) -> list[str]:
    return [field.column for field in model._meta.concrete_fields]


def plan_copies(cursor: Any, project_id: int, conversations: int, templates: int) -> None:
    """One row per conversation to make: its copy number, template, external_id, creation
    time and content hash. Conversation k (oldest first) copies template k % templates."""
    from checks import ingestion
    from checks.models import Conversation

    cursor.execute(
        "CREATE TABLE gen_copy (copy int, template_id bigint, external_id text, at timestamptz,"
        " started text, content_hash text, PRIMARY KEY (copy, template_id))"
    )
    docs = {
        pk: (doc, json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
        for pk, doc in Conversation.objects.filter(project_id=project_id).values_list("pk", "document")
    }
    template_ids = sorted(docs)[:templates]
    now = datetime.now(UTC).replace(microsecond=0)
    step = SPAN / conversations
    rows = []
    for k in range(conversations):
        copy, pk = divmod(k, templates)
        doc, text = docs[template_ids[pk]]
        at = now - SPAN + step * k
        started = (at - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        external_id = f"conv-{k:07d}"
        # The canonical text with the two fields replaced, as content_hash would dump the copy.
        for old, new in (
            (f'"external_id":"{doc["external_id"]}"', f'"external_id":"{external_id}"'),
            (f'"started_at":"{doc["started_at"]}"', f'"started_at":"{started}"'),
        ):
            if text.count(old) != 1:
                raise SystemExit(f"template {pk}: {old} is not in its document exactly once")
            text = text.replace(old, new)
        digest = hashlib.sha256(text.encode()).hexdigest()
        rows.append((copy, template_ids[pk], external_id, at, started, digest))
    with cursor.copy("COPY gen_copy FROM STDIN") as copy_in:
        for row in rows:
            copy_in.write_row(row)
    # Check one hash against the real function, on a document rebuilt the way SQL will.
    first = docs[template_ids[0]][0]
    rebuilt = {**first, "external_id": rows[0][2], "started_at": rows[0][4]}
    if ingestion.content_hash(rebuilt) != rows[0][5]:
        raise SystemExit("the copies' content hash does not match ingestion.content_hash")


def fingerprint_suffixes(cursor: Any, project_id: int) -> None:
    """For each template finding, its fingerprint key without the conversation id, so SQL can
    hash a copy's key: sha256('[' || copy's conversation id || suffix)."""
    from checks.models import Finding

    cursor.execute("CREATE TABLE gen_fingerprint (finding_id bigint PRIMARY KEY, suffix text)")
    rows = []
    for pk, conversation_id, fingerprint, details in Finding.objects.filter(
        project_id=project_id
    ).values_list("pk", "conversation_id", "fingerprint", "details"):
        for occurrence in range(100):
            key = Finding.fingerprint_key(conversation_id, details, occurrence)
            if hashlib.sha256(key.encode()).hexdigest() == fingerprint:
                break
        else:
            raise SystemExit(f"finding {pk}: its fingerprint is not make_fingerprint's")
        prefix = f"[{conversation_id}"
        rows.append((pk, key[len(prefix) :]))
    with cursor.copy("COPY gen_fingerprint FROM STDIN") as copy_in:
        for row in rows:
            copy_in.write_row(row)


def copy_statements(source: int, target: int, strides: dict[str, int]) -> list[tuple[Any, str, str, dict]]:
    """For each table: the model, the FROM clause joining its template rows to gen_copy, and
    the columns that differ in a copy (every other column is the template's)."""
    from checks.models import CheckRun, Conversation, Finding, Message, Payload, ToolCall, Turn

    def shifted(table: str, column: str = "s.id") -> str:
        return f"{column} + {strides[table]} * (g.copy + 1)"

    conv = "checks_conversation"
    on_conversation = "gen_copy g ON g.template_id = s.conversation_id"
    via_turn = "checks_turn t ON t.id = s.turn_id JOIN gen_copy g ON g.template_id = t.conversation_id"
    common = {"project_id": str(target)}
    return [
        (
            Conversation,
            "gen_copy g ON g.template_id = s.id",
            "s.project_id",
            {
                **common,
                "id": shifted(conv),
                "external_id": "g.external_id",
                "document": "jsonb_set(jsonb_set(s.document, '{external_id}', to_jsonb(g.external_id)),"
                " '{started_at}', to_jsonb(g.started))",
                "started_at": "g.at - interval '1 minute'",
                "content_hash": "g.content_hash",
                "created_at": "g.at",
                "updated_at": "g.at",
            },
        ),
        (
            Payload,
            f"{on_conversation} JOIN {conv} c ON c.id = s.conversation_id",
            "s.project_id",
            {
                **common,
                "id": shifted("checks_payload"),
                "conversation_id": shifted(conv, "s.conversation_id"),
                "body": "replace(replace(s.body, '\"external_id\": \"' || c.external_id || '\"',"
                " '\"external_id\": \"' || g.external_id || '\"'),"
                ' \'"started_at": "2026-01-01T00:00:00Z"\', \'"started_at": "\' || g.started || \'"\')',
                "created_at": "g.at",
            },
        ),
        (
            Turn,
            on_conversation,
            "s.project_id",
            {
                **common,
                "id": shifted("checks_turn"),
                "conversation_id": shifted(conv, "s.conversation_id"),
                "created_at": "g.at",
            },
        ),
        (
            Message,
            via_turn,
            "s.project_id",
            {
                **common,
                "id": shifted("checks_message"),
                "turn_id": shifted("checks_turn", "s.turn_id"),
                "created_at": "g.at",
            },
        ),
        (
            ToolCall,
            via_turn,
            "s.project_id",
            {
                **common,
                "id": shifted("checks_toolcall"),
                "turn_id": shifted("checks_turn", "s.turn_id"),
                "created_at": "g.at",
            },
        ),
        (
            CheckRun,
            on_conversation,
            "s.project_id",
            {
                **common,
                "id": shifted("checks_checkrun"),
                "conversation_id": shifted(conv, "s.conversation_id"),
                "created_at": "g.at",
                "claimed_at": "g.at + interval '1 second'",
                "finished_at": "g.at + interval '2 seconds'",
            },
        ),
        (
            Finding,
            f"{on_conversation} JOIN gen_fingerprint fp ON fp.finding_id = s.id",
            "s.project_id",
            {
                **common,
                "id": shifted("checks_finding"),
                "conversation_id": shifted(conv, "s.conversation_id"),
                "turn_id": shifted("checks_turn", "s.turn_id"),
                "run_id": shifted("checks_checkrun", "s.run_id"),
                "fingerprint": "encode(sha256(convert_to('[' || ("
                + shifted(conv, "s.conversation_id")
                + ") || fp.suffix, 'UTF8')), 'hex')",
                "created_at": "g.at + interval '2 seconds'",
                "updated_at": "g.at + interval '2 seconds'",
            },
        ),
    ]


def copy_all(conn: Any, source: int, target: int, copies: int, chunk: int) -> dict[str, int]:
    """Copies every template row into the target project, ``chunk`` copies per statement."""
    statements = None
    with conn.cursor() as cursor:
        strides = {}
        for table in (
            "checks_conversation",
            "checks_payload",
            "checks_turn",
            "checks_message",
            "checks_toolcall",
            "checks_checkrun",
            "checks_finding",
        ):
            strides[table] = cursor.execute(f"SELECT max(id) FROM {table}").fetchone()[0]
        statements = copy_statements(source, target, strides)
        # The speed of the load only: TOAST with lz4 instead of pglz; reads are as fast or faster.
        cursor.execute("SET default_toast_compression = 'lz4'")
        cursor.execute("SET synchronous_commit = off")
    written: dict[str, int] = {}
    started = time.perf_counter()
    for first in range(0, copies, chunk):
        last = min(copies, first + chunk) - 1
        with conn.cursor() as cursor:
            for model, joins, source_project, overrides in statements:
                table = model._meta.db_table
                cols = columns(model)
                select = ", ".join(overrides.get(col, f"s.{col}") for col in cols)
                cursor.execute(
                    f"INSERT INTO {table} ({', '.join(cols)}) SELECT {select} FROM {table} s JOIN {joins}"
                    f" WHERE {source_project} = %s AND g.copy BETWEEN %s AND %s",
                    [source, first, last],
                )
                written[table] = written.get(table, 0) + cursor.rowcount
        conn.commit()
        done = last + 1
        elapsed = time.perf_counter() - started
        print(
            f"  copies {done}/{copies}: {written['checks_turn']:,} turns,"
            f" {written['checks_finding']:,} findings, {elapsed:.0f} s",
            flush=True,
        )
    with conn.cursor() as cursor:
        for table in strides:
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
            )
    conn.commit()
    return written


def decide_share(conn: Any, target: int, reviewer_ids: list[int], share: float) -> tuple[int, int]:
    """Decides a share of the flags (seven in ten confirmed), oldest no matter: a stable hash
    of the id picks them; assigns a tenth of the flags left open."""
    percent = round(share * 100)
    n = len(reviewer_ids)
    reviewers = "ARRAY[" + ", ".join(str(i) for i in reviewer_ids) + "]"
    with conn.cursor() as cursor:
        cursor.execute(
            "UPDATE checks_finding"
            " SET status = CASE WHEN (id * 31) %% 10 < 7 THEN 'confirmed' ELSE 'dismissed' END"
            " WHERE project_id = %s AND severity = 'flag' AND (id * 7919) %% 100 < %s",
            [target, percent],
        )
        cursor.execute(
            "INSERT INTO checks_decision (project_id, finding_id, reviewer_id, verdict, reason, created_at)"
            f" SELECT project_id, id, ({reviewers})[1 + id %% {n}], status,"
            " CASE WHEN status = 'dismissed' THEN 'The value is in a tool result' ELSE '' END,"
            " created_at + interval '1 day' FROM checks_finding"
            " WHERE project_id = %s AND status <> 'open'",
            [target],
        )
        decided = cursor.rowcount
        cursor.execute(
            f"UPDATE checks_finding SET assignee_id = ({reviewers})[1 + id %% {n}]"
            " WHERE project_id = %s AND status = 'open' AND severity = 'flag' AND (id * 131) %% 10 = 0",
            [target],
        )
        assigned = cursor.rowcount
    conn.commit()
    return decided, assigned


# --- checking the copies against the suite -------------------------------------------------


def verify(target: int, sample: int, seed: int) -> int:
    """Runs the suite on sampled copies and compares its findings, by fingerprint, with the
    stored ones; also the content hash. Returns how many conversations matched."""
    from checks import ingestion, suite
    from checks.models import Conversation, Finding, Project
    from checks.suite import conversation as native

    project = Project.objects.get(pk=target)
    options = suite.parse_options(project.options or None)
    ids = list(Conversation.objects.filter(project=project).values_list("pk", flat=True))
    for pk in random.Random(seed).sample(ids, min(sample, len(ids))):
        conversation = Conversation.objects.get(pk=pk)
        if ingestion.content_hash(conversation.document) != conversation.content_hash:
            raise SystemExit(f"conversation {pk}: its content hash does not match its document")
        report = suite.run_suite(native.from_canonical(conversation.document), options)
        indexes = set(conversation.turns.values_list("index", flat=True))
        expected: set[str] = set()
        for item in report["findings"]:
            if item["turn"] not in indexes:
                continue
            occurrence = 0
            while (fingerprint := Finding.make_fingerprint(pk, item, occurrence)) in expected:
                occurrence += 1
            expected.add(fingerprint)
        stored = set(
            Finding.objects.current().filter(conversation=conversation).values_list("fingerprint", flat=True)
        )
        if stored != expected:
            raise SystemExit(
                f"conversation {pk}: the suite finds {len(expected)} findings, {len(stored)} are stored"
                f" ({len(expected - stored)} missing, {len(stored - expected)} extra)"
            )
    return min(sample, len(ids))


# --- the run -------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--templates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--database", default="receipts_scale")
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--decided", type=float, default=0.25, help="share of flags decided")
    parser.add_argument("--verify", type=int, default=50, help="copies checked again by the suite")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=5, help="copies written per statement")
    args = parser.parse_args()
    if args.conversations % args.templates:
        raise SystemExit("--conversations must be a multiple of --templates")

    command = " ".join(["bench/generate.py", *sys.argv[1:]])
    database_url = with_database(args.admin_url, args.database)
    total_started = time.perf_counter()
    create_database(args.admin_url, args.database)
    setup_django(database_url, tempfile.mkdtemp(prefix="receipts-generate-"))

    import psycopg
    from django.contrib.auth import get_user_model

    from checks.models import Membership, Project, Role

    source = Project.objects.create(name="Templates", slug="templates")
    target = Project.objects.create(name="Scale", slug="scale")
    users = [get_user_model().objects.create_user(name, password=None) for name in REVIEWERS]
    for project in (source, target):
        for user in users:
            Membership.objects.create(project=project, user=user, role=Role.REVIEWER)

    started = time.perf_counter()
    run_ids = store_templates(source, args.templates, args.seed)
    stored_s = time.perf_counter() - started
    print(f"templates stored: {args.templates} conversations in {stored_s:.1f} s", flush=True)
    started = time.perf_counter()
    check_templates(run_ids, args.processes)
    checked_s = time.perf_counter() - started
    from checks.models import Finding, Turn

    template_turns = Turn.objects.filter(project=source).count()
    print(
        f"templates checked: {template_turns} turns in {checked_s:.1f} s"
        f" ({template_turns / checked_s:.0f} turns/s on {args.processes} processes),"
        f" {Finding.objects.filter(project=source).count()} findings",
        flush=True,
    )

    with psycopg.connect(database_url) as conn:
        started = time.perf_counter()
        with conn.cursor() as cursor:
            plan_copies(cursor, source.pk, args.conversations, args.templates)
            fingerprint_suffixes(cursor, source.pk)
        conn.commit()
        written = copy_all(conn, source.pk, target.pk, args.conversations // args.templates, args.chunk)
        copied_s = time.perf_counter() - started
        decided, assigned = decide_share(conn, target.pk, [u.pk for u in users], args.decided)
        conn.execute("DROP TABLE gen_copy")
        conn.execute("DROP TABLE gen_fingerprint")
        conn.commit()
    with psycopg.connect(database_url, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute("VACUUM ANALYZE")
        vacuum_s = time.perf_counter() - started
        size = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))").fetchone()[0]

    started = time.perf_counter()
    verified = verify(target.pk, args.verify, args.seed)
    verify_s = time.perf_counter() - started
    by_code = (
        Finding.objects.filter(project=target)
        .values_list("checker", "code")
        .order_by("checker", "code")
        .distinct()
    )
    print()
    print(f"Generated into {args.database} ({size}) in {time.perf_counter() - total_started:.0f} s:")
    for table, rows in written.items():
        print(f"  {table:22} {rows:>12,}")
    print(f"  decided flags          {decided:>12,}   (assigned open flags: {assigned:,})")
    print(f"  checkers and codes: {', '.join(f'{c}/{k}' for c, k in by_code)}")
    print(
        f"  copy {copied_s:.0f} s, vacuum analyze {vacuum_s:.0f} s;"
        f" {verified} copies checked again by the suite in {verify_s:.0f} s: every finding matched"
    )
    print(f"\nReproduce: .venv/bin/python {command}")


if __name__ == "__main__":
    main()
