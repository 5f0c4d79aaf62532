"""A tokenizer.json's BPE run as `tokenizers` runs it (src/models/bpe/model.rs, word.rs), for the
BPE shapes tokfx's own bpe segmenter cannot take: a `continuing_subword_prefix` or an
`end_of_word_suffix` (each character of a word looked up with "##" before it, or "</w>" after its
last; OpenAI GPT, CLIP, XLM), or an `unk_token` over characters with neither a ByteLevel
pre-tokenizer nor byte_fallback (what `tokenizers`' quick tour trains: BPE(unk_token="[UNK]")
behind Whitespace). Those spell a symbol by its place in the word, which tokfx's alphabets do not;
the byte-level and byte-fallback BPEs (every open model's) stay on the native segmenter.

Per pre-token, in Python, each result cached (a pre-token's ids depend on its text alone), as
tokfx.formats.huggingface_models' twins run the other models; no native core yet.
"""
from __future__ import annotations

from tokfx.formats.huggingface_models import Model, vocab_pieces
from tokfx.limits import MAX_TOKENS

_BYTE_TOKEN = "<0x{:02X}>"
_MAX_AFFIX_CHARS = 64
FIELDS = ("type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk",
          "byte_fallback", "ignore_merges", "vocab", "merges")


def runs_as_own_model(model: dict, byte_level: bool) -> bool:
    """Whether a tokenizer.json's BPE `model` needs this encoder (module docstring)."""
    return bool(model.get("continuing_subword_prefix") or model.get("end_of_word_suffix")
                or not (byte_level or model.get("byte_fallback")))


class BPEModel(Model):
    """BPE over a word's characters (`merge_word`): each character is its vocabulary entry (with
    the prefix when it is not the first, the suffix when it is the last); a character without
    one is its bytes' <0xXX> entries with byte_fallback when all are there (the prefix's and
    suffix's bytes included, as tokenizers spells them), else the unk token (one per run of
    them with fuse_unk), else dropped, as tokenizers drops it. Then the merges, lowest rank
    first, leftmost first among equal ones (word.rs's merge_all). With ignore_merges, a word
    that is an entry whole is that entry."""

    def __init__(self, spec: dict, byte_level: bool):
        super().__init__(byte_level)
        extra = sorted(set(spec) - set(FIELDS))
        if extra:
            raise ValueError(f"model.{extra[0]}: not a field of a BPE model that tokfx knows")
        self.spec = spec
        self.pieces = vocab_pieces(spec.get("vocab"))
        self._ids = {piece: i for i, piece in enumerate(self.pieces)}
        dropout = spec.get("dropout")
        if dropout not in (None, 0, 0.0):  # tokenizers runs a dropout of 0 as none
            raise ValueError(f"model.dropout: is {dropout!r}: tokfx reads BPE without dropout")
        self._prefix, self._suffix = (self._affix(spec, key) for key in ("continuing_subword_prefix",
                                                                            "end_of_word_suffix"))
        for key in ("byte_fallback", "ignore_merges", "fuse_unk"):
            if not isinstance(spec.get(key, False), bool):
                raise ValueError(f"model.{key}: expected true or false, got {spec[key]!r}")
        self._byte_fallback, self._ignore_merges, self._fuse_unknown = (
            spec.get(key, False) for key in ("byte_fallback", "ignore_merges", "fuse_unk"))
        unknown = spec.get("unk_token")
        if unknown is not None and not isinstance(unknown, str):
            raise ValueError(f"model.unk_token: expected null or a string, got {unknown!r}")
        self._unknown, self._unknown_id = unknown, self._ids.get(unknown)
        self._merges = self._read_merges(spec.get("merges", []))
        self._bytes = [self._ids.get(_BYTE_TOKEN.format(b)) for b in range(256)]

    @staticmethod
    def _affix(spec: dict, key: str) -> str:
        value = spec.get(key)
        if value is None:
            return ""
        if not isinstance(value, str) or len(value) > _MAX_AFFIX_CHARS:
            raise ValueError(f"model.{key}: expected null or a string of at most {_MAX_AFFIX_CHARS} characters")
        return value

    def _read_merges(self, value: object) -> dict[tuple[int, int], tuple[int, int]]:
        """{(left id, right id): (rank, merged id)}: the merged token is left + right without the
        prefix's bytes (model.rs builds it so); a pair listed twice keeps its last rank, as the
        map tokenizers collects them into does."""
        if not isinstance(value, list) or len(value) > MAX_TOKENS:
            raise ValueError(f"model.merges: expected an array of at most {MAX_TOKENS:,} merges")
        cut, merges = len(self._prefix.encode("utf-8")), {}
        for rank, item in enumerate(value):
            field = f"model.merges[{rank}]"
            parts = item.split(" ") if isinstance(item, str) else item
            if not (isinstance(parts, list) and len(parts) == 2 and all(isinstance(p, str) for p in parts)):
                raise ValueError(f"{field}: expected \"left right\" or [left, right], got {item!r}")
            left, right = parts
            try:  # tokenizers cuts the prefix's bytes off `right`, whatever they are
                if len(right.encode("utf-8")) < cut:
                    raise UnicodeDecodeError("utf-8", b"", 0, 0, "shorter than the prefix")
                merged = left + right.encode("utf-8")[cut:].decode("utf-8")
            except UnicodeDecodeError:  # where tokenizers panics or fails
                raise ValueError(f"{field}: cutting the continuing_subword_prefix's {cut} bytes off {right!r}"
                                 " leaves no text") from None
            for part in (left, right, merged):
                if part not in self._ids:
                    raise ValueError(f"{field}: {part!r} is not in the vocabulary")
            merges[self._ids[left], self._ids[right]] = (rank, self._ids[merged])
        return merges

    def encode_pieces(self, data: bytes, ends, as_array: bool = False, *_):
        # No native core: these shapes are rare (the open models' BPEs run natively).
        return self.encode_pieces_twin(data, ends, as_array)

    def tokenize(self, word: str) -> list[int]:
        ids = self._ids
        if self._ignore_merges and word in ids:
            return [ids[word]]
        symbols, unknown = [], False  # unknown: an unk token is pending (tokenizers adds it late)
        last = len(word) - 1
        for i, char in enumerate(word):
            text = (self._prefix if i else "") + char + (self._suffix if i == last else "")
            found = ids.get(text)
            if found is not None:
                if unknown:
                    symbols.append(self._unknown_id)
                    unknown = False
                symbols.append(found)
                continue
            if self._byte_fallback:
                fallback = [self._bytes[b] for b in text.encode("utf-8")]
                if None not in fallback:
                    # tokenizers adds these before a pending unk token, which follows them.
                    symbols.extend(fallback)
                    continue
            if self._unknown is not None:
                if self._unknown_id is None:
                    self._missing_unknown(f"{char!r} ({self._unknown!r} is not in its vocabulary)")
                if unknown and not self._fuse_unknown:
                    symbols.append(self._unknown_id)
                unknown = True
        if unknown:
            symbols.append(self._unknown_id)
        return self._merged(symbols)

    def _merged(self, symbols: list[int]) -> list[int]:
        merges = self._merges
        while len(symbols) > 1:
            best = None
            for pos in range(len(symbols) - 1):
                found = merges.get((symbols[pos], symbols[pos + 1]))
                if found is not None and (best is None or found[0] < best[0]):
                    best = (found[0], pos, found[1])
            if best is None:
                break
            _, pos, merged = best
            symbols[pos:pos + 2] = [merged]
        return symbols
