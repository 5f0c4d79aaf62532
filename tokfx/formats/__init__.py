"""File formats: corpus readers (`readers/`) and the `Document`s they yield (`documents`);
tokenizer files (`tokfx_json`, `gpt2`, `hf_json`); pre-token counts (`counts`); tokenized
shards with their manifest (`shards/`)."""
