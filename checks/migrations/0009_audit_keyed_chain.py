"""The audit chain is keyed: each event records the scheme its hash was made with.

Events already written keep the unkeyed SHA-256 they were hashed with (scheme 1) and still
verify by that rule; every event written from now on is an HMAC under the audit key
(scheme 2). Adding the column with default 1 fills the existing rows in the ALTER TABLE
itself, so no UPDATE runs against the append-only log; the default then becomes 2.

Also the site log, for what belongs to no project (sign-ins, account changes in the admin),
append-only on PostgreSQL like the projects' log.
"""

import django.utils.timezone
from django.db import migrations, models

SCHEMES = [(1, "SHA-256 (unkeyed)"), (2, "HMAC-SHA256 under the audit key")]

UP = """
CREATE OR REPLACE FUNCTION checks_siteevent_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only: % on checks_siteevent is refused', TG_OP;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER checks_siteevent_append_only
    BEFORE UPDATE OR DELETE ON checks_siteevent
    FOR EACH ROW EXECUTE FUNCTION checks_siteevent_append_only();
"""
DOWN = """
DROP TRIGGER IF EXISTS checks_siteevent_append_only ON checks_siteevent;
DROP FUNCTION IF EXISTS checks_siteevent_append_only();
"""


def _on_postgres(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("checks", "0008_queue_indexes")]

    operations = [
        migrations.AddField(
            model_name="auditevent",
            name="scheme",
            field=models.PositiveSmallIntegerField(choices=SCHEMES, default=1),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="scheme",
            field=models.PositiveSmallIntegerField(choices=SCHEMES, default=2),
        ),
        migrations.CreateModel(
            name="SiteEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("actor_name", models.CharField(blank=True, max_length=150)),
                ("verb", models.CharField(max_length=50)),
                ("object_type", models.CharField(max_length=50)),
                ("object_id", models.CharField(max_length=50)),
                ("before", models.JSONField(blank=True, null=True)),
                ("after", models.JSONField(blank=True, null=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("previous_hash", models.CharField(max_length=64)),
                ("hash", models.CharField(max_length=64, unique=True)),
                ("scheme", models.PositiveSmallIntegerField(choices=SCHEMES, default=2)),
            ],
            options={
                "ordering": ["-id"],
                "indexes": [models.Index(fields=["created_at"], name="site_event_time")],
            },
        ),
        migrations.RunPython(_on_postgres(UP), _on_postgres(DOWN)),
    ]
