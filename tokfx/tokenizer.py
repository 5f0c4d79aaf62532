"""`Tokenizer`: pre-tokenizer -> segmenter (BPE merges by rank, or one that runs over any
vocabulary: tokfx.segmenters) -> ids, with special tokens by id; saved to and loaded from a
directory (tokfx.formats.tokfx_json)."""
from __future__ import annotations

import json
import math
import os
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cached_property, partial
from itertools import accumulate
from typing import TYPE_CHECKING

from tokfx.alphabet import BYTES, Alphabet
from tokfx.formats.gpt2 import read_gpt2_files
from tokfx.formats.hf_json import read_hf_unigram
from tokfx.formats.huggingface import HuggingFaceText, huggingface_tokenizer_args, spelled_pieces, tokenizer_args_of
from tokfx.formats.tokenizer_files import find_tokenizer_file
from tokfx.formats.sentencepiece_model import read_sentencepiece_model
from tokfx.formats.sentencepiece_tokenizer import tokenizer_args as sentencepiece_tokenizer_args
from tokfx.formats.tekken import read_tekken
from tokfx.formats.tiktoken_ranks import BYTE_PAIR_RULE, tiktoken_tokenizer_args
from tokfx.formats.tokfx_json import ALGORITHMS, save_tokenizer, tokenizer_from_dict, tokenizer_to_dict
from tokfx.formats.untrusted import TokenizerFileError
from tokfx.limits import MAX_TOKEN_SYMBOLS, MAX_TOKENS, MAX_TOTAL_SYMBOLS
from tokfx.pre_tokenizers import PreTokenizer, resolve_pattern
from tokfx.normalizers.surrogates import replace_lone_surrogates, utf8_encodable
from tokfx.segmenters import full_segmenter_params, get_segmenter
from tokfx.segmenters.bpe import base_symbol_ids, merges_as_ids
from tokfx.special_tokens import Framing, check_special_tokens

if TYPE_CHECKING:
    from tokfx.segmenters.scaffold_bpe import ScaffoldVocab

# encode_iterable keeps at most about this many characters pending when the input offers no
# safe cut (a newline between two non-space characters, or a special token).
_MAX_PENDING_CHARS = 1 << 20


def _is_high_surrogate(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


class Tokenizer:
    """A tokenizer over an alphabet of base symbols (`tokfx.alphabet`: bytes, cjk, chars,
    chars-cjk), with an optional normalizer (`tokfx.normalizers`; the sentencepiece pattern
    implies one) and optional control tokens (never encoded, decoded as nothing).

    Ids: every id in `0..vocab_size-1` names one token, a sequence of base symbols: bytes for
    the byte alphabet, a tuple of symbol ids for cjk (whose bytes come from decoding). A
    special token holds the symbols of its UTF-8 text. `merges` are `(left_id, right_id,
    merged_id)` in rank order. Encoding maps each pre-token to base symbols, then segments them
    with `segmenter`: "bpe" applies the merges lowest rank first; "pathpiece-l", "pathpiece-r"
    and "greedy" (tokfx.segmenters, with `segmenter_params`) use the tokens alone, so a
    vocabulary without merges (PathPiece) needs one of them.

    With `scaffold` (Scaffold-BPE), the "bpe" segmenter applies the scaffold vocabulary's
    expanded merges and demolishes its scaffold tokens instead; `tokens` are its normal tokens
    then the special tokens, and `merges` those of its merges expressible in these ids
    (`ScaffoldVocab.normal_merges`).
    """

    def __init__(self, tokens: Sequence[bytes | Sequence[int]], merges: Sequence[tuple[int, int, int]],
                 special_tokens: Mapping[str, int] | None = None, pattern: str = "gpt2",
                 algorithm: str = "bpe", params: Mapping | None = None, alphabet: Alphabet = BYTES,
                 segmenter: str = "bpe", segmenter_params: Mapping | None = None,
                 scaffold: ScaffoldVocab | None = None, scores: Sequence[float | None] | None = None,
                 normalizer=None, control_tokens: Mapping[str, int] | None = None,
                 pipeline: HuggingFaceText | None = None, framing: Framing | None = None,
                 _held: bool = False):
        if special_tokens is not None and not isinstance(special_tokens, Mapping):
            raise TypeError("special_tokens must be a mapping {text: id}, not"
                            f" {type(special_tokens).__name__} (tokfx.train takes a list)")
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {algorithm!r}; known: {', '.join(sorted(ALGORITHMS))}")
        if len(tokens) > MAX_TOKENS:
            raise ValueError(f"{len(tokens):,} tokens: at most {MAX_TOKENS:,} (tokfx.limits)")
        self.alphabet = alphabet
        # _held: the tokens and merges as a Tokenizer holds them, from one (a pickle: __reduce__),
        # checked then.
        self._tokens = list(tokens) if _held else [alphabet.token(t) for t in tokens]
        if not _held:
            merges = [tuple(m) for m in merges]
        self._special = dict(special_tokens or {})
        self._control = dict(control_tokens or {})
        self.algorithm = algorithm
        self.params = dict(params or {})
        # A Hugging Face tokenizer's text stages (added tokens, normalizer, pre-tokenizer,
        # decoder: tokfx.formats.huggingface) stand in for the pattern and normalizer.
        self.pipeline = pipeline
        if pipeline is None:
            self.pretokenizer = PreTokenizer(pattern, list(self._special), normalizer)
            self.pattern = pattern
        else:
            if normalizer is not None or {t.content for t in pipeline.added.tokens} != set(self._special):
                raise ValueError("a Hugging Face pipeline brings its own normalizer, and its added tokens"
                                 " are the special tokens")
            self.pretokenizer = pipeline
            self.pattern = pipeline.description
        self.framing = framing or Framing()
        for name in (self.framing.bos, self.framing.eos):
            if name is not None and name not in self._special and name not in self._control:
                raise ValueError(f"framing: {name!r} is not a special or control token")
        # Where a tokenizer file was loaded from (Tokenizer.load): {"file", "format", "sha256"}.
        self.source: dict | None = None
        self.segmenter = segmenter
        self.segmenter_params = full_segmenter_params(segmenter, segmenter_params)
        self.scores = None if scores is None else [None if s is None else float(s) for s in scores]
        self._carries_score = segmenter == "likelihood" and self.segmenter_params.get("float_bits") == 32
        if not _held:
            self._check(merges)
        # The merges as one flat array('i'), three ids each: a tuple of three ints per merge was
        # 7 MB of a pipeline worker's GPT-2 tokenizer (bench/README.md, per-worker cost).
        self._merge_ids = merges if _held else array("i", [i for merge in merges for i in merge])
        self.scaffold = scaffold
        if scaffold is not None:
            if scaffold.alphabet != alphabet or self.merge_ids != scaffold.normal_merges:
                raise ValueError("scaffold: its alphabet or normal merges differ from the tokenizer's")
            scaffold.check_model(self._tokens, self._special.values())
        if pipeline is not None:
            pipeline.fit(self)
        takes = get_segmenter(segmenter)
        self._encoder = takes.build(
            tokens=self._tokens, merges=self._merge_ids,
            symbol_ids=base_symbol_ids(self._ids_of(max_symbols=1), alphabet) if takes.needs_base_symbols else None,
            special_ids=set(self._special.values()) | set(self._control.values()), alphabet=alphabet,
            scaffold=scaffold, scores=self.scores, pipeline=pipeline, **self.segmenter_params)

    def with_segmenter(self, segmenter: str, **params) -> "Tokenizer":
        """The same vocabulary segmented another way (params: tokfx.segmenters; `max_width` and
        `seed` are kept from the current segmenter unless given, where both take them)."""
        takes = get_segmenter(segmenter)
        if takes.needs_merges and not self._merge_ids and self.vocab_size > self.alphabet.size + len(self._special):
            raise ValueError(f"segmenter {segmenter!r} needs merges, and this vocabulary has none: use"
                             " pathpiece-l, pathpiece-r or greedy")
        if takes.needs_scores and self.scores is None:
            raise ValueError(f"segmenter {segmenter!r} needs a log probability per token (a unigram"
                             " vocabulary), and this vocabulary has none")
        for name in ("max_width", "seed"):
            if name in self.segmenter_params and name in takes.defaults:
                params = {name: self.segmenter_params[name], **params}
        return Tokenizer(self._tokens, self.merge_ids, self._special, self.pattern, self.algorithm,
                         self.params, self.alphabet, segmenter, params, self.scaffold, self.scores,
                         None if self.pipeline else self.normalizer, self._control, self.pipeline,
                         self.framing)

    def _ids_of(self, max_symbols: int | None = None) -> dict:
        """{token: id} (of the tokens of at most `max_symbols` symbols); where tokens share
        symbols, an ordinary token's id wins over a special or control token's, then the lower id."""
        reserved = set(self._special.values()) | set(self._control.values())
        ids: dict = {}
        for i in [i for i in range(len(self._tokens)) if i not in reserved] + sorted(reserved):
            if max_symbols is None or len(self._tokens[i]) <= max_symbols:
                ids.setdefault(self._tokens[i], i)
        return ids

    @cached_property
    def _ids_by_token(self) -> dict:
        """{token: id} of every token (_ids_of), built on the first token_to_id: encoding needs
        only the base symbols' ids, and the map was 4 MB of a worker's GPT-2 tokenizer."""
        return self._ids_of()

    @cached_property
    def _packed(self) -> list[bytes]:
        """Each cjk token's symbols as int32 bytes: decoding joins them in C, not symbol by
        symbol. Built on the first decode, so training does not pay for it."""
        return [array("i", t).tobytes() for t in self._tokens]

    def _check(self, merges: list[tuple]) -> None:
        """What every tokenizer holds, so that whatever is built can be saved and loaded again:
        the ids of special tokens and merges in range, sizes within tokfx.limits."""
        n = len(self._tokens)
        if self.scores is not None:
            reserved = set(self._special.values()) | set(self._control.values())
            if len(self.scores) != n or any((s is None) != (i in reserved) or (s is not None and not math.isfinite(s))
                                            for i, s in enumerate(self.scores)):
                raise ValueError("scores: one finite log probability per token, None at special- and"
                                 " control-token ids")
        lengths = list(map(len, self._tokens))
        if lengths and max(lengths) > MAX_TOKEN_SYMBOLS or sum(lengths) > MAX_TOTAL_SYMBOLS:
            raise ValueError(f"tokens longer than {MAX_TOKEN_SYMBOLS:,} symbols, or {MAX_TOTAL_SYMBOLS:,}"
                             " in all (tokfx.limits)")
        for kind, named in (("special", self._special), ("control", self._control)):
            for name, i in named.items():
                if type(i) is not int or not 0 <= i < n or self._tokens[i] != self.alphabet.token_of_text(name):
                    raise ValueError(f"{kind} token {name!r}: id {i!r} does not hold its text")
        if set(self._special) & set(self._control) or set(self._special.values()) & set(self._control.values()):
            raise ValueError("a token is both special and control")
        if self.alphabet.name != "bytes":
            # With no token empty, a merged token is its two shorter parts joined (checked
            # below), so checking the symbols of the others checks every token.
            merged_ids = {m for _, _, m in merges}
            size = self.alphabet.size
            for i, token in enumerate(self._tokens):
                if not token or (i not in merged_ids and not 0 <= min(token) <= max(token) < size):
                    raise ValueError(f"token {i} is empty or has a symbol outside the alphabet 0..{size - 1}")
        ids = [i for merge in merges for i in merge]
        # One pass over all ids at once (a trained 32K vocabulary pays 0.02 s, not 0.06 s);
        # only when it fails is the first bad merge looked for.
        if any(len(merge) != 3 for merge in merges) or not set(map(type, ids)) <= {int} \
                or (ids and not 0 <= min(ids) <= max(ids) < n):
            rank, merge = next((r, m) for r, m in enumerate(merges) if len(m) != 3
                               or set(map(type, m)) != {int} or not all(0 <= i < n for i in m))
            raise ValueError(f"merges[{rank}] {merge}: expected three ids in 0..{n - 1}")
        tokens = self._tokens
        for rank, (left, right, merged) in enumerate(merges):
            if tokens[left] + tokens[right] != tokens[merged]:
                raise ValueError(f"merges[{rank}]: token {merged} is not token {left} + token {right}")

    # --- properties -----------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self._tokens)

    @property
    def vocab(self) -> dict[int, bytes]:
        """{id: bytes}; only the byte alphabet has bytes per token."""
        self._require_bytes("a vocabulary of bytes")
        return dict(enumerate(self._tokens))

    @property
    def tokens(self) -> list[tuple[int, ...]]:
        """Every token's base symbols, by id (any alphabet)."""
        return [tuple(t) for t in self._tokens]

    def show_token(self, token_id: int) -> str:
        """A token's printable form, e.g. 'the' or, with cjk, P39 5E 97."""
        return self.alphabet.show(self.id_to_token(token_id))

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """Merges as pairs of tokens (byte strings, or symbol tuples for cjk), in rank order."""
        return [(self._tokens[left], self._tokens[right]) for left, right, _ in self.merge_ids]

    def _require_bytes(self, what: str) -> None:
        if self.alphabet.name != "bytes":
            raise ValueError(f"{what} needs the bytes alphabet; this tokenizer's tokens are"
                             f" {self.alphabet.name} base-symbol sequences, whose bytes depend on"
                             " the prefix symbols before them")

    @property
    def merge_ids(self) -> list[tuple[int, int, int]]:
        """Merges as (left id, right id, merged id), in rank order."""
        merges = self._merge_ids
        return list(zip(merges[0::3], merges[1::3], merges[2::3]))

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._special)

    @property
    def control_tokens(self) -> dict[str, int]:
        """Tokens that encoding never produces and decoding writes as nothing (sentencepiece's
        control symbols such as <s>, and its unknown token)."""
        return dict(self._control)

    @property
    def normalizer(self):
        """What the text is normalized with before special tokens and pre-tokens are found
        (tokfx.normalizers), or None."""
        return self.pretokenizer.normalizer

    @property
    def bos_id(self) -> int | None:
        """The id of the model's beginning-of-sequence token (framing), or None."""
        return self._reserved_id(self.framing.bos)

    @property
    def eos_id(self) -> int | None:
        """The id of the model's end-of-sequence token (framing), or None."""
        return self._reserved_id(self.framing.eos)

    def _reserved_id(self, name: str | None) -> int | None:
        return None if name is None else self._special.get(name, self._control.get(name))

    def token_to_id(self, token: bytes | str | tuple[int, ...]) -> int:
        """Id of a special token (by its text) or of a token (by its bytes, or its symbol tuple
        for cjk; text stands for its symbols as one pre-token); KeyError if none."""
        if isinstance(token, str):
            if token in self._special:
                return self._special[token]
            token = self.alphabet.token_of_text(token)
        return self._ids_by_token[token]

    def id_to_token(self, token_id: int) -> bytes | tuple[int, ...]:
        if not 0 <= token_id < len(self._tokens):
            raise KeyError(f"token id {token_id} outside 0..{len(self._tokens) - 1}")
        return self._tokens[token_id]

    # --- encoding -------------------------------------------------------------------------
    # Every encode method takes any str: a lone surrogate (which UTF-8 cannot encode) becomes
    # U+FFFD and a surrogate pair its character, as in tiktoken (replace_lone_surrogates). Only a
    # text that fails to encode pays for the replacement.
    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of `text` with special-token text treated as ordinary text."""
        _check_text(text)
        if self.pipeline is not None:  # its non-special added tokens are cut out all the same
            return self.encode_to_array(text, ordinary=True).tolist()
        try:
            return self._segment(self.pretokenizer.normalized_utf8(text))
        except UnicodeEncodeError:
            return self._segment(self.pretokenizer.normalized_utf8(replace_lone_surrogates(text)))

    def _segment(self, data: bytes, as_array: bool = False,
                 score_from: float | None = None) -> list[int] | array:
        """Ids of a normalized chunk without special tokens, in UTF-8; `score_from`: a float32
        Unigram's running path score before it (_encode_chunks)."""
        if score_from is None:
            return self._encoder.encode_pieces(data, self.pretokenizer.piece_ends(data), as_array)
        return self._encoder.encode_pieces(data, self.pretokenizer.piece_ends(data), as_array, score_from)

    def encode(self, text: str) -> list[int]:
        """Ids of `text`; special tokens in it become their ids (the longest match first)."""
        _check_text(text)
        try:
            return self._encode(text)
        except UnicodeEncodeError:
            # Replaced before the special tokens are found, as tiktoken does (a special token
            # holding U+FFFD then matches where a lone surrogate stood).
            return self._encode(replace_lone_surrogates(text))

    def _encode(self, text: str) -> list[int]:
        return self._encode_chunks(text, [], False)

    def _encode_chunks(self, text: str, ids, as_array: bool, ordinary: bool = False):
        """`ids` (a new list, or array with `as_array`) extended by the ids of `text`'s chunks,
        or while it is empty replaced by a chunk's own ids: a text without special tokens (most)
        then returns the core's result as it is, with no copy (about one id per byte in
        Chinese with byte fallback). A float32 Unigram (the sentencepiece family) carries its
        running path score through the chunks and the special tokens between them, as
        sentencepiece's Viterbi runs over the whole text: the float32 rounding of that sum
        decides between permutations of the same tokens."""
        if self.pipeline is not None:
            for special, data, ends in self.pipeline.segments(text, ordinary):
                if special is not None:
                    ids.append(self._special[special])
                else:
                    ids.extend(self._encoder.encode_pieces(data, ends, as_array))
            return ids
        running = 0.0 if self._carries_score else None
        for chunk, special in self.pretokenizer.utf8_chunks(text):
            if special:
                ids.append(self._special[chunk])
                if running is not None:
                    running = self._encoder.after_special(running, len(chunk.encode("utf-8")))
            else:
                found = self._segment(chunk, as_array, running)
                if ids:
                    ids.extend(found)
                else:
                    ids = found
                if running is not None:
                    running = self._encoder.last_score
        return ids

    def encode_to_array(self, text: str, ordinary: bool = False) -> array:
        """`encode(text)`, or with `ordinary` `encode_ordinary(text)`, as an array('i'): the
        core's ids copied once, with no Python int per id (what writing shards wants)."""
        _check_text(text)
        try:
            return self._encode_array(text, ordinary)
        except UnicodeEncodeError:
            return self._encode_array(replace_lone_surrogates(text), ordinary)

    def _encode_array(self, text: str, ordinary: bool) -> array:
        if ordinary and self.pipeline is None:
            return self._segment(self.pretokenizer.normalized_utf8(text), True)
        return self._encode_chunks(text, array("i"), True, ordinary)

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        return [self.encode(text) for text in texts]

    def encode_iterable(self, texts: Iterable[str]) -> Iterator[int]:
        """Lazily, the ids of the concatenation of `texts` (e.g. the lines of a large file).

        Text is held back only up to the last point where cutting cannot change the result, so
        memory stays bounded however long the input. Not for a tokenizer with a normalizer
        (sentencepiece's adds a space in front of the whole text and may fold whitespace).
        """
        if self.normalizer is not None or self.pipeline is not None:
            raise ValueError("encode_iterable needs a tokenizer without a normalizer: encode each"
                             " document with encode()")
        pending = held = ""
        for text in texts:
            _check_text(text)
            # A high surrogate ending one text may pair with a low one starting the next: held
            # back until then, so that the pieces are those of the whole concatenation.
            text = held + text
            held = text[-1] if text and _is_high_surrogate(text[-1]) else ""
            pending += utf8_encodable(text[:len(text) - len(held)])
            cut = self.pretokenizer.safe_cut(pending, force=len(pending) > _MAX_PENDING_CHARS)
            if cut:
                yield from self.encode(pending[:cut])
                pending = pending[cut:]
        pending += replace_lone_surrogates(held)
        if pending:
            yield from self.encode(pending)

    # --- decoding -------------------------------------------------------------------------
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The tokens' bytes joined (byte alphabet only: cjk tokens decode with decode())."""
        self._require_bytes("decode_bytes")
        return b"".join(map(self._tokens.__getitem__, self._checked(ids)))

    def _checked(self, ids: Iterable[int]) -> list[int]:
        """`ids` as a list of ints in range (integers of numpy and others taken by __index__;
        a bool, a float or a str refused)."""
        if isinstance(ids, (str, bytes)):
            raise TypeError(f"ids must be a sequence of ints, not {type(ids).__name__}")
        ids = list(ids)
        kinds = set(map(type, ids))
        if kinds - {int}:
            for position, i in enumerate(ids):
                if isinstance(i, bool) or not hasattr(type(i), "__index__"):
                    raise TypeError(f"ids[{position}] is {i!r} ({type(i).__name__}), not an int")
            ids = [int(i) for i in ids]
        if ids and (min(ids) < 0 or max(ids) >= len(self._tokens)):
            position, bad = next((p, i) for p, i in enumerate(ids) if not 0 <= i < len(self._tokens))
            raise ValueError(f"ids[{position}]: token id {bad} outside 0..{len(self._tokens) - 1}")
        return ids

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Text of `ids`. Decode errors (invalid UTF-8; with cjk also an h2 without its h3, an
        h3 without its h2, an h2 before any prefix) become U+FFFD; with errors="strict" the first
        raises tokfx.alphabet.DecodeError whose `position` is the index in `ids` of the token
        holding the offending symbol."""
        return self._decode(ids, errors)[0]

    def decode_errors(self, ids: Iterable[int]) -> int:
        """How many U+FFFD decode(ids) writes for decode errors."""
        return self._decode(ids, "replace")[1]

    @cached_property
    def _spelled(self) -> list[str]:
        """Every token as the Hugging Face decoder reads it (built on the first decode)."""
        return spelled_pieces(self)

    def _decode(self, ids: Iterable[int], errors: str) -> tuple[str, int]:
        ids = self._checked(ids)
        if self.pipeline is not None:
            if errors != "replace":
                raise ValueError("a Hugging Face tokenizer decodes as its decoder does: errors=\"replace\"")
            text = self.pipeline.decode(list(map(self._spelled.__getitem__, ids)))
            return text, text.count("\ufffd")
        positions = None
        if self._control:  # written as nothing; a strict error names the position in the ids given
            control = set(self._control.values())
            positions = [p for p, i in enumerate(ids) if i not in control]
            ids = [ids[p] for p in positions]
        if self.alphabet.name == "bytes":
            symbols = b"".join(map(self._tokens.__getitem__, ids))
        else:
            symbols = array("i")
            symbols.frombytes(b"".join(map(self._packed.__getitem__, ids)))

        def id_holding(symbol_index: int) -> int:
            ends = list(accumulate(len(self._tokens[i]) for i in ids))
            held = bisect_right(ends, symbol_index)
            return held if positions is None else positions[held]

        if self.normalizer is not None and self.alphabet.unknown is not None:
            # sentencepiece writes its unknown piece's text as it is (not denormalized); this
            # alphabet has no bytes, so no decode errors either.
            parts = self.alphabet.texts_between_unknowns(symbols, errors)
            return self.normalizer.denormalize(parts, self.alphabet.unknown), 0
        text, count = self.alphabet.decode_located(symbols, errors, id_holding)
        if self.normalizer is not None:
            text = self.normalizer.denormalize(text)
        return text, count

    # --- files ----------------------------------------------------------------------------
    def save(self, directory: str | os.PathLike) -> str | None:
        """Write tokfx.json, and the GPT-2, Hugging Face and sentencepiece files where they can
        express it; return a note on the files not written and why (or on what they differ in),
        or None."""
        return save_tokenizer(self, directory)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Tokenizer":
        """Read a tokenizer file, or a directory holding one, of any kind tokfx reads, told from
        its content (tokfx.formats.tokenizer_files): tokfx.json, a Hugging Face tokenizer.json,
        a sentencepiece .model, Mistral's tekken.json, the rank file of one of tiktoken's own
        encodings (cl100k_base.tiktoken, ...: known by its sha256; another rank file names no
        pattern: from_tiktoken). Untrusted input: a file beyond tokfx.limits or malformed in any
        field raises one tokfx.TokenizerFileError naming the file and the field. `source` then
        says what was read ({"file", "format", "sha256"})."""
        found = find_tokenizer_file(path)
        if found.kind == "tokfx":
            tokenizer = cls.from_dict(found.doc, str(found.path))
        elif found.kind == "huggingface":
            tokenizer = cls._built(tokenizer_args_of(found.doc, str(found.path)), str(found.path))
        elif found.kind == "sentencepiece":
            tokenizer = cls._built(sentencepiece_tokenizer_args(found.doc, str(found.path)), str(found.path))
        elif found.kind == "tiktoken":  # one of tiktoken's own encodings (KNOWN_RANK_FILES)
            _, pattern, special_tokens = found.doc
            tokenizer = cls.from_tiktoken(found.path, pattern, special_tokens)
        else:
            tokenizer = cls._from_tekken(read_tekken(found.path, found.doc), str(found.path))
        tokenizer.source = found.provenance()
        return tokenizer

    @classmethod
    def from_huggingface(cls, tokenizer_json: str | os.PathLike) -> "Tokenizer":
        """A tokenizer from a Hugging Face tokenizer.json, encoding with `tokenizers`' ids
        (`encode(text, add_special_tokens=False)`) and decoding as its decoder does
        (tokfx.formats.huggingface says what is read and what is refused)."""
        return cls._built(huggingface_tokenizer_args(tokenizer_json), str(tokenizer_json))

    @classmethod
    def _built(cls, args: dict, source: str) -> "Tokenizer":
        """The tokenizer of a file's constructor arguments: what the constructor refuses in them
        is the file's fault, named as such."""
        try:
            return cls(**args)
        except ValueError as exc:
            if isinstance(exc, TokenizerFileError):
                raise
            raise TokenizerFileError(source, None, str(exc)) from None

    @classmethod
    def from_dict(cls, doc: dict, source: str = "tokfx.json") -> "Tokenizer":
        """The tokenizer of a parsed tokfx.json; a fault is one TokenizerFileError naming
        `source` and the field."""
        return tokenizer_from_dict(doc, cls, source)

    @classmethod
    def from_gpt2_files(cls, vocab_json: str | os.PathLike, merges_txt: str | os.PathLike,
                        special_tokens: Sequence[str] = (), pattern: str = "gpt2") -> "Tokenizer":
        """A tokenizer from GPT-2 style vocab.json + merges.txt.

        A special token already in the vocabulary keeps its id; others are appended. The files
        are untrusted input: a fault in them is one TokenizerFileError naming the file.
        """
        vocab, byte_merges = read_gpt2_files(vocab_json, merges_txt)
        check_special_tokens(special_tokens)
        try:
            return cls.from_byte_merges(vocab, byte_merges, special_tokens, pattern)
        except TokenizerFileError:
            raise
        except ValueError as exc:  # what the files hold: the arguments were checked above
            raise TokenizerFileError(f"{vocab_json} + {merges_txt}", None, str(exc)) from None

    @classmethod
    def from_hf_unigram(cls, tokenizer_json: str | os.PathLike, pattern: str | None = None) -> "Tokenizer":
        """A tokenizer from a Hugging Face byte-level Unigram tokenizer.json (UnigramTrainer over a
        ByteLevel pre-tokenizer, or our own export): its ids, scores and special tokens, segmented
        with `likelihood` (max_width: the widest piece, at least 16, as tokenizers' Unigram has no
        width limit). `pattern`: the pre-tokenization (default: the file's, "gpt2" for ByteLevel's
        own regex)."""
        if pattern is not None:
            PreTokenizer(pattern, [])  # the caller's pattern: its faults are not the file's
        found = read_hf_unigram(tokenizer_json)
        tokens = found["tokens"]
        width = max([16] + [len(t) for t, s in zip(tokens, found["scores"]) if s is not None])
        try:
            return cls(tokens, [], found["special_tokens"], pattern or found["pattern"], "unigram",
                       {"vocab_size": len(tokens)}, segmenter="likelihood",
                       segmenter_params={"max_width": width}, scores=found["scores"])
        except ValueError as exc:  # what the constructor refuses (a user pattern, a special token)
            if isinstance(exc, TokenizerFileError):
                raise
            raise TokenizerFileError(str(tokenizer_json), None, str(exc)) from None

    @classmethod
    def from_sentencepiece(cls, model_file: str | os.PathLike) -> "Tokenizer":
        """A tokenizer from a sentencepiece `.model` file (BPE or Unigram, with byte_fallback or
        an unknown piece for what the vocabulary lacks), encoding as sentencepiece does, with the model's ids (docs/alphabets.md). The file is
        untrusted input: a fault in it is one TokenizerFileError naming the file and the field."""
        source = str(model_file)
        return cls._built(sentencepiece_tokenizer_args(read_sentencepiece_model(model_file), source), source)

    @classmethod
    def from_tiktoken(cls, path: str | os.PathLike, pattern: str,
                      special_tokens: Mapping[str, int] | None = None) -> "Tokenizer":
        """A tokenizer from a tiktoken rank file (`base64(token) rank` a line: cl100k_base.tiktoken,
        o200k_base.tiktoken, Llama 3's original tokenizer.model), encoding exactly as
        tiktoken.Encoding(pat_str=pattern's regex, mergeable_ranks=the file, special_tokens=...)
        does, with its ids (token id = rank). `pattern`: a pattern name (cl100k, o200k, llama3,
        gpt2, ...) or a regex; `special_tokens`: {text: id}, as tiktoken takes them.

        tokfx's ids are dense: an id that neither the file nor a special token holds (cl100k's
        100256) is a control token named `<|tokfx_unused_ID|>` (tokfx.formats.tiktoken_ranks),
        never encoded and decoded as nothing, where tiktoken has no token. The merges are every
        split of every token, segmented with tiktoken's byte-pair rule (bpe segmenter params
        ignore_merges and rank_by_id). The file is untrusted input: a fault in it is one
        TokenizerFileError naming the file and line."""
        return cls._built(tiktoken_tokenizer_args(path, pattern, special_tokens), str(path))

    @classmethod
    def from_tekken(cls, path: str | os.PathLike) -> "Tokenizer":
        """A tokenizer from Mistral's tekken.json, encoding and decoding as mistral_common's
        Tekkenizer does (its default: special tokens ignored on decode) with its ids: the special
        tokens first, as control tokens, since Tekkenizer never encodes their text as them
        (tokfx.formats.tekken). The file is untrusted input: a fault in it is one
        TokenizerFileError naming the file and the field. Its framing: BOS added, as Mistral's
        models are trained (and their Hugging Face tokenizers do), EOS named."""
        return cls._from_tekken(read_tekken(path), str(path))

    @classmethod
    def _from_tekken(cls, found: dict, source: str) -> "Tokenizer":
        return cls._built({"tokens": found["tokens"], "merges": found["merges"], "special_tokens": {},
                           "pattern": found["pattern"], "segmenter": "bpe", "segmenter_params": BYTE_PAIR_RULE,
                           "control_tokens": found["control_tokens"],
                           "framing": Framing(found["bos"], found["eos"], found["bos"] is not None)}, source)

    @classmethod
    def from_byte_merges(cls, vocab: Mapping[int, bytes], byte_merges: Sequence[tuple[bytes, bytes]],
                         special_tokens: Sequence[str] = (), pattern: str = "gpt2",
                         algorithm: str = "bpe") -> "Tokenizer":
        """A tokenizer from {id: bytes} and merges spelled as byte strings."""
        special_tokens = check_special_tokens(special_tokens)
        resolve_pattern(pattern)
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

    def __reduce__(self):
        # Pickled as its tokfx.json (tokenizer_to_dict) without the tokens and merges, which go
        # as they are held (bytes or symbol tuples; the merge ids as one flat array('i')), so that a
        # tokenizer crosses to another process (multiprocessing, a pipeline worker) whatever
        # built it: its native cores and text stages (closures) are rebuilt, not copied. A
        # pickle is trusted input, as every pickle is: unpickling skips the checks of a file's
        # reading (GPT-2's vocabulary: about 0.05 s of CPU instead of 0.25 s from tokfx.json).
        doc = tokenizer_to_dict(self, entries=False)
        return (_unpickled, (json.dumps(doc, ensure_ascii=False), self._tokens, self._merge_ids, self.source))

    def __repr__(self) -> str:
        return (f"Tokenizer(algorithm={self.algorithm!r}, vocab_size={self.vocab_size}, "
                f"pattern={self.pattern!r}, segmenter={self.segmenter!r}, "
                f"special_tokens={list(self._special)})")


def _unpickled(doc: str, tokens: list, merge_ids: array, source: dict | None) -> Tokenizer:
    tokenizer = tokenizer_from_dict(json.loads(doc), partial(Tokenizer, _held=True), "a pickled tokenizer",
                                    held=(tokens, merge_ids))
    tokenizer.source = source
    return tokenizer


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
