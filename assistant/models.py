from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid

from django.core.exceptions import ValidationError
from django.core.validators import (
    EmailValidator,
    MaxValueValidator,
    MinValueValidator,
    RegexValidator,
    URLValidator,
)
from django.db import models

from assistant.origins import normalise_origin, stored_origin, validate_origins, validate_server_url
from assistant.personal_data.models import PrivacySettings
from assistant.rag.types import RERANK_MS_PER_CHUNK, Settings
from assistant.rag.write.prompting import MAX_INSTRUCTIONS_CHARS
from assistant.sealing import seal, unseal
from assistant.wiring import outbound
from assistant.wiring.generators import generator_choices

#: The pipeline's knob defaults live once, in the core's `Settings`; new projects start there.
PIPELINE_DEFAULTS = Settings()


def new_public_key() -> str:
    return "pk_" + secrets.token_urlsafe(18)


def new_secret_key() -> str:
    return "sk_" + secrets.token_urlsafe(32)


def secret_key_digest(key: str) -> str:
    """What is stored of a secret key: its SHA-256. A key is 256 random bits, so a fast hash
    is enough (nothing to guess), and equal keys have equal digests for the unique index."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def unknown_secret_digest() -> str:
    """The digest of a key nobody was shown: a project made outside the console has no usable
    secret key until one is issued (rotated)."""
    return secret_key_digest(new_secret_key())


sms_number_validator = RegexValidator(
    r"^\+[1-9][0-9]{6,14}$", "Enter the number in E.164 form, like +15551234567."
)


class Project(PrivacySettings):
    """A site that embeds the widget (and/or a phone number that answers SMS); its privacy
    settings are in assistant/privacy/models.py."""

    class ContactSupport(models.TextChoices):
        NONE = "", 'None: no "Ask a person"'
        LINK = "link", "A support page (the widget links to it)"
        EMAIL = "email", "An e-mail address (the conversation is mailed to it)"
        WEBHOOK = "webhook", "A webhook (the conversation is POSTed to it as JSON)"

    class Generator:
        """The stored values code names; the choices and their labels are the rows of
        assistant/wiring/generators.py (a new generator is a row there, no migration)."""

        AUTO = "auto"
        EXTRACTIVE = "extractive"
        OLLAMA = "ollama"
        LOCAL = "local"
        OPENAI = "openai"

    name = models.CharField(max_length=100, unique=True)
    public_key = models.CharField(max_length=64, unique=True, default=new_public_key)
    # The secret key is never stored: its digest (to check it), its last four characters (to
    # tell keys apart) and a copy sealed with the site's key (user hashes are HMACs keyed by
    # it, so it must be read back; see assistant/sealing.py). Shown in full only when issued.
    secret_key_digest = models.CharField(
        max_length=64, unique=True, default=unknown_secret_digest, editable=False
    )
    secret_key_last4 = models.CharField(max_length=4, blank=True, default="", editable=False)
    secret_key_sealed = models.TextField(blank=True, default="", editable=False)
    allowed_origins = models.JSONField(default=list, blank=True, validators=[validate_origins])
    threshold = models.FloatField(
        default=PIPELINE_DEFAULTS.threshold,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
    )
    num_candidates = models.PositiveSmallIntegerField(
        default=PIPELINE_DEFAULTS.num_candidates,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
    )
    rerank_top = models.PositiveSmallIntegerField(
        default=PIPELINE_DEFAULTS.rerank_top,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="How many of the candidates, best first, the cross-encoder reads. It is the "
        f"cost of a question: about {RERANK_MS_PER_CHUNK} ms each.",
    )
    max_kept = models.PositiveSmallIntegerField(
        default=PIPELINE_DEFAULTS.max_kept, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    generator = models.CharField(max_length=20, choices=generator_choices, default=Generator.AUTO)
    check_llm_answers = models.BooleanField(
        "Check answerability before the model writes",
        default=False,
        help_text="Refuse before calling Ollama or the local model when no sentence of the kept "
        "passages answers the question. Always on for the extractive answerer.",
    )
    custom_instructions = models.TextField(
        "Custom instructions for the model",
        blank=True,
        max_length=MAX_INSTRUCTIONS_CHARS,
        help_text="Tone and naming for written answers (Ollama or the local model), e.g. "
        '"Call the product Acme Cloud. Address the reader as you." Added after the fixed rules, '
        "which it cannot change: answers still come only from your sources, with citations.",
    )
    # The generator `openai`: each empty field falls back to its ASKDOCS_OPENAI_* setting. The
    # API key is sealed like the secret key (assistant/sealing.py) and never shown back whole.
    openai_base_url = models.CharField(
        "Server base URL",
        validators=[validate_server_url],
        max_length=300,
        blank=True,
        default="",
        help_text="The OpenAI-compatible server, as its clients take it: "
        "http://gpu-box:8000/v1. Empty: ASKDOCS_OPENAI_BASE_URL.",
    )
    openai_model = models.CharField(
        "Server model",
        max_length=200,
        blank=True,
        default="",
        help_text="The model name the server serves. Empty: ASKDOCS_OPENAI_MODEL.",
    )
    openai_api_key_sealed = models.TextField(blank=True, default="", editable=False)
    openai_api_key_last4 = models.CharField(max_length=4, blank=True, default="", editable=False)
    memory_threshold = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Similarity a remembered fact needs to be used for a question. Empty: the "
        "value calibrated for the embedder.",
    )
    memory_learns_statements = models.BooleanField(
        default=False,
        help_text='Also remember what users state about themselves ("I\'m on the Team plan"), '
        "not only what they ask to be remembered.",
    )
    sms_number = models.CharField(
        "SMS number",
        max_length=16,
        blank=True,
        default="",
        validators=[sms_number_validator],
        help_text="The Twilio number (E.164) that answers texts from these documents.",
    )
    # Slack (assistant/slack): the app's signing secret and bot token, sealed like the other
    # keys and shown back only as a hint; the channels where every message is a question.
    slack_signing_secret_sealed = models.TextField(blank=True, default="", editable=False)
    slack_signing_secret_last4 = models.CharField(
        max_length=4, blank=True, default="", editable=False
    )
    slack_bot_token_sealed = models.TextField(blank=True, default="", editable=False)
    slack_bot_token_last4 = models.CharField(max_length=4, blank=True, default="", editable=False)
    slack_channels = models.JSONField(
        "Watched Slack channels",
        default=list,
        blank=True,
        help_text="Channel ids (C0123ABCD) where every message is a question, not only mentions.",
    )
    # Discord (assistant/discord): the application's id and public key (Discord publishes the
    # key: requests are checked with it), and its bot token, sealed like the other keys, with
    # which the console registers the /ask command and tests the connection.
    discord_application_id = models.CharField(
        "Discord application id", max_length=20, blank=True, default=""
    )
    discord_public_key = models.CharField(
        "Discord public key", max_length=64, blank=True, default=""
    )
    discord_bot_token_sealed = models.TextField(blank=True, default="", editable=False)
    discord_bot_token_last4 = models.CharField(max_length=4, blank=True, default="", editable=False)
    llms_txt_enabled = models.BooleanField(
        "Publish llms.txt",
        default=False,
        help_text="Serve /p/<project>/llms.txt and llms-full.txt: the index of the documents and "
        "their text, public to anyone who has the address.",
    )
    contact_support = models.CharField(
        "Contact support",
        max_length=10,
        choices=ContactSupport.choices,
        blank=True,
        default=ContactSupport.NONE,
        help_text='What "Ask a person" in the widget does.',
    )
    contact_support_target = models.CharField(
        "Support address",
        max_length=500,
        blank=True,
        default="",
        help_text="The support page's URL, the e-mail address, or the webhook's URL.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["sms_number"],
                condition=~models.Q(sms_number=""),
                name="unique_project_sms_number",
            )
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def secret_key_hint(self) -> str:
        """Enough of the secret key to tell which one a server holds, too little to use it:
        the full key is shown only when it is made (console, creation or rotation)."""
        return f"sk_…{self.secret_key_last4}" if self.secret_key_last4 else "none issued yet"

    def issue_secret_key(self) -> str:
        """A new secret key for this project (the old one stops working once saved); the only
        moment it exists in clear."""
        key = new_secret_key()
        self.secret_key_digest = secret_key_digest(key)
        self.secret_key_last4 = key[-4:]
        self.secret_key_sealed = seal(key)
        return key

    @property
    def openai_api_key_hint(self) -> str:
        """How the console shows a stored key: never whole, the last four only of a long one."""
        if not self.openai_api_key_sealed:
            return ""
        return f"set, ending …{self.openai_api_key_last4}" if self.openai_api_key_last4 else "set"

    def set_openai_api_key(self, key: str) -> None:
        """Seal the key of the project's OpenAI-compatible server ("" forgets it)."""
        key = key.strip()
        self.openai_api_key_sealed = seal(key) if key else ""
        self.openai_api_key_last4 = key[-4:] if len(key) >= 12 else ""

    def openai_endpoint_fields(self) -> dict[str, str]:
        """The project's own base URL, model and API key ("" where the setting applies); a
        key sealed under a site key no longer known reads as none (the server will say 401)."""
        try:
            key = unseal(self.openai_api_key_sealed) if self.openai_api_key_sealed else ""
        except ValueError:
            key = ""
        return {"base_url": self.openai_base_url, "model": self.openai_model, "api_key": key}

    @property
    def slack_signing_secret_hint(self) -> str:
        return _sealed_hint(self.slack_signing_secret_sealed, self.slack_signing_secret_last4)

    @property
    def slack_bot_token_hint(self) -> str:
        return _sealed_hint(self.slack_bot_token_sealed, self.slack_bot_token_last4)

    def set_slack_signing_secret(self, secret: str) -> None:
        """Seal the Slack app's signing secret ("" forgets it)."""
        self.slack_signing_secret_sealed, self.slack_signing_secret_last4 = _sealed(secret)

    def set_slack_bot_token(self, token: str) -> None:
        """Seal the Slack app's bot token (xoxb-…; "" forgets it)."""
        self.slack_bot_token_sealed, self.slack_bot_token_last4 = _sealed(token)

    def slack_signing_secret(self) -> str:
        """The signing secret in clear, "" when none is set or it cannot be read back (sealed
        under a site key no longer known): then every request is refused."""
        return _unsealed(self.slack_signing_secret_sealed)

    def slack_bot_token(self) -> str:
        return _unsealed(self.slack_bot_token_sealed)

    @property
    def slack_connected(self) -> bool:
        return bool(self.slack_signing_secret_sealed and self.slack_bot_token_sealed)

    @property
    def discord_bot_token_hint(self) -> str:
        return _sealed_hint(self.discord_bot_token_sealed, self.discord_bot_token_last4)

    def set_discord_bot_token(self, token: str) -> None:
        """Seal the Discord application's bot token ("" forgets it)."""
        self.discord_bot_token_sealed, self.discord_bot_token_last4 = _sealed(token)

    def discord_bot_token(self) -> str:
        return _unsealed(self.discord_bot_token_sealed)

    @property
    def discord_connected(self) -> bool:
        """Requests from Discord are checked and answered (the bot token is needed only to
        register the command and to test the connection)."""
        return bool(self.discord_application_id and self.discord_public_key)

    def secret_key_matches(self, candidate: str) -> bool:
        """The one place a presented secret key is checked (every door, through the intake),
        in constant time."""
        return bool(candidate) and hmac.compare_digest(
            secret_key_digest(candidate), self.secret_key_digest
        )

    def signing_key(self) -> bytes:
        """The secret key, unsealed, only as the key of HMACs the project's own server makes
        or checks (user hashes; signatures of what we send it). ValueError when none was
        issued or the site's key that sealed it is gone."""
        if not self.secret_key_sealed:
            raise ValueError("no secret key has been issued")
        return unseal(self.secret_key_sealed).encode()

    def clean(self) -> None:
        super().clean()
        if reason := self._model_server_refusal():
            raise ValidationError({"openai_base_url": reason})
        kind, target = self.contact_support, self.contact_support_target.strip()
        self.contact_support_target = target
        if not kind:
            return
        error = {"contact_support_target": 'Enter where "Ask a person" goes.'}
        if not target:
            raise ValidationError(error)
        try:
            if kind == self.ContactSupport.EMAIL:
                EmailValidator("Enter an e-mail address like support@example.com.")(target)
            else:
                URLValidator(schemes=["http", "https"], message="Enter an http(s) URL.")(target)
        except ValidationError as exc:
            raise ValidationError({"contact_support_target": exc.messages}) from None
        if kind == self.ContactSupport.WEBHOOK and (reason := outbound.refusal(target)):
            raise ValidationError({"contact_support_target": reason})

    def _model_server_refusal(self) -> str:
        """Why the project's own model server would not be reached (its URL's form is the
        field validator's to judge): every visitor's question would be posted there."""
        server = self.openai_base_url.strip()
        try:
            validate_server_url(server)
        except ValidationError:
            return ""
        return outbound.refusal(server, allowed=outbound.server_allow_list(server))

    def allows_origin(self, origin: str) -> bool:
        try:
            wanted = normalise_origin(origin)
        except ValueError:
            return False
        return any(stored_origin(o) == wanted for o in self.allowed_origins)


def _sealed(secret: str) -> tuple[str, str]:
    secret = secret.strip()
    return (seal(secret) if secret else "", secret[-4:] if len(secret) >= 12 else "")


def _unsealed(token: str) -> str:
    try:
        return unseal(token) if token else ""
    except ValueError:
        return ""


def _sealed_hint(sealed: str, last4: str) -> str:
    """How the console shows a stored secret: never whole, the last four only of a long one."""
    if not sealed:
        return ""
    return f"set, ending …{last4}" if last4 else "set"


class Interaction(models.Model):
    """One question and what the pipeline did with it: the raw material of every metric."""

    class Channel(models.TextChoices):
        WIDGET = "widget", "Widget"
        API = "api", "HTTP API"
        SMS = "sms", "SMS"
        SANDBOX = "sandbox", "Sandbox"
        CLI = "cli", "Command line"
        MCP = "mcp", "MCP (AI tools)"
        SLACK = "slack", "Slack"
        DISCORD = "discord", "Discord"

    answer_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="interactions")
    channel = models.CharField(max_length=10, choices=Channel.choices)
    conversation_id = models.CharField(max_length=64, blank=True, db_index=True)
    question = models.TextField()
    topic = models.CharField(max_length=200, blank=True)
    retrieval_query = models.TextField()
    #: Which form of the query won: "question" (as asked) or "with_history" (a follow-up
    #: joined to the previous question).
    query_form = models.CharField(max_length=20, blank=True, default="")
    # [{chunk_id, title, url, similarity, relevance, kept}], best relevance first
    candidates = models.JSONField(default=list)
    sources = models.JSONField(default=list)
    #: A refusal's related pages [{title, url, relevance}] ("These pages may help").
    related = models.JSONField(default=list, blank=True)
    best_relevance = models.FloatField(null=True)
    kept_count = models.PositiveSmallIntegerField(default=0)
    answer = models.TextField(blank=True)
    refused = models.BooleanField(default=False)
    generator = models.CharField(max_length=60, blank=True)
    #: Why `generator` is not the project's own (its LLM server could not start an answer).
    fallback = models.CharField(max_length=200, blank=True, default="")
    error = models.CharField(max_length=60, blank=True)
    latency_ms = models.JSONField(default=dict)
    # [{fact_id, similarity, injected}] of the user's facts compared with the question
    memory = models.JSONField(default=list, blank=True)
    #: The answerability check: answerable, score, reason (when it refused), features.
    answerability = models.JSONField(default=dict, blank=True)
    total_ms = models.FloatField(default=0)
    #: Who asked, as a keyed hash (no address is stored): a proven identity (a host page's
    #: signed-in user, an SMS sender) or else the client's address; "" when unknown (console,
    #: command line). Suggestions count distinct askers.
    asker = models.CharField(max_length=32, blank=True, default="")
    #: The widget visitor's own key (`visitor:<id>`), as a keyed hash: it counts no one (the
    #: page makes the id up) but lets that visitor's questions be found, exported and erased
    #: on their request (assistant/privacy/holdings.py); "" for other doors.
    visitor = models.CharField(max_length=32, blank=True, default="", db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["project", "created_at"]),
            models.Index(fields=["project", "topic", "created_at"]),
        ]

    def __str__(self) -> str:
        return self.question[:60]


# Models of the SMS channel and of user memory live with them; importing them here registers them.
from assistant.discord.models import DiscordInteraction  # noqa: E402
from assistant.handoff.models import Handoff  # noqa: E402
from assistant.memory.models import UserFact  # noqa: E402
from assistant.personal_data.models import PrivacyAudit  # noqa: E402
from assistant.slack.models import SlackEvent  # noqa: E402
from assistant.sms.models import SmsConversation, SmsMessage  # noqa: E402

__all__ = [
    "DiscordInteraction", "Handoff", "Interaction", "PrivacyAudit", "Project", "SlackEvent",
    "SmsConversation", "SmsMessage", "UserFact",
]  # fmt: skip
