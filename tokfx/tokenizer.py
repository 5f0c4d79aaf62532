"""`Tokenizer`: pre-tokenizer -> BPE merges by rank -> ids, with special tokens by id."""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence

from tokfx._bpe_encode import BPEEncoder
from tokfx.merge_table import byte_ids, merges_as_ids
from tokfx.pretokenize import PreTokenizer

# encode_iterable keeps at most about this many characters pending when the input offers no
# safe cut (a newline between two non-space characters, or a special token).
_MAX_PENDING_CHARS = 1 << 20


class Tokenizer:
    """A byte-level BPE tokenizer.

    Ids: every id in `0..vocab_size-1` names one token; `tokens[i]` are its bytes (a special
    token's bytes are its UTF-8 text). `merges` are `(left_id, right_id, merged_id)` in rank
    order; encoding applies them lowest rank first within each pre-token.
    """

    def __init__(self, tokens: Sequence[bytes], merges: Sequence[tuple[int, int, int]],
                 special_tokens: Mapping[str, int] | None = None, pattern: str = "gpt2",
                 algorithm: str = "bpe", params: Mapping | None = None):
        self._tokens = [bytes(t) for t in tokens]
        self._merges = [tuple(m) for m in merges]
        self._special = dict(special_tokens or {})
        self.algorithm = algorithm
        self.params = dict(params or {})
        self.pretokenizer = PreTokenizer(pattern, list(self._special))
        self.pattern = pattern
        self._check()
        self._encoder = BPEEncoder(self._merges, byte_ids(self.vocab))
        self._ids_by_bytes: dict[bytes, int] = {}
        for i, token in enumerate(self._tokens):
            self._ids_by_bytes.setdefault(token, i)

    def _check(self) -> None:
        n = len(self._tokens)
        for name, i in self._special.items():
            if not 0 <= i < n or self._tokens[i] != name.encode("utf-8"):
                raise ValueError(f"special token {name!r}: id {i} does not hold its text")
        for rank, (left, right, merged) in enumerate(self._merges):
            if not (0 <= left < n and 0 <= right < n and 0 <= merged < n):
                raise ValueError(f"merge {rank} {(left, right, merged)}: id out of range 0..{n - 1}")
            if self._tokens[left] + self._tokens[right] != self._tokens[merged]:
                raise ValueError(f"merge {rank}: token {merged} is not token {left} + token {right}")

    # --- properties -----------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self._tokens)

    @property
    def vocab(self) -> dict[int, bytes]:
        return dict(enumerate(self._tokens))

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """Merges as byte-string pairs, in rank order."""
        return [(self._tokens[left], self._tokens[right]) for left, right, _ in self._merges]

    @property
    def merge_ids(self) -> list[tuple[int, int, int]]:
        return list(self._merges)

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._special)

    def token_to_id(self, token: bytes | str) -> int:
        """Id of a special token (by its text) or of a token (by its bytes); KeyError if none."""
        if isinstance(token, str):
            if token in self._special:
                return self._special[token]
            token = token.encode("utf-8")
        return self._ids_by_bytes[token]

    def id_to_token(self, token_id: int) -> bytes:
        if not 0 <= token_id < len(self._tokens):
            raise KeyError(f"token id {token_id} outside 0..{len(self._tokens) - 1}")
        return self._tokens[token_id]

    # --- encoding -------------------------------------------------------------------------
    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of `text` with special-token text treated as ordinary text."""
        data = text.encode("utf-8")
        return self._encoder.encode_pieces(data, self.pretokenizer.piece_ends(data))

    def encode(self, text: str) -> list[int]:
        """Ids of `text`; special tokens in it become their ids (the longest match first)."""
        ids: list[int] = []
        for chunk, special in self.pretokenizer.split_specials(text):
            if special:
                ids.append(self._special[chunk])
            else:
                ids += self.encode_ordinary(chunk)
        return ids

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        return [self.encode(text) for text in texts]

    def encode_iterable(self, texts: Iterable[str]) -> Iterator[int]:
        """Lazily, the ids of the concatenation of `texts` (e.g. the lines of a large file).

        Text is held back only up to the last point where cutting cannot change the result, so
        memory stays bounded however long the input.
        """
        pending = ""
        for text in texts:
            pending += text
            cut = self.pretokenizer.safe_cut(pending, force=len(pending) > _MAX_PENDING_CHARS)
            if cut:
                yield from self.encode(pending[:cut])
                pending = pending[cut:]
        if pending:
            yield from self.encode(pending)

    # --- decoding -------------------------------------------------------------------------
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        ids = list(ids)
        if ids and (min(ids) < 0 or max(ids) >= len(self._tokens)):
            bad = next(i for i in ids if not 0 <= i < len(self._tokens))
            raise ValueError(f"token id {bad} outside 0..{len(self._tokens) - 1}")
        return b"".join(map(self._tokens.__getitem__, ids))

    def decode(self, ids: Iterable[int]) -> str:
        """Text of `ids`; bytes that are not valid UTF-8 become U+FFFD."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    # --- files ----------------------------------------------------------------------------
    def save(self, directory: str | os.PathLike) -> None:
        """Write tokfx.json, and the GPT-2 and Hugging Face files where they can express it."""
        from tokfx.tokenizer_files import save_tokenizer
        save_tokenizer(self, directory)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Tokenizer":
        """Read a tokenizer directory (or its tokfx.json)."""
        from tokfx.tokenizer_files import load_tokenizer
        return load_tokenizer(path)

    @classmethod
    def from_gpt2_files(cls, vocab_json: str | os.PathLike, merges_txt: str | os.PathLike,
                        special_tokens: Sequence[str] = (), pattern: str = "gpt2") -> "Tokenizer":
        """A tokenizer from GPT-2 style vocab.json + merges.txt.

        A special token already in the vocabulary keeps its id; others are appended.
        """
        from tokfx.gpt2_files import read_gpt2_files
        vocab, byte_merges = read_gpt2_files(vocab_json, merges_txt)
        return cls.from_byte_merges(vocab, byte_merges, special_tokens, pattern)

    @classmethod
    def from_byte_merges(cls, vocab: Mapping[int, bytes], byte_merges: Sequence[tuple[bytes, bytes]],
                         special_tokens: Sequence[str] = (), pattern: str = "gpt2",
                         algorithm: str = "bpe") -> "Tokenizer":
        """A tokenizer from {id: bytes} and merges spelled as byte strings."""
        if sorted(vocab) != list(range(len(vocab))):
            raise ValueError("vocabulary ids must be 0..N-1 without gaps")
        tokens = [vocab[i] for i in range(len(vocab))]
        special = {}
        for name in special_tokens:
            text = name.encode("utf-8")
            if text in tokens:
                special[name] = tokens.index(text)
            else:
                special[name] = len(tokens)
                tokens.append(text)
        merges = merges_as_ids(dict(enumerate(tokens)), byte_merges)
        return cls(tokens, merges, special, pattern, algorithm)

    def __repr__(self) -> str:
        return (f"Tokenizer(algorithm={self.algorithm!r}, vocab_size={self.vocab_size}, "
                f"pattern={self.pattern!r}, special_tokens={list(self._special)})")
