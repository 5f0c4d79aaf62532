"""tiktoken rank files (`cl100k_base.tiktoken`, `o200k_base.tiktoken`, Llama 3's original
`tokenizer.model`): one token a line, `base64(token bytes) rank`, the rank being the token's id.

A rank file holds no merges: tiktoken merges any two adjacent parts of a pre-token whose
concatenation is a token, the lowest rank first, the leftmost on a tie, one merge at a time,
and emits a pre-token that is itself a token whole. tokfx's bpe segmenter does exactly that with
every split of every token as a merge (`every_split_merges`) and the params `BYTE_PAIR_RULE`
(rank_by_id: the merged token's id is the rank; ignore_merges: the whole-piece shortcut), for
any rank file, trained or not (tests/formats/test_tiktoken_ranks.py against tiktoken).

The file is untrusted input (tokfx.formats.untrusted): read within tokfx.limits, every fault one
TokenizerFileError naming the file and line.
"""
from __future__ import annotations

import binascii
import os
import re
from base64 import b64decode, b64encode
from collections.abc import Mapping

from tokfx.formats.untrusted import TokenizerFileError, read_file_bytes, shown
from tokfx.limits import MAX_SPECIAL_TOKENS, MAX_TOKEN_SYMBOLS, MAX_TOKENS, MAX_TOTAL_SYMBOLS
from tokfx.pre_tokenizers import resolve_pattern
from tokfx.pre_tokenizers.patterns import pattern_for_regex
from tokfx.segmenters.bpe import every_split_merges
from tokfx.special_tokens import check_special_tokens

# The bpe segmenter's params that make it tiktoken's byte-pair rule (tokfx.segmenters).
BYTE_PAIR_RULE = {"ignore_merges": 1, "rank_by_id": 1}

_ENDOFTEXT, _ENDOFPROMPT = "<|endoftext|>", "<|endofprompt|>"
_FIM = {"<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260}
# The rank files of tiktoken's own encodings (tiktoken_ext/openai_public.py), known by the sha256
# tiktoken checks each download against: {sha256: (encoding, pattern, special tokens)}, so that
# Tokenizer.load takes the file alone and encodes as tiktoken.get_encoding(encoding) does.
# p50k_base and p50k_edit share a file: it loads as p50k_base. Checked against tiktoken's
# registry in tests/formats/test_tiktoken_ranks.py.
KNOWN_RANK_FILES = {
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": ("r50k_base", "gpt2", {_ENDOFTEXT: 50256}),
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069": ("p50k_base", "gpt2", {_ENDOFTEXT: 50256}),
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": (
        "cl100k_base", "cl100k", {_ENDOFTEXT: 100257, **_FIM, _ENDOFPROMPT: 100276}),
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": (
        "o200k_base", "o200k", {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018}),
}
# The control token that fills an id no token of the file and no special token holds (cl100k
# leaves 100256 and 100261..100275 unused): tokfx's ids are dense, tiktoken's need not be.
UNUSED_ID_NAME = "<|tokfx_unused_{id}|>"

_RANK = re.compile(rb"[0-9]{1,7}")  # MAX_TOKENS - 1 has 7 digits


def read_tiktoken_ranks(path: str | os.PathLike) -> dict[bytes, int]:
    """{token bytes: rank} of a rank file. Refused: a line that is not `base64 rank`, a token
    that is empty or longer than MAX_TOKEN_SYMBOLS bytes, a rank outside 0..MAX_TOKENS-1, a token
    or rank on two lines, more than MAX_TOKENS tokens or MAX_TOTAL_SYMBOLS bytes in all."""
    source = str(path)
    ranks: dict[bytes, int] = {}
    line_of_rank: dict[int, int] = {}
    total = 0
    # splitlines() and split(), as tiktoken.load reads it: \r\n ends a line, blank lines are skipped.
    for number, line in enumerate(read_file_bytes(path, source).splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"{source}:{number}"
        if len(fields) != 2:
            raise TokenizerFileError(where, None, f"expected `base64-token rank`, got {_shown_line(line)}")
        try:
            token = b64decode(fields[0], validate=True)
        except (binascii.Error, ValueError):
            raise TokenizerFileError(where, None, f"{_shown_line(fields[0])} is not base64") from None
        if not token or len(token) > MAX_TOKEN_SYMBOLS:
            raise TokenizerFileError(where, None, f"a token of {len(token):,} bytes: expected 1..{MAX_TOKEN_SYMBOLS:,}")
        if not _RANK.fullmatch(fields[1]) or int(fields[1]) >= MAX_TOKENS:
            raise TokenizerFileError(where, None, f"rank {_shown_line(fields[1])} is not an integer in"
                                                  f" 0..{MAX_TOKENS - 1:,}")
        rank = int(fields[1])
        if token in ranks:
            raise TokenizerFileError(where, None, f"token {token!r} is also line {line_of_rank[ranks[token]]}'s")
        if rank in line_of_rank:
            raise TokenizerFileError(where, None, f"rank {rank} is also line {line_of_rank[rank]}'s")
        total += len(token)
        if len(ranks) == MAX_TOKENS or total > MAX_TOTAL_SYMBOLS:
            raise TokenizerFileError(where, None, f"more than {MAX_TOKENS:,} tokens or"
                                                  f" {MAX_TOTAL_SYMBOLS:,} bytes of tokens")
        ranks[token] = rank
        line_of_rank[rank] = number
    return ranks


def write_tiktoken_ranks(path: str | os.PathLike, ranks: Mapping[bytes, int]) -> None:
    """A rank file as tiktoken.load.dump_tiktoken_bpe writes one: by rank, `base64 rank` a line."""
    with open(path, "wb") as f:
        f.writelines(b64encode(token) + b" %d\n" % rank for token, rank in sorted(ranks.items(), key=lambda tr: tr[1]))


def _shown_line(data: bytes) -> str:
    return shown(data.decode("utf-8", "replace"))


def tiktoken_tokenizer_args(path: str | os.PathLike, pattern: str,
                            special_tokens: Mapping[str, int] | None = None) -> dict:
    """The Tokenizer constructor's arguments for a rank file, with tiktoken's ids: token id =
    rank, each special token at its given id (as tiktoken.Encoding takes them), the ids no one
    holds filled with control tokens named UNUSED_ID_NAME (never encoded, decoded as nothing).
    A fault of the arguments is a ValueError or TypeError; of the file, a TokenizerFileError."""
    special = _checked_special_tokens(special_tokens)
    pattern = pattern_for_regex(pattern) if isinstance(pattern, str) else pattern
    resolve_pattern(pattern)
    source = str(path)
    ranks = read_tiktoken_ranks(path)
    taken = set(ranks.values()) & set(special.values())
    if taken:
        name = next(name for name, i in special.items() if i in taken)
        raise ValueError(f"special token {name!r}: id {special[name]} is a rank of {source}")
    tokens, merges, unused = ranked_vocabulary({rank: token for token, rank in ranks.items()}, special, source)
    return {"tokens": tokens, "merges": merges, "special_tokens": special, "pattern": pattern,
            "segmenter": "bpe", "segmenter_params": BYTE_PAIR_RULE, "control_tokens": unused}


def _checked_special_tokens(special_tokens: Mapping[str, int] | None) -> dict[str, int]:
    if special_tokens is None:
        return {}
    if not isinstance(special_tokens, Mapping):
        raise TypeError(f"special_tokens must be a mapping {{text: id}}, not {type(special_tokens).__name__}")
    check_special_tokens(list(special_tokens))
    for name, token_id in special_tokens.items():
        if type(token_id) is not int or not 0 <= token_id < MAX_TOKENS:
            raise ValueError(f"special token {name!r}: id {token_id!r} is not an int in 0..{MAX_TOKENS - 1:,}")
    if len(set(special_tokens.values())) != len(special_tokens):
        raise ValueError("two special tokens share an id")
    return dict(special_tokens)


def ranked_vocabulary(by_id: Mapping[int, bytes], named: Mapping[str, int],
                      source: str) -> tuple[list[bytes], list[tuple[int, int, int]], dict[str, int]]:
    """(tokens by id, merges, unused) of ranked tokens `by_id` (ids ascending with the rank) and
    named (special or control) tokens at their ids: the tokens over 0..the largest id, the merges
    every split of every ranked token (for BYTE_PAIR_RULE), `unused` the control tokens filling
    the ids neither holds. Every byte must be a token (tiktoken starts a pre-token from its
    bytes); a named token spelled as an unused id's name is refused."""
    missing = set(range(256)) - {token[0] for token in by_id.values() if len(token) == 1}
    if missing:
        raise TokenizerFileError(source, None, f"no token for byte {min(missing):#04x} (every byte needs one;"
                                               f" {len(missing)} missing)")
    size = max([*by_id, *named.values()]) + 1
    held = set(by_id) | set(named.values())
    if size - len(held) > MAX_SPECIAL_TOKENS:  # counted before any name is made
        raise TokenizerFileError(source, None, f"{size - len(held):,} ids below {size:,} hold no token: too"
                                               " many to fill with control tokens (tokfx.limits)")
    unused = {UNUSED_ID_NAME.format(id=i): i for i in range(size) if i not in held}
    try:
        check_special_tokens(unused)
    except ValueError:  # their names take more bytes than control tokens may (tokfx.limits)
        raise TokenizerFileError(source, None, f"{len(unused):,} ids below {size:,} hold no token: too many"
                                               " to fill with control tokens (tokfx.limits)") from None
    clash = set(unused) & set(named)
    if clash:
        raise ValueError(f"{min(clash)!r} is the name tokfx gives an unused id, and cannot name a token")
    names = {i: name for name, i in [*named.items(), *unused.items()]}
    tokens = [by_id[i] if i in by_id else names[i].encode("utf-8") for i in range(size)]
    parts = [by_id.get(i) for i in range(size)]  # None: never a part of a merge
    try:
        merges = every_split_merges(parts, sorted(i for i, t in by_id.items() if len(t) > 1), MAX_TOKENS)
    except ValueError as exc:
        raise TokenizerFileError(source, None, str(exc)) from None
    return tokens, merges, unused
