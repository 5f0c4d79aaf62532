"""Vocabulary construction, the second stage: the trainer interface (`base`), the trainers by
name (`registry`), one module or folder per algorithm (`bpe/`, `scaffold_bpe/`, `pathpiece`,
`sage/`, what the top-down ones share in `top_down`), and `tokfx.train` (`training`)."""
