"""Pure-Python twin of tokfx._count_table's key hash, which `CountTable.split` sends keys to
parts by; the table's other operations have a dict for their twin (tests/counting)."""
MASK = (1 << 64) - 1


def key_hash(key: bytes) -> int:
    """Multiply-xorshift over little-endian 8-byte words, the tail one shorter word (and no
    xorshift after it), finished with MurmurHash3's fmix64."""
    h = len(key) * 0x9E3779B97F4A7C15 & MASK
    whole = len(key) - len(key) % 8
    for i in range(0, whole, 8):
        h = (h ^ int.from_bytes(key[i:i + 8], "little")) * 0xBF58476D1CE4E5B9 & MASK
        h ^= h >> 31
    if whole < len(key):
        h = (h ^ int.from_bytes(key[whole:], "little")) * 0xBF58476D1CE4E5B9 & MASK
    h ^= h >> 33
    h = h * 0xFF51AFD7ED558CCD & MASK
    h ^= h >> 33
    h = h * 0xC4CEB9FE1A85EC53 & MASK
    h ^= h >> 33
    return h
