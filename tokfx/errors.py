"""Errors that several layers raise: a tokenizer file's fault is found by the formats that read
it and by the normalizer that decodes a sentencepiece model's rules."""


class TokenizerFileError(ValueError):
    """A tokenizer file that cannot be loaded; its message is one line: `FILE: FIELD: what`."""

    def __init__(self, source: str, field: str | None, message: str):
        super().__init__(f"{source}: {field}: {message}" if field else f"{source}: {message}")
        self.source, self.field, self.message = source, field, message
