"""The shape every component of a Hugging Face tokenizer.json has (a normalizer, a pre-tokenizer,
a decoder): an object with a "type", where a "Sequence" lists others under its own key. Read from
untrusted JSON, so a Sequence is bounded in length and depth."""
from __future__ import annotations

from collections.abc import Iterator

MAX_SEQUENCE = 64
MAX_DEPTH = 4


def components(spec: object, field: str, key: str, what: str, depth: int = 0) -> Iterator[tuple[dict, str]]:
    """(component, its field path) of `spec`, a Sequence's (its `key` array) flattened in order;
    a ValueError "FIELD: what is wrong" for a malformed one (`what`: the components' name)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise ValueError(f"{field}: expected an object with a \"type\"")
    if spec["type"] != "Sequence":
        yield spec, field
        return
    items = spec.get(key)
    if not isinstance(items, list) or len(items) > MAX_SEQUENCE or depth >= MAX_DEPTH:
        raise ValueError(f"{field}.{key}: expected an array of at most {MAX_SEQUENCE} {what},"
                         f" Sequences nested at most {MAX_DEPTH} deep")
    for i, item in enumerate(items):
        yield from components(item, f"{field}.{key}[{i}]", key, what, depth + 1)
