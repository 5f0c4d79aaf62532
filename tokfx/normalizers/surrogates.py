"""Text that UTF-8 cannot encode: a Python str may hold lone surrogates (U+D800-U+DFFF, e.g.
from a JSON escape or a bad decode). Encoding and training treat them as tiktoken does: each
becomes U+FFFD and a valid surrogate pair its character, so any str can be encoded or trained on."""
from __future__ import annotations


def replace_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD and each valid surrogate pair joined
    into its character, as tiktoken does."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def utf8_encodable(text: str) -> str:
    """`text` itself when UTF-8 can encode it (the usual case, checked at encoding speed), else
    replace_lone_surrogates(text)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return replace_lone_surrogates(text)
    return text
