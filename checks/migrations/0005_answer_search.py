"""Full-text search over turn answers: FTS5 on SQLite, a GIN index on PostgreSQL."""

from django.db import migrations

SQLITE_UP = [
    # An external-content index: the text stays in checks_turn, the index follows it by triggers.
    "CREATE VIRTUAL TABLE checks_turn_fts USING fts5("
    "answer, project_id UNINDEXED, conversation_id UNINDEXED, content='checks_turn', content_rowid='id')",
    "CREATE TRIGGER checks_turn_fts_insert AFTER INSERT ON checks_turn BEGIN "
    "INSERT INTO checks_turn_fts(rowid, answer, project_id, conversation_id) "
    "VALUES (new.id, new.answer, new.project_id, new.conversation_id); END",
    "CREATE TRIGGER checks_turn_fts_delete AFTER DELETE ON checks_turn BEGIN "
    "INSERT INTO checks_turn_fts(checks_turn_fts, rowid, answer, project_id, conversation_id) "
    "VALUES ('delete', old.id, old.answer, old.project_id, old.conversation_id); END",
    "CREATE TRIGGER checks_turn_fts_update AFTER UPDATE ON checks_turn BEGIN "
    "INSERT INTO checks_turn_fts(checks_turn_fts, rowid, answer, project_id, conversation_id) "
    "VALUES ('delete', old.id, old.answer, old.project_id, old.conversation_id); "
    "INSERT INTO checks_turn_fts(rowid, answer, project_id, conversation_id) "
    "VALUES (new.id, new.answer, new.project_id, new.conversation_id); END",
    "INSERT INTO checks_turn_fts(checks_turn_fts) VALUES ('rebuild')",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS checks_turn_fts_insert",
    "DROP TRIGGER IF EXISTS checks_turn_fts_delete",
    "DROP TRIGGER IF EXISTS checks_turn_fts_update",
    "DROP TABLE IF EXISTS checks_turn_fts",
]
POSTGRES_UP = [
    "CREATE INDEX IF NOT EXISTS checks_turn_answer_search "
    "ON checks_turn USING gin (to_tsvector('english'::regconfig, answer))",
]
POSTGRES_DOWN = ["DROP INDEX IF EXISTS checks_turn_answer_search"]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("checks", "0004_judge_runs")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_UP, "postgresql": POSTGRES_UP}),
            _run({"sqlite": SQLITE_DOWN, "postgresql": POSTGRES_DOWN}),
        )
    ]
