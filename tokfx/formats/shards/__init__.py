"""Tokenized output: where each document goes (`placement`), one shard's files (`writer`:
`parquet` and `megatron`), and the `manifest` written last."""
