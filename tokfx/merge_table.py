"""A BPE vocabulary as the encode core takes it: merges as id triples, and the id of each byte
(or base symbol)."""
from tokfx.alphabet import BYTES, Alphabet



def merges_as_ids(vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]]) -> list[tuple[int, int, int]]:
    """(left id, right id, merged id) in rank order; every part and merged token must be in vocab."""
    ids = token_ids(vocab)
    triples = []
    for rank, (left, right) in enumerate(merges):
        missing = [token for token in (left, right, left + right) if token not in ids]
        if missing:
            raise ValueError(f"merge {rank} ({left!r}, {right!r}): {missing[0]!r} is not in the vocabulary")
        triples.append((ids[left], ids[right], ids[left + right]))
    return triples


def byte_ids(vocab: dict[int, bytes]) -> list[int]:
    """The id of each of the 256 single bytes (all must be in vocab)."""
    return base_symbol_ids(token_ids(vocab), BYTES)


def base_symbol_ids(ids: dict, alphabet: Alphabet) -> list[int]:
    """The id of each base symbol of the alphabet, from {token: id} (all must be there)."""
    missing = [s for s in range(alphabet.size) if alphabet.token([s]) not in ids]
    if missing:
        raise ValueError(f"the vocabulary lacks {len(missing)} base symbols of the {alphabet.name}"
                         f" alphabet, e.g. {alphabet.show([missing[0]])}")
    return [ids[alphabet.token([s])] for s in range(alphabet.size)]


def token_ids(vocab: dict[int, bytes]) -> dict[bytes, int]:
    """bytes -> id; when two ids share bytes (e.g. a special token spelled like text), the lower wins."""
    ids = {}
    for token_id in sorted(vocab):
        ids.setdefault(vocab[token_id], token_id)
    return ids
