"""Alerts: per-project policies, alerts grouped by fingerprint, their history, channels and deliveries."""

from __future__ import annotations

import secrets
import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from ctxaudit.alerts.kinds import SEVERITIES
from ctxaudit.ingest.models import Event
from ctxaudit.projects.models import Project

SEVERITY_CHOICES = [(s, s) for s in SEVERITIES]


class AlertPolicy(models.Model):
    """Which findings of a project raise an alert. Created with defaults on first evaluation."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="alert_policy")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"alert policy of {self.project}"


class AlertCondition(models.Model):
    """One finding kind that raises an alert, with its thresholds.

    A finding qualifies when its severity >= min_severity and the event holds at least
    min_per_event qualifying findings of this kind; for rule_decay, the rule must also have lost
    strength in at least min_compressions events of the session (this one included).
    """

    policy = models.ForeignKey(AlertPolicy, on_delete=models.CASCADE, related_name="conditions")
    kind = models.CharField(max_length=40)
    min_severity = models.CharField(max_length=10, choices=SEVERITY_CHOICES, default="low")
    min_per_event = models.PositiveIntegerField(default=1)
    min_compressions = models.PositiveIntegerField(default=0)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["policy", "kind"], name="alert_condition_unique")]

    def __str__(self) -> str:
        return f"{self.kind} >= {self.min_severity} x{self.min_per_event}"


class Alert(models.Model):
    """Findings with the same fingerprint (project, rule_id, kind), grouped (Sentry-style)."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ACKNOWLEDGED = "acknowledged", "Acknowledged"
        RESOLVED = "resolved", "Resolved"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="alerts")
    kind = models.CharField(max_length=40)
    # "" for findings about no single rule (e.g. summary_elevated, claim_promoted).
    rule_id = models.CharField(max_length=100, blank=True, default="")
    rule_text = models.TextField(blank=True)
    title = models.TextField()  # the first finding's message
    severity = models.CharField(max_length=10, choices=SEVERITY_CHOICES, default="low")  # max seen
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN, db_index=True)
    # Set when a resolved alert fired again; cleared when it is resolved again.
    is_regression = models.BooleanField(default=False)
    count = models.PositiveIntegerField(default=0)  # events linked
    session_count = models.PositiveIntegerField(default=0)
    first_seen = models.DateTimeField(default=timezone.now)
    last_seen = models.DateTimeField(default=timezone.now)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assigned_alerts",
    )
    # Snooze/mute: until then the alert still counts but sends no notification.
    muted_until = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    events = models.ManyToManyField(Event, through="AlertEvent", related_name="alerts")

    class Meta:
        ordering = ["-last_seen", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "rule_id", "kind"], name="alert_fingerprint_unique")
        ]
        indexes = [models.Index(fields=["project", "status", "-last_seen"])]

    def __str__(self) -> str:
        return f"alert {self.pk} {self.fingerprint}"

    @property
    def fingerprint(self) -> str:
        return f"{self.project_id}:{self.rule_id or '-'}:{self.kind}"

    @property
    def is_muted(self) -> bool:
        return self.muted_until is not None and self.muted_until > timezone.now()


class AlertEvent(models.Model):
    """One event that fed an alert. Unique per (alert, event): re-evaluating an event is a no-op."""

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="alert_events")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="alert_events")
    severity = models.CharField(max_length=10, choices=SEVERITY_CHOICES)
    message = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]
        constraints = [models.UniqueConstraint(fields=["alert", "event"], name="alert_event_unique")]

    def __str__(self) -> str:
        return f"alert {self.alert_id} ← event {self.event_id}"


class AlertActivity(models.Model):
    """Every change to an alert: who (None: the system), when, what."""

    class Kind(models.TextChoices):
        OPENED = "opened"
        REGRESSION = "regression"
        ACKNOWLEDGED = "acknowledged"
        RESOLVED = "resolved"
        REOPENED = "reopened"
        ASSIGNED = "assigned"
        UNASSIGNED = "unassigned"
        COMMENT = "comment"
        MUTED = "muted"
        UNMUTED = "unmuted"
        NOTIFIED = "notified"
        ESCALATED = "escalated"  # a windowed policy went from its warning to its alert level

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="activities")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    text = models.TextField(blank=True)  # the comment, or what changed ("assigned to bob")
    event = models.ForeignKey(Event, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"alert {self.alert_id}: {self.kind}"


def _channel_secret() -> str:
    return secrets.token_urlsafe(32)


class Channel(models.Model):
    """Where a project's alert notifications go (healthchecks-style transports)."""

    class Kind(models.TextChoices):
        WEBHOOK = "webhook", "Webhook"
        EMAIL = "email", "Email"
        SLACK = "slack", "Slack (incoming webhook)"
        PAGERDUTY = "pagerduty", "PagerDuty (Events API v2 routing key)"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="alert_channels")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=100, blank=True)
    # Webhook URL (http/https) or a comma-separated list of email addresses.
    target = models.TextField()
    # HMAC-SHA256 key for webhook signatures; shown to project admins so receivers can verify.
    secret = models.CharField(max_length=100, default=_channel_secret)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name or f"{self.kind} {self.pk}"


class Delivery(models.Model):
    """One notification of one alert to one channel. Its `id` is the notification id receivers
    dedupe on; `status` is claimed with a conditional UPDATE before each send."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SENDING = "sending"
        RETRYING = "retrying"
        SENT = "sent"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(Event, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.CharField(max_length=20)  # opened | regression
    payload = models.JSONField()  # frozen at creation: a retry sends the same body
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    claimed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["alert", "channel", "event", "reason"], name="delivery_unique")
        ]

    def __str__(self) -> str:
        return f"notification {self.pk} ({self.status})"


class DeliveryAttempt(models.Model):
    """The delivery log: each attempt and what came back."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    at = models.DateTimeField(default=timezone.now)
    status_code = models.PositiveIntegerField(null=True, blank=True)  # HTTP status; None for email/errors
    ok = models.BooleanField(default=False)
    result = models.TextField(blank=True)  # "200 OK", "timed out", "sent to 2 recipients" ...
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}: {self.result}"


class AlertEvaluation(models.Model):
    """Marks an event as evaluated, so the sweep can re-enqueue evaluations lost on the way
    (the broker was down when the check finished)."""

    event = models.OneToOneField(
        Event, on_delete=models.CASCADE, primary_key=True, related_name="alert_evaluation"
    )
    evaluated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"event {self.event_id} evaluated"


class WindowMonitor(models.Model):
    """A windowed policy (Langfuse/LangSmith-style monitor): the share of a project's checked
    compressions in the last `window_minutes` that fail (metric failing_events) or lose a rule
    (metric rule_losses: a rule_missing/rule_weakened finding, optionally about one rule id or of
    at least min_severity). At or above warning_threshold it raises a medium alert, at or above
    alert_threshold a high one (critical when the monitor watches critical rules); it resolves
    itself once the share stayed under warning_threshold for a full window."""

    class Metric(models.TextChoices):
        FAILING_EVENTS = "failing_events", "Failing compressions"
        RULE_LOSSES = "rule_losses", "Compressions that lost a rule"

    class Level(models.TextChoices):
        OK = "ok"
        WARNING = "warning"
        ALERT = "alert"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="window_monitors")
    metric = models.CharField(max_length=20, choices=Metric.choices)
    rule_id = models.CharField(max_length=100, blank=True, default="")  # rule_losses: "" = any rule
    min_severity = models.CharField(max_length=10, choices=SEVERITY_CHOICES, default="low")
    window_minutes = models.PositiveIntegerField(default=60)
    min_compressions = models.PositiveIntegerField(default=10)
    warning_threshold = models.FloatField(default=0.1)  # fractions of the compressions in the window
    alert_threshold = models.FloatField(default=0.2)
    enabled = models.BooleanField(default=True)
    # State of the last evaluation, written by services.windows only.
    level = models.CharField(max_length=10, choices=Level.choices, default=Level.OK)
    last_share = models.FloatField(null=True, blank=True)
    last_total = models.PositiveIntegerField(default=0)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)
    below_since = models.DateTimeField(null=True, blank=True)  # first evaluation under warning
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            # The alert's fingerprint is (project, rule_id, kind): one monitor per metric and rule.
            models.UniqueConstraint(fields=["project", "metric", "rule_id"], name="window_monitor_unique")
        ]

    def __str__(self) -> str:
        return f"{self.metric} {self.rule_id or '*'} over {self.window_minutes} min"

    # Percents for the settings page: 0.125 → "12.5", 0.2 → "20".
    @property
    def warning_percent(self) -> str:
        return f"{round(self.warning_threshold * 100, 1):g}"

    @property
    def alert_percent(self) -> str:
        return f"{round(self.alert_threshold * 100, 1):g}"

    @property
    def last_percent(self) -> str:
        return "" if self.last_share is None else f"{round(self.last_share * 100, 1):g}"
