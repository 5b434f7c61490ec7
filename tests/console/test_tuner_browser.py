"""The threshold tuner in a browser, on a log with refusals by the answerability check and
votes on refusals: the current row counts every refusal the log holds, a thumbs-down on a
refusal is shown apart and never scored as agreement, and too few votes get no advice.
Screenshot: test-artifacts/console-tuner-refusals.png."""

from __future__ import annotations

import pytest

from assistant.models import Interaction, Project
from tests.console.test_console_browser import live, log_in, page, shot  # noqa: F401
from tests.console.test_tuner import asked
from tests.ingestion.conftest import store  # noqa: F401 - fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_tuner_counts_the_checks_refusals_and_keeps_votes_on_refusals_apart(live, page):  # noqa: ANN001, F811
    project = Project.objects.create(name="Tuned", threshold=0.5)
    for i in range(30):
        best = [0.9, 0.7, 0.2][i % 3]  # 10 stop at the gate
        asked(project, best, checked_out=i in (0, 1))  # 2 more refused by the check
    asked(project, 0.95, vote=1)
    asked(project, 0.55, vote=-1)
    asked(project, 0.8, vote=-1, checked_out=True)  # the reader wanted an answer
    asked(project, 0.1, vote=-1)  # the same, below the gate

    log_in(page, live.url)
    page.goto(f"{live.url}/admin/tuner/?project={project.pk}")
    current = page.locator("tr.current")
    assert current.get_attribute("data-threshold") == "0.5"
    refused_in_log = Interaction.objects.filter(project=project, refused=True).count()
    assert current.locator("[data-refused]").inner_text() == str(refused_in_log) == "14"
    assert current.locator("[data-answered]").inner_text() == "20"
    cells = current.locator("td").all_inner_texts()
    assert cells[8] == "2"  # refusals disliked: shown apart, never agreement
    assert "(few)" in current.locator("[data-agreement]").inner_text()
    assert "Too few votes to advise" in page.get_by_test_id("advice").inner_text()
    shot(page, "tuner-refusals")
