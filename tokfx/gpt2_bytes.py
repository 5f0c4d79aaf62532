"""GPT-2's printable spelling of bytes, used by its vocab.json/merges.txt and by Hugging Face's
ByteLevel pre-tokenizer: printable Latin-1 bytes stand for themselves, the other 68 bytes are
shifted to U+0100 and up so that no token contains whitespace or control characters."""
from functools import cache


@cache
def bytes_to_unicode() -> dict[int, str]:
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    shifted = (b for b in range(256) if b not in table)
    for offset, b in enumerate(shifted):
        table[b] = chr(256 + offset)
    return dict(sorted(table.items()))


@cache
def unicode_to_bytes() -> dict[str, int]:
    return {char: b for b, char in bytes_to_unicode().items()}
