"""CareNav screener: which of 12 Washington programs an older adult or caregiver should look at.

Layers: intake/profile (0) -> rules + engine (1, no model) -> corpus retrieval (2) ->
explanation (3, model optional) -> deterministic assembly.
"""
