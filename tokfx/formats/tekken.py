"""Mistral's tekken.json: a tiktoken vocabulary behind a block of special tokens, read as
mistral_common's Tekkenizer reads it (tokens/tokenizers/tekken.py):

- `special_tokens[i]` (rank i, `token_str`) holds id i, filled with `<SPECIAL_i>` up to
  `config.default_num_special_tokens`; a file of version v7 or older without the list has
  mistral_common's 20 deprecated ones (`<unk>`, `<s>`, `</s>`, `[INST]`, ...).
- `vocab[i]` (rank i, base64 `token_bytes`) is ordinary token i, id i + the number of special
  tokens, cut to `config.default_vocab_size` ids in all; the first 256 are the bytes in order.
- Text is pre-tokenized with `config.pattern` and encoded by tiktoken's rule (tiktoken_ranks);
  special-token text in a document stays text (tiktoken runs without special tokens), so the
  special tokens are tokfx control tokens: never encoded, decoded as nothing (mistral_common's
  default SpecialTokenPolicy.IGNORE).

The file is untrusted input (tokfx.formats.untrusted): every fault one TokenizerFileError naming
the file and the field.
"""
from __future__ import annotations

import binascii
import os
import re
from base64 import b64decode

from tokfx.formats.tiktoken_ranks import ranked_vocabulary
from tokfx.formats.untrusted import Fields, read_json_file, shown
from tokfx.limits import (MAX_PATTERN_CHARS, MAX_SPECIAL_TOKEN_BYTES, MAX_SPECIAL_TOKENS, MAX_TOKEN_SYMBOLS, MAX_TOKENS,
                          MAX_TOTAL_SYMBOLS)
from tokfx.pre_tokenizers import resolve_pattern
from tokfx.pre_tokenizers.patterns import pattern_for_regex
from tokfx.special_tokens import check_special_tokens

FILLER_NAME = "<SPECIAL_{id}>"  # mistral_common's Tekkenizer.SPECIAL_TOKEN_TEMPLATE
# mistral_common's Tekkenizer.DEPRECATED_SPECIAL_TOKENS, ranks 0..19, for files of v7 and older
# that list none.
DEPRECATED_SPECIAL_TOKENS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]",
    "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]")
BOS, EOS = "<s>", "</s>"
_VERSION = re.compile(r"v([0-9]{1,4})")


def read_tekken(path: str | os.PathLike, doc: object = None) -> dict:
    """{"tokens", "merges", "control_tokens", "pattern", "bos", "eos"}: the tokens by id, the
    merges and control tokens (the special tokens, fillers included) for the bpe segmenter with
    tiktoken_ranks.BYTE_PAIR_RULE, the pattern (a named one where the regex is one), and the
    texts of the begin- and end-of-sequence tokens (None where the file has none). `doc`: the
    file's JSON when already parsed (Tokenizer.load has it), else the file is read."""
    source = str(path)
    f = Fields(source)
    doc = f.object(read_json_file(path, source) if doc is None else doc, "", ("config", "vocab"), None)
    config = f.object(doc["config"], "config", ("pattern", "default_vocab_size", "default_num_special_tokens",
                                                "version"), None)
    version = f.str(config["version"], "config.version", 16)
    if not _VERSION.fullmatch(version):
        f.fail("config.version", f"expected v<number>, got {shown(version)}")
    pattern = pattern_for_regex(f.str(config["pattern"], "config.pattern", MAX_PATTERN_CHARS))
    try:
        resolve_pattern(pattern)
    except (TypeError, ValueError) as exc:
        f.fail("config.pattern", str(exc))
    specials = _special_tokens(f, doc.get("special_tokens"), int(version[1:]))
    count = f.int(config["default_num_special_tokens"], "config.default_num_special_tokens",
                  len(specials), MAX_SPECIAL_TOKENS)
    specials += [FILLER_NAME.format(id=i) for i in range(len(specials), count)]
    try:
        check_special_tokens(specials)
    except ValueError as exc:
        f.fail("special_tokens", str(exc))
    vocab = f.list(doc["vocab"], "vocab", MAX_TOKENS)
    size = f.int(config["default_vocab_size"], "config.default_vocab_size", count + 256,
                 min(count + len(vocab), MAX_TOKENS))
    by_id, rank_of, total = {}, {}, 0
    for rank in range(size - count):  # the entries past the cut are not read, as mistral_common's
        token = _token_bytes(f, vocab[rank], rank)
        if token in rank_of:
            f.fail(f"vocab[{rank}].token_bytes", f"the token of vocab[{rank_of[token]}] too")
        total += len(token)
        if total > MAX_TOTAL_SYMBOLS:
            f.fail("vocab", f"more than {MAX_TOTAL_SYMBOLS:,} bytes of tokens")
        by_id[count + rank], rank_of[token] = token, rank
    control = {name: i for i, name in enumerate(specials)}
    tokens, merges, _ = ranked_vocabulary(by_id, control, source)  # ids dense: nothing unused
    return {"tokens": tokens, "merges": merges, "control_tokens": control, "pattern": pattern,
            "bos": BOS if BOS in control else None, "eos": EOS if EOS in control else None}


def _special_tokens(f: Fields, value: object, version: int) -> list[str]:
    """The special tokens' texts by rank (rank i at index i, each named once)."""
    if value is None:
        if version > 7:
            f.fail("special_tokens", f"missing: a file of version v{version} (after v7) must list them")
        return list(DEPRECATED_SPECIAL_TOKENS)
    names = []
    for i, entry in enumerate(f.list(value, "special_tokens", MAX_SPECIAL_TOKENS)):
        field = f"special_tokens[{i}]"
        entry = f.object(entry, field, ("rank", "token_str", "is_control"))
        f.int(entry["rank"], f"{field}.rank", i, i)
        names.append(f.str(entry["token_str"], f"{field}.token_str", MAX_SPECIAL_TOKEN_BYTES))
        if not isinstance(entry["is_control"], bool):
            f.fail(f"{field}.is_control", f"expected true or false, got {shown(entry['is_control'])}")
        if names[-1] in names[:-1]:
            f.fail(f"{field}.token_str", f"{shown(names[-1])} is also special_tokens[{names.index(names[-1])}]'s")
    return names


def _token_bytes(f: Fields, entry: object, rank: int) -> bytes:
    """vocab[rank]'s bytes: rank `rank`, valid base64 of 1..MAX_TOKEN_SYMBOLS bytes, the byte
    `rank` itself for the first 256."""
    field = f"vocab[{rank}]"
    entry = f.object(entry, field, ("rank", "token_bytes", "token_str"), ())
    f.int(entry["rank"], f"{field}.rank", rank, rank)
    encoded = f.str(entry["token_bytes"], f"{field}.token_bytes", 2 * MAX_TOKEN_SYMBOLS)
    if entry["token_str"] is not None:
        f.str(entry["token_str"], f"{field}.token_str", 4 * MAX_TOKEN_SYMBOLS, nonempty=False)
    try:
        token = b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        f.fail(f"{field}.token_bytes", f"{shown(encoded)} is not base64")
    if not 1 <= len(token) <= MAX_TOKEN_SYMBOLS:
        f.fail(f"{field}.token_bytes", f"a token of {len(token):,} bytes: expected 1..{MAX_TOKEN_SYMBOLS:,}")
    if rank < 256 and token != bytes([rank]):
        f.fail(f"{field}.token_bytes", f"expected the byte {rank:#04x} (the first 256 tokens are the bytes)")
    return token
