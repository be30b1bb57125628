from __future__ import annotations

from django.contrib import admin

from ctxaudit.alerts.models import AlertCondition, AlertPolicy, Channel


class AlertConditionInline(admin.TabularInline):
    model = AlertCondition
    extra = 0


@admin.register(AlertPolicy)
class AlertPolicyAdmin(admin.ModelAdmin):
    list_display = ("project", "enabled")
    inlines = [AlertConditionInline]


@admin.register(Channel)
class ChannelAdmin(admin.ModelAdmin):
    list_display = ("project", "kind", "name", "target", "enabled")
    list_filter = ("kind", "enabled")
