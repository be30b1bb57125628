"""Checklist progress per incident, the per-project regression set, and replay runs."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from ctxaudit.ingest.models import Event
from ctxaudit.projects.models import Project


class ChecklistStep(models.Model):
    """A reviewer's mark on one step (1..7) of the §7.2 checklist for one event.

    No row means the step is still open; the row keeps who marked it last, and when.
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        DONE = "done", "Done"
        NOT_APPLICABLE = "na", "Not applicable"

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="checklist_steps")
    step = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=4, choices=Status.choices, default=Status.OPEN)
    note = models.TextField(blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["step"]
        constraints = [
            models.UniqueConstraint(fields=["event", "step"], name="checklist_step_unique"),
            models.CheckConstraint(condition=models.Q(step__gte=1, step__lte=7), name="checklist_step_range"),
        ]

    def __str__(self) -> str:
        return f"step {self.step}: {self.status}"


class RegressionCase(models.Model):
    """One case of a project's rule-retention regression set (seed §6.6), in the samples format
    (shared/samples/README.md): `case_id` is its "id"; `expected` its "expected" block."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="regression_cases")
    case_id = models.CharField(max_length=100)
    source = models.CharField(max_length=200, blank=True)
    strategy = models.CharField(max_length=20, blank=True)
    description = models.TextField(blank=True)
    rules = models.JSONField(default=list)  # [{"id", "text", "severity"}]
    before = models.JSONField(default=list)  # normalised messages [{"role", "content", "name"?}]
    after = models.JSONField(default=list)
    expected = models.JSONField(
        default=dict
    )  # {"rules": {id: state}, "demoted_rules", "summary_elevated", "verdict"}
    event = models.ForeignKey(
        Event, null=True, blank=True, on_delete=models.SET_NULL, related_name="regression_cases"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["project", "case_id"], name="regression_case_unique")]

    def __str__(self) -> str:
        return self.case_id


class ReplayEndpoint(models.Model):
    """A project's OpenAI-compatible model endpoint for checklist step 6 (replay before vs after).

    Absent by default: nothing leaves the machine until a project admin configures one. The API
    key is stored server-side and never rendered back.
    """

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="replay_endpoint")
    base_url = models.URLField(
        max_length=500
    )  # e.g. http://127.0.0.1:11434/v1 (…/chat/completions is appended)
    model = models.CharField(max_length=200)
    api_key = models.CharField(max_length=500, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.base_url


class ReplayRun(models.Model):
    """Step 6 run: the final user request sent with the before-context and with the after-context."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        ERROR = "error"

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="replay_runs")
    prompt = models.TextField()
    model = models.CharField(max_length=200)
    base_url = models.CharField(max_length=500)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    answer_before = models.TextField(blank=True)
    answer_after = models.TextField(blank=True)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"replay {self.pk} ({self.status})"
