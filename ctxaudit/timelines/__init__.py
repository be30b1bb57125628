"""Per-session rule decay timelines (seed §3.5), decay findings and the cross-session decay overview.

A package of its own (no models): it reads ingest.Event/SessionRule and audits.RuleOutcome, and
writes only audits.Finding rows of kind "rule_decay", so it stays out of the files the engine,
ui and alerts engineers change.
"""
