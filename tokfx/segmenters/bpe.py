"""The `bpe` segmenter: a pre-token's base symbols merged pair by pair, lowest merge rank first
(core: tokfx._bpe_encode; twin: tokfx.reference.bpe_encode). Also the arithmetic of a BPE
vocabulary that trainers and files share: tokens made by merges, merges spelled as bytes or ids.
"""
from __future__ import annotations

from array import array
from collections.abc import Collection, Sequence

from tokfx._bpe_encode import BPEEncoder
from tokfx._bpe_encode import every_split_merges as split_merges_core
from tokfx.alphabet import BYTES, Alphabet


def merges_encoder(tokens: Sequence, merges: array, symbol_ids: Sequence[int],
                   alphabet: Alphabet, scaffold=None, special_ids: Collection[int] = (),
                   ignore_merges: int = 0, rank_by_id: int = 0, **_) -> BPEEncoder:
    """The encoder of merges (left id, right id, merged id) in rank order, flat in an
    array('i') as a Tokenizer holds them; with a Scaffold-BPE
    `scaffold` (tokfx.segmenters.scaffold_bpe.ScaffoldVocab), its expanded merges, then the
    demolition of its scaffold tokens. `ignore_merges`, `rank_by_id`: tokfx.segmenters."""
    if scaffold is not None:
        if ignore_merges or rank_by_id:
            raise ValueError("a Scaffold-BPE vocabulary takes neither ignore_merges nor rank_by_id")
        return scaffold.encoder()
    whole = whole_tokens(tokens, special_ids, alphabet) if ignore_merges else None
    return BPEEncoder(merges, symbol_ids, rank_by_id=bool(rank_by_id), whole_tokens=whole,
                      **alphabet.symbol_map)


def whole_tokens(tokens: Sequence, special_ids: Collection[int], alphabet: Alphabet) -> dict[bytes, int]:
    """{key: id} of the tokens of two or more symbols (not special or control) that a pre-token
    is emitted as whole, keyed as BPEEncoder's whole_tokens: bytes, or for another alphabet the
    symbols as int32 bytes; of two tokens with the same symbols the lower id."""
    whole = {}
    for token_id, token in enumerate(tokens):
        if len(token) > 1 and token_id not in special_ids:
            whole.setdefault(bytes(token) if alphabet.name == "bytes" else array("i", token).tobytes(), token_id)
    return whole


def token_bytes(merges: Sequence[tuple[int, int]], alphabet: Alphabet = BYTES) -> list:
    """Every token by id, as the alphabet holds tokens (bytes, or symbol tuples for cjk): the
    base symbols, then one per merge (left, right) in order."""
    vocab = [alphabet.token([s]) for s in range(alphabet.size)]
    for left, right in merges:
        vocab.append(vocab[left] + vocab[right])
    return vocab


def every_split_merges(tokens: Sequence, merged_in_order: Sequence[int],
                       max_merges: int | None = None) -> list[tuple[int, int, int]]:
    """sentencepiece's BPE encoding, as merges by rank: any two adjacent tokens whose
    concatenation is a token merge, the one that token was learned earliest (scored highest)
    first. So every split of a learned token into two tokens is a merge, ranked by the merged
    token's place in `merged_in_order`, its splits leftmost first. (Byte-level BPE merges only
    the pair it learned, which differs when a token's other split forms first.) A None token
    (special, control) is never a part; a ValueError past `max_merges`. Core:
    tokfx._bpe_encode.every_split_merges, in time linear in the tokens' lengths."""
    return split_merges_core(tokens, merged_in_order, max_merges)


def merges_as_bytes(merges: Sequence[tuple[int, int]]) -> list[tuple[bytes, bytes]]:
    """The merges spelled as (left bytes, right bytes), as GPT-2's merges.txt lists them."""
    vocab = token_bytes(merges)
    return [(vocab[left], vocab[right]) for left, right in merges]


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
