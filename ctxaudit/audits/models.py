"""What the checks found, one row per rule outcome and per finding, for queries and timelines."""

from __future__ import annotations

from django.db import models

from ctxaudit.ingest.models import Event


class RuleOutcome(models.Model):
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="rule_outcomes")
    rule_id = models.CharField(max_length=100)
    text = models.TextField()
    state = models.CharField(max_length=10)  # retained | weakened | missing
    strength = models.FloatField()
    # NULL: the rule was not found on that side (distinct from a role named "")
    role_before = models.CharField(max_length=20, null=True, blank=True)  # noqa: DJ001
    role_after = models.CharField(max_length=20, null=True, blank=True)  # noqa: DJ001
    demoted = models.BooleanField(default=False)

    class Meta:
        indexes = [models.Index(fields=["rule_id", "state"])]

    def __str__(self) -> str:
        return f"{self.rule_id}: {self.state}"


class Finding(models.Model):
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="findings")
    kind = models.CharField(max_length=40, db_index=True)
    severity = models.CharField(max_length=10)
    # NULL: a finding about the event, not about one rule
    rule_id = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001
    message = models.TextField()
    evidence = models.JSONField(default=list)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.kind} ({self.severity})"
