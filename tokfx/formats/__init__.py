"""File formats: corpus readers (`readers/`: one per input format, the registry that picks them by
suffix, and the one error policy) and the `Document`s and `Rejection`s they yield (`documents`);
the rejected-records file (`rejected`); tokenizer files (`tokfx_json`, `gpt2`, `hf_json`,
sentencepiece's `.model` in `sentencepiece_model` over `protobuf_wire`, and as a tokenizer in
`sentencepiece_tokenizer`; its normalization rules are decoded by tokfx.normalizers.charsmap);
pre-token counts (`counts`); tokenized shards with their manifest (`shards/`)."""
