"""The one guard for requests made on a staff member's say (assistant/wiring/outbound.py): an
internal address in any spelling is refused, IPv6 addresses that carry an IPv4 one included,
and the allow-list admits what it names and nothing else. Addresses are literals or
`localhost`, resolved by the system: no network is needed."""

from __future__ import annotations

import pytest

from assistant.wiring import outbound

INTERNAL = [
    "http://0.0.0.0:8000/",
    "http://[::]:8000/",
    "http://localhost:6379/",
    "http://169.254.169.254/latest/",
    "http://127.1:5432/",  # 127.0.0.1, spelled short
    "http://2130706433/",  # 127.0.0.1 as one number
    "http://[::ffff:127.0.0.1]/",  # IPv4-mapped
    "http://[::ffff:a9fe:a9fe]/",  # IPv4-mapped 169.254.169.254
    "http://[::127.0.0.1]/",  # IPv4-compatible
    "http://[::a00:1]/",  # IPv4-compatible 10.0.0.1
    "http://[::ffff:0:7f00:1]/",  # SIIT's IPv4-translated
    "http://[64:ff9b::7f00:1]/",  # NAT64 of 127.0.0.1
    "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of 169.254.169.254
    "http://[64:ff9b:1::a00:1]/",  # local-use NAT64
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[2002:a00:1::1]/",  # 6to4 of 10.0.0.1
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",  # Teredo, client 127.0.0.1
]


@pytest.mark.parametrize("url", INTERNAL)
def test_an_internal_address_in_any_spelling_is_refused(settings, url):  # noqa: ANN001
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = []
    reason = outbound.refusal(url)
    assert "non-public address" in reason and "ASKDOCS_ALLOWED_PRIVATE_HOSTS" in reason


@pytest.mark.parametrize(
    "url",
    ["http://8.8.8.8/", "http://[::ffff:8.8.8.8]/", "http://[64:ff9b::808:808]/",
     "http://[2002:808:808::]/", "http://[2606:4700::1111]/"],
)  # fmt: skip
def test_a_public_address_in_a_transition_form_stays_public(settings, url):  # noqa: ANN001
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = []
    assert outbound.refusal(url) == ""


def test_the_allow_list_admits_what_it_names_and_nothing_else(settings):  # noqa: ANN001
    # What docs/sources.md tells a team whose docs are on this machine to set.
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1", "localhost"]
    assert outbound.refusal("http://127.0.0.1:8000/docs/") == ""
    assert outbound.refusal("http://localhost:8000/docs/") == ""  # ::1 too, by its name
    for other in ["http://0.0.0.0:8000/", "http://[::1]:8000/", "http://10.0.0.1/",
                  "http://[64:ff9b::7f00:1]/", "http://[::ffff:127.0.0.1]/"]:  # fmt: skip
        assert "non-public address" in outbound.refusal(other), other


def test_a_model_server_the_settings_name_is_reached_and_no_other_port_of_its_host(settings):  # noqa: ANN001
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = []
    settings.OLLAMA_HOST = "http://127.0.0.1:11434"
    settings.ASKDOCS_OPENAI_BASE_URL = "http://localhost:8000/v1"

    def refusal(url: str) -> str:
        return outbound.refusal(url, allowed=outbound.server_allow_list(url))

    assert refusal("http://127.0.0.1:11434/v1") == ""
    assert refusal("http://localhost:8000/v1/chat/completions") == ""
    assert "non-public address" in refusal("http://127.0.0.1:6379/v1")  # Redis
    assert "non-public address" in refusal("http://localhost:5432/v1")  # PostgreSQL
    assert "non-public address" in refusal("https://127.0.0.1:11434/v1")
