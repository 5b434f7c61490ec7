"""Covering indexes for the console's metrics over the interaction log (assistant_interaction).

The metrics pages aggregate every question of a period. With only (project, created_at) the
database reads each row of the table (question, answer and candidate JSON included) to get at
a few small columns; with these indexes it reads the index alone. One index leads with time
(period filters), one with topic (per-topic grouping and topic filters): SQLite picks the one
whose order suits the query. They live here, not in assistant.models, because the metrics
selectors in this app are their only users."""

from django.db import migrations

COLUMNS = "topic, best_relevance, kept_count, refused, total_ms, error"

FORWARD = [
    "CREATE INDEX interaction_metrics_by_time ON assistant_interaction "
    f"(project_id, created_at, {COLUMNS})",
    "CREATE INDEX interaction_metrics_by_topic ON assistant_interaction "
    f"(project_id, topic, created_at, {COLUMNS.replace('topic, ', '')})",
]
BACKWARD = [
    "DROP INDEX interaction_metrics_by_time",
    "DROP INDEX interaction_metrics_by_topic",
]


class Migration(migrations.Migration):
    dependencies = [
        ("feedback", "0002_question_vectors"),
        ("assistant", "0003_userfact_and_memory_settings"),
    ]

    operations = [
        migrations.RunSQL(sql=forward, reverse_sql=backward)
        for forward, backward in zip(FORWARD, BACKWARD, strict=True)
    ]
