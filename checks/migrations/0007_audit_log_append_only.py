"""On PostgreSQL the database itself refuses UPDATE and DELETE on the audit log."""

from django.db import migrations

UP = """
CREATE OR REPLACE FUNCTION checks_auditevent_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only: % on checks_auditevent is refused', TG_OP;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER checks_auditevent_append_only
    BEFORE UPDATE OR DELETE ON checks_auditevent
    FOR EACH ROW EXECUTE FUNCTION checks_auditevent_append_only();
"""
DOWN = """
DROP TRIGGER IF EXISTS checks_auditevent_append_only ON checks_auditevent;
DROP FUNCTION IF EXISTS checks_auditevent_append_only();
"""


def _on_postgres(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("checks", "0006_review_desk_and_reports")]

    operations = [migrations.RunPython(_on_postgres(UP), _on_postgres(DOWN))]
