"""The `tokfx` command (`main`): one module per library command (`train`, `encode`, `inspect`,
`evaluate`), every flag declared once in `flags` (the Beam pipeline's options too)."""
