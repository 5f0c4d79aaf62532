"""Corpus readers, one module per input format: `jsonl` (.jsonl, .jsonl.gz, .jsonl.zst) and
`text` (.txt, documents separated by special tokens); `compression` streams the compressed
files."""
