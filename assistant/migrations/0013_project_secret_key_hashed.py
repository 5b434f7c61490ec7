"""Project secret keys are no longer stored in clear: each existing key becomes its SHA-256
digest, its last four characters and a copy sealed with DJANGO_SECRET_KEY (assistant/sealing.py),
then the clear column is dropped. Servers keep using the same keys."""

from django.db import migrations, models

import assistant.models


def hash_existing_keys(apps, schema_editor):  # noqa: ANN001, ANN201
    from assistant.models import secret_key_digest
    from assistant.sealing import seal

    Project = apps.get_model("assistant", "Project")
    for project in Project.objects.all():
        key = project.secret_key
        project.secret_key_digest = secret_key_digest(key)
        project.secret_key_last4 = key[-4:]
        project.secret_key_sealed = seal(key)
        project.save(update_fields=["secret_key_digest", "secret_key_last4", "secret_key_sealed"])


class Migration(migrations.Migration):
    dependencies = [("assistant", "0012_interaction_asker")]

    operations = [
        migrations.AddField(
            model_name="project",
            name="secret_key_digest",
            field=models.CharField(default="", editable=False, max_length=64),
        ),
        migrations.AddField(
            model_name="project",
            name="secret_key_last4",
            field=models.CharField(blank=True, default="", editable=False, max_length=4),
        ),
        migrations.AddField(
            model_name="project",
            name="secret_key_sealed",
            field=models.TextField(blank=True, default="", editable=False),
        ),
        # Irreversible: the clear keys are gone once the column is dropped.
        migrations.RunPython(hash_existing_keys, migrations.RunPython.noop),
        migrations.RemoveField(model_name="project", name="secret_key"),
        migrations.AlterField(
            model_name="project",
            name="secret_key_digest",
            field=models.CharField(
                default=assistant.models.unknown_secret_digest,
                editable=False,
                max_length=64,
                unique=True,
            ),
        ),
    ]
