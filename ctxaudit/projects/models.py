"""Tenancy: projects, their members and roles, their API keys and rule sets."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone


class Project(models.Model):
    name = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Redact PII from contexts before the first durable write (issue: security).
    redact_pii = models.BooleanField(default=True)
    # Events older than this many days are purged by the periodic job; 0 keeps them forever.
    retention_days = models.PositiveIntegerField(default=90)
    # Decay finding: a rule's strength fell across this many compressions in one session.
    decay_compressions = models.PositiveIntegerField(default=2)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        ADMIN = "admin", "Admin"
        REVIEWER = "reviewer", "Security reviewer"
        OPS = "ops", "Ops"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.REVIEWER)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="membership_unique")]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.project_id} as {self.role}"


class ApiKey(models.Model):
    """A per-project key. Only its SHA-256 is stored; `prefix` is the visible part used for lookup."""

    # "admin": may replace the project's rule set (PUT /api/v1/rules).
    SCOPES = ("ingest", "read", "admin")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"cta_{self.prefix}_…"

    @staticmethod
    def hash_key(raw: str) -> str:
        # Keys are 32 random bytes: a fast hash is enough (no dictionary attack on random input).
        return hashlib.sha256(raw.encode()).hexdigest()

    @classmethod
    def generate(cls) -> tuple[str, str]:
        """Return (prefix, raw key). The raw key is "cta_<prefix>_<secret>"."""
        prefix = secrets.token_hex(4)
        return prefix, f"cta_{prefix}_{secrets.token_urlsafe(32)}"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class RuleSetVersion(models.Model):
    """One version of a project's rule set: who set it, when, how and from which files.

    `rules` is the full set of that version ([{"id", "text", "severity", "file"}]); the current
    version's rules are also the project's ProjectRule rows. Written by projects.rulesets only.
    """

    class Source(models.TextChoices):
        IMPORT_RULES = "import_rules", "manage.py import_rules"
        IMPORT_TRANSCRIPTS = "import_transcripts", "instruction files found by import_transcripts"
        API = "api", "PUT /api/v1/rules"
        UI = "ui", "edited on the rules page"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="rule_set_versions")
    number = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Readable after the user or key is gone: a username, "key cta_<prefix>" or "manage.py".
    actor = models.CharField(max_length=150, blank=True)
    source = models.CharField(max_length=30, choices=Source.choices)
    files = models.JSONField(default=list)
    rules = models.JSONField(default=list)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "number"], name="rule_set_version_unique")]
        ordering = ["-number"]

    def __str__(self) -> str:
        return f"{self.project_id} rules v{self.number}"


class ProjectRule(models.Model):
    """A rule of the project's current rule set (used when an event carries no rules)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="rules")
    rule_id = models.CharField(max_length=100)
    text = models.TextField()
    severity = models.CharField(max_length=10, default="high")
    # The instruction file the rule was read from ("" when typed in), and the version it is in.
    source_file = models.CharField(max_length=300, blank=True)
    version = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "rule_id"], name="project_rule_unique")]
        ordering = ["rule_id"]

    def __str__(self) -> str:
        return self.rule_id


class AuditLogEntry(models.Model):
    """Who viewed or exported an incident's content (issue 7). Written by projects.audit.log_content_access.

    No foreign key to the event: the entry must outlive the retention purge and still say what was
    seen. `username` and `api_key_prefix` keep the actor readable after a user or key is deleted.
    """

    class Action(models.TextChoices):
        VIEW = "view", "Viewed"
        EXPORT = "export", "Exported"
        DOWNLOAD = "download", "Downloaded"
        API_READ = "api_read", "Read through the API"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="audit_log")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    username = models.CharField(max_length=150, blank=True)
    api_key_prefix = models.CharField(max_length=16, blank=True)
    action = models.CharField(max_length=20, choices=Action.choices)
    object_type = models.CharField(max_length=40)
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200, blank=True)
    path = models.CharField(max_length=500, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.username or self.api_key_prefix} {self.action} {self.object_type} {self.object_id}"
