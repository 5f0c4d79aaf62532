"""Intrinsic evaluation (`tokfx eval`): the metrics, each a small function (`metrics`), the
report of several tokenizers over one corpus (`report`), and its figures (`plots`)."""
