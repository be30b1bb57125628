from __future__ import annotations

from django.contrib import admin

# The admin generics (ModelAdmin[Model]) are not subscriptable at run time without
# django-stubs-ext, a dev-only package; the bare classes are what Django needs.
from ctxaudit.alerts.models import AlertCondition, AlertPolicy, Channel


class AlertConditionInline(admin.TabularInline):  # type: ignore[type-arg]
    model = AlertCondition
    extra = 0


@admin.register(AlertPolicy)
class AlertPolicyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("project", "enabled")
    inlines = [AlertConditionInline]


@admin.register(Channel)
class ChannelAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("project", "kind", "name", "target", "enabled")
    list_filter = ("kind", "enabled")
