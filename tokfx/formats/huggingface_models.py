"""The models of a tokenizer.json other than BPE, run as `tokenizers` runs them (src/models/):
`WordPiece`, `WordLevel` and `Unigram`, each an encoder (tokfx.segmenters: `encode_pieces(data,
ends)`) over the text of each pre-token: natively (tokfx._hf_models, over the bytes and ends
in one call), with these classes' `tokenize` as its pure-Python twin, which also runs where
the native core stops (a piece that needs an unknown token the model lacks: the twin says so).

Why their own encoders rather than tokfx's segmenters over symbols: `tokenizers` looks each
piece up in the model's whole vocabulary, the added tokens' entries in it included (a Unigram
matches the text "</s>" as its piece "</s>" when encode_special_tokens leaves it in the text;
its unk id is both that text's piece and the node of a character it lacks), and WordPiece
tells a word's first piece from its continuing ones by a prefix that is part of their text.
Each result is cached per pre-token (as `tokenizers` caches).

The JSON is untrusted (already parsed and bounded by tokfx.formats.untrusted); a fault is a
ValueError "model.FIELD: what", which the reader turns into a TokenizerFileError.
"""
from __future__ import annotations

from array import array

from tokfx._hf_models import UnigramCore, WordLevelCore, WordPieceCore
from tokfx.limits import MAX_TOKEN_SYMBOLS, MAX_TOKENS
from tokfx.pre_tokenizers.byte_level import spell, unspell

MODELS = ("WordPiece", "WordLevel", "Unigram")
_CACHE_LIMIT = 100_000  # pre-tokens remembered, then the cache starts over
_MAX_PREFIX_CHARS = 64


def huggingface_model(spec: object, byte_level: bool = False):
    """The encoder of a tokenizer.json's "model" (a WordPiece, WordLevel or Unigram object).
    `byte_level`: the pre-tokenizer ends in ByteLevel, so the model sees pieces spelled in
    GPT-2's byte alphabet."""
    if not isinstance(spec, dict) or spec.get("type") not in MODELS:
        raise ValueError(f"model.type: expected one of {', '.join(MODELS)}")
    kind = spec["type"]
    known = {"WordPiece": ("type", "vocab", "unk_token", "continuing_subword_prefix", "max_input_chars_per_word"),
             "WordLevel": ("type", "vocab", "unk_token"),
             "Unigram": ("type", "vocab", "unk_id", "byte_fallback")}[kind]
    extra = sorted(set(spec) - set(known))
    if extra:
        raise ValueError(f"model.{extra[0]}: not a field of a {kind} model that tokfx knows")
    if kind == "Unigram":
        return UnigramModel(spec, byte_level)
    pieces = vocab_pieces(spec.get("vocab"))
    unknown = spec.get("unk_token", "[UNK]" if kind == "WordPiece" else "<unk>")
    if not isinstance(unknown, str):
        raise ValueError(f"model.unk_token: expected a string, got {type(unknown).__name__}")
    if kind == "WordLevel":
        return WordPieceModel(spec, pieces, unknown, None, 0, byte_level)
    prefix = spec.get("continuing_subword_prefix", "##")
    if not isinstance(prefix, str) or len(prefix) > _MAX_PREFIX_CHARS:
        raise ValueError(f"model.continuing_subword_prefix: expected a string of at most {_MAX_PREFIX_CHARS}"
                         " characters")
    limit = spec.get("max_input_chars_per_word", 100)
    if type(limit) is not int or limit < 0:
        raise ValueError(f"model.max_input_chars_per_word: expected a non-negative integer, got {limit!r}")
    return WordPieceModel(spec, pieces, unknown, prefix, limit, byte_level)


def vocab_pieces(vocab: object) -> list[str]:
    """The pieces by id of a {piece: id} vocabulary whose ids are 0..N-1, each once."""
    if not isinstance(vocab, dict):
        raise ValueError("model.vocab: expected an object {token: id}")
    if len(vocab) > MAX_TOKENS:
        raise ValueError(f"model.vocab: {len(vocab):,} tokens: at most {MAX_TOKENS:,}")
    ids = list(vocab.values())
    if set(map(type, ids)) - {int} or sorted(ids) != list(range(len(ids))):
        raise ValueError("model.vocab: its ids must be the integers 0..N-1, each once")
    pieces = [""] * len(ids)
    for piece, i in vocab.items():
        _check_piece(piece, "model.vocab")
        pieces[i] = piece
    return pieces


def _check_piece(piece: str, field: str) -> None:
    if not piece:
        raise ValueError(f"{field}: an empty token")
    if len(piece) > MAX_TOKEN_SYMBOLS:
        raise ValueError(f"{field}: a token of {len(piece):,} characters: at most {MAX_TOKEN_SYMBOLS:,}")


class Model:
    """What the three share: the pieces by id (`pieces`, the vocabulary as `tokenizers` holds
    it), and encode_pieces over pre-tokens in the native core (`_core`, which each model makes),
    each one's ids cached."""

    pieces: list[str]
    _core: WordPieceCore | WordLevelCore | UnigramCore

    def __init__(self, byte_level: bool):
        self._byte_level = byte_level
        self._cache: dict[bytes, list[int]] = {}

    def _bytes_of(self, text: str) -> bytes | None:
        """What the core matches for a piece's text: its UTF-8, or after a ByteLevel the bytes it
        spells (None: a text with a character outside GPT-2's byte alphabet, which no spelled
        piece holds)."""
        if not self._byte_level:
            return text.encode("utf-8")
        try:
            return unspell(text)
        except KeyError:
            return None

    def encode_pieces(self, data: bytes, ends, as_array: bool = False, *_):
        ids = self._core.encode(data, ends, as_array)
        # None: a piece needs the unknown token, which the model lacks: the twin raises.
        return self.encode_pieces_twin(data, ends, as_array) if ids is None else ids

    def encode_pieces_twin(self, data: bytes, ends, as_array: bool = False):
        """encode_pieces in Python, a pre-token at a time through `tokenize`."""
        ids, start, cache = [], 0, self._cache
        for end in ends:
            raw = data[start:end]
            start = end
            found = cache.get(raw)
            if found is None:
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                text = spell(raw) if self._byte_level else raw.decode("utf-8")
                found = cache[raw] = self.tokenize(text)
            ids.extend(found)
        return array("i", ids) if as_array else ids

    def tokenize(self, text: str) -> list[int]:
        raise NotImplementedError

    def _missing_unknown(self, what: str):
        # tokenizers fails there too (MissingUnkToken / MissingUnkId): no id to give.
        raise ValueError(f"the tokenizer.json's model has no unknown token for {what}")


class WordPieceModel(Model):
    """WordPiece (src/models/wordpiece/mod.rs): a word longer than `limit` characters is the
    unknown token; else the longest vocabulary entry that starts it, then from where that one
    ended the longest that, with `prefix` before it, is an entry, and so on; a word with a rest
    that no entry starts is the unknown token, whole. `prefix` None is WordLevel
    (src/models/wordlevel/mod.rs): the word is an entry, or the unknown token."""

    def __init__(self, spec: dict, pieces: list[str], unknown: str, prefix: str | None, limit: int,
                 byte_level: bool):
        super().__init__(byte_level)
        self.spec, self.pieces, self._prefix, self._limit = spec, pieces, prefix, limit
        self._ids = {piece: i for i, piece in enumerate(pieces)}
        self._unknown_id = self._ids.get(unknown)
        self._unknown = unknown
        entries = [self._bytes_of(piece) for piece in pieces]
        core_unknown = -1 if self._unknown_id is None else self._unknown_id
        if prefix is None:
            self._core = WordLevelCore(entries, core_unknown, byte_level)
        else:
            # A limit past any piece's length limits nothing: one the core's int64 holds.
            self._core = WordPieceCore(entries, core_unknown, byte_level, self._bytes_of(prefix), min(limit, 2**62))

    def _unknown_token(self) -> list[int]:
        if self._unknown_id is None:
            self._missing_unknown(f"a word outside its vocabulary ({self._unknown!r} is not in it)")
        return [self._unknown_id]

    def tokenize(self, word: str) -> list[int]:
        ids = self._ids
        if self._prefix is None:
            found = ids.get(word)
            return self._unknown_token() if found is None else [found]
        if len(word) > self._limit:
            return self._unknown_token()
        out, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                found = ids.get(word[start:end] if start == 0 else self._prefix + word[start:end])
                if found is not None:
                    out.append(found)
                    start = end
                    break
            else:
                return self._unknown_token()
        return out


class UnigramModel(Model):
    """Unigram (src/models/unigram/model.rs, encode_optimized): the Viterbi path of highest
    score, summed in float64, over every entry that the pre-token holds (ties to the path found
    first: the longest last piece); a character that starts no one-character entry is a node
    of the unk id scoring min score - 10 (K_UNK_PENALTY). On the path, runs of nodes with the
    unk id (its own entry's text included) are fused into one text (fuse_unk is always on);
    each text is then looked up again: an entry's id, else with byte_fallback its bytes'
    <0xXX> entries (when all are there), else the unk id."""

    def __init__(self, spec: dict, byte_level: bool):
        super().__init__(byte_level)
        self.spec = spec
        vocab = spec.get("vocab")
        if not isinstance(vocab, list) or len(vocab) > MAX_TOKENS:
            raise ValueError(f"model.vocab: expected an array of at most {MAX_TOKENS:,} [piece, score]")
        self.pieces, self._scores, self._ids = [], [], {}
        for i, entry in enumerate(vocab):
            field = f"model.vocab[{i}]"
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                    and type(entry[1]) in (int, float) and entry[1] == entry[1] and abs(entry[1]) != float("inf")):
                raise ValueError(f"{field}: expected [piece, finite score]")
            piece = entry[0]
            _check_piece(piece, field)
            if piece in self._ids:
                raise ValueError(f"{field}: {piece!r} is listed twice")
            self._ids[piece] = i
            self.pieces.append(piece)
            self._scores.append(float(entry[1]))
        unknown = spec.get("unk_id")
        if unknown is not None and (type(unknown) is not int or not 0 <= unknown < len(self.pieces)):
            raise ValueError(f"model.unk_id: expected null or an id in 0..{len(self.pieces) - 1}, got {unknown!r}")
        self._unknown_id = unknown
        self._byte_fallback = spec.get("byte_fallback", False)
        if not isinstance(self._byte_fallback, bool):
            raise ValueError("model.byte_fallback: expected true or false")
        self._unknown_score = min(self._scores, default=float("inf")) - 10.0
        # Every prefix of an entry: the lattice stops looking further from a start where the
        # text so far begins no entry (the trie's common prefix search does the same).
        self._prefixes = {p[:k] for p in self.pieces for k in range(1, len(p) + 1)}
        self._bytes = [self._ids.get(f"<0x{b:02X}>") for b in range(256)]
        self._core = UnigramCore([self._bytes_of(piece) for piece in self.pieces],
                                 -1 if unknown is None else unknown, byte_level, self._scores, self._unknown_score,
                                 [self._fallback_ids(b) for b in range(256)] if self._byte_fallback else None)

    def _fallback_ids(self, byte: int) -> list[int] | None:
        """The <0xXX> ids a byte of a piece falls back to (those of the UTF-8 bytes of its
        spelling after a ByteLevel: the model sees the spelled text), or None if one is missing."""
        ids = [self._bytes[b] for b in (spell(bytes([byte])).encode("utf-8") if self._byte_level else [byte])]
        return None if None in ids else ids

    def tokenize(self, text: str) -> list[int]:
        n, ids, scores, prefixes = len(text), self._ids, self._scores, self._prefixes
        best = [0.0] * (n + 1)
        begins = [-1] * (n + 1)  # where the best path's last node begins; -1: none yet
        node_ids = [0] * (n + 1)
        for start in range(n):
            reached, single = best[start], False
            for end in range(start + 1, n + 1):
                piece = text[start:end]
                if piece not in prefixes:
                    break
                found = ids.get(piece)
                if found is None:
                    continue
                single = single or end == start + 1
                score = scores[found] + reached
                if begins[end] < 0 or score > best[end]:
                    best[end], begins[end], node_ids[end] = score, start, found
            if not single:
                if self._unknown_id is None:
                    self._missing_unknown(f"{text[start]!r} (its unk_id is null)")
                score = self._unknown_score + reached
                if begins[start + 1] < 0 or score > best[start + 1]:
                    best[start + 1], begins[start + 1], node_ids[start + 1] = score, start, self._unknown_id
        texts, fused, end = [], [], n
        while end > 0:
            start = begins[end]
            if node_ids[end] == self._unknown_id:
                fused.append(text[start:end])
            else:
                if fused:
                    texts.append("".join(reversed(fused)))
                    fused = []
                texts.append(text[start:end])
            end = start
        if fused:
            texts.append("".join(reversed(fused)))
        out = []
        for piece in reversed(texts):
            found = ids.get(piece)
            if found is None:
                fallback = [self._bytes[b] for b in piece.encode("utf-8")] if self._byte_fallback else [None]
                if None in fallback:
                    if self._unknown_id is None:
                        self._missing_unknown(repr(piece))
                    fallback = [self._unknown_id]
                out.extend(fallback)
            else:
                out.append(found)
        return out
