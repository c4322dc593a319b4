"""A project's own judge key, kept write-only on the project.

Checker options no longer name an environment variable to read the judge's key from
(``entailment.api_key_env``): any project admin could point it, with the site's key, at a
URL of their choosing. Stored options that still carry it would now be refused by every
check run, so the key is taken out of them here; a project that needs a key for its own
judge sets it on its settings page.
"""

from django.db import migrations, models


def drop_api_key_env(apps, schema_editor):
    Project = apps.get_model("checks", "Project")
    for project in Project.objects.all().only("pk", "options"):
        entailment = (project.options or {}).get("entailment") if isinstance(project.options, dict) else None
        if isinstance(entailment, dict) and "api_key_env" in entailment:
            del entailment["api_key_env"]
            Project.objects.filter(pk=project.pk).update(options=project.options)


class Migration(migrations.Migration):

    dependencies = [
        ("checks", "0009_audit_keyed_chain"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="judge_api_key",
            field=models.CharField(blank=True, default="", editable=False, max_length=500),
        ),
        migrations.RunPython(drop_api_key_env, migrations.RunPython.noop),
    ]
