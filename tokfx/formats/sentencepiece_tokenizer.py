"""sentencepiece models as tokfx tokenizers, and back (docs/alphabets.md, "sentencepiece models").

A BPE or Unigram model is a tokenizer over the `chars` alphabet of its one-character pieces,
with the model's ids:

- normal pieces are tokens (their characters' symbols), byte pieces `<0xE4>` the fallback bytes;
- without byte fallback (T5, ALBERT), the alphabet has an unknown symbol, which every character
  not covered becomes, and the unknown piece is its token (sentencepiece's Unigram scores it
  float32(min score - 10) in its lattice; runs of it are written as one: unknown_runs.py);
- user-defined pieces are special tokens (found in the normalized text, as sentencepiece finds
  them); control pieces (`<s>`, `</s>`), unused pieces and, with byte fallback, the unknown
  piece are control tokens, which encoding never produces and decoding writes as nothing;
- BPE segments with every split of a piece as a merge, pieces by score, highest first (the
  `bpe` segmenter over `every_split_merges`); Unigram with `likelihood` over the scores;
- the normalizer is the model's (tokfx.normalizers.sentencepiece); for BPE the pattern
  `sentencepiece` when no piece holds U+2581 after another character (then no piece spans the
  place where it cuts, and merges by rank are the same cut or not), else `none`, the whole text
  as one piece, as sentencepiece segments it. Unigram always gets `none`: sentencepiece's
  Viterbi sums float32 scores over the whole text, and where float64 sums of two segmentations
  tie (a permutation of the same pieces, as in "~~~~~") the rounding of that running sum
  chooses, which a Viterbi restarted at every piece would not reproduce. (The segmenter itself
  cuts the text where no piece can span, carrying the sum, and reuses a cut segment's path only
  where a rounding bound proves it: ext/viterbi32_segments.pxd.)
"""
from __future__ import annotations

import re
from itertools import chain, count

from tokfx.alphabet import Alphabet, fallback_byte_scores, unknown_score
from tokfx.formats.sentencepiece_model import DEFAULT_UNK_SURFACE, NormalizerSpec, PieceColumns, SentencePieceModel
from tokfx.formats.untrusted import TokenizerFileError
from tokfx.limits import MAX_UNKNOWN_TEXT_CHARS
from tokfx.normalizers.sentencepiece import SPACE_SYMBOL, SentencePieceNormalizer
from tokfx.segmenters.bpe import every_split_merges

_PREFIX_SPACES_ONLY = re.compile(f"{SPACE_SYMBOL}*[^{SPACE_SYMBOL}]*")
UNKNOWN_PIECE = "<unk>"


def tokenizer_args(model: SentencePieceModel, source: str) -> dict:
    """The Tokenizer constructor's keywords for `model`; a TokenizerFileError for a model that
    tokfx cannot segment as sentencepiece does."""
    if model.model_type not in ("bpe", "unigram"):
        raise TokenizerFileError(source, "trainer_spec.model_type",
                                 f"a {model.model_type} model: tokfx imports bpe and unigram models")
    unknown = None if model.byte_fallback else model.unk_surface
    if unknown is not None and len(unknown) > MAX_UNKNOWN_TEXT_CHARS:
        raise TokenizerFileError(source, "trainer_spec.unk_surface", f"{len(unknown):,} characters: at most"
                                 f" {MAX_UNKNOWN_TEXT_CHARS} (tokfx.limits)")
    single = "".join(p.piece for p in model.pieces if p.type == "normal" and len(p.piece) == 1)
    alphabet = Alphabet("chars", characters=single, unknown=unknown)
    tokens, special, control, scores = [], {}, {}, []
    normal_scores = [p.score for p in model.pieces if p.type == "normal"] or [0.0]
    byte_scores = fallback_byte_scores(normal_scores)
    for i, (text, score, kind) in enumerate(model.pieces):
        field = f"pieces[{i}]"
        if kind == "byte":
            tokens.append((int(text[3:5], 16),))
            scores.append(byte_scores[tokens[-1][0]])
            continue
        if kind == "unknown" and unknown is not None:
            tokens.append((alphabet.unknown_symbol,))
            scores.append(unknown_score(normal_scores))
            continue
        if kind == "normal":
            outside = next((c for c in text if c not in alphabet.characters), None)
            if outside is not None:
                raise TokenizerFileError(source, field, f"{text!r} holds {outside!r}, which is not a piece"
                                         " of its own (tokfx segments over the one-character pieces)")
            scores.append(score)
        else:
            named = special if kind == "user_defined" else control
            if text in special or text in control:
                raise TokenizerFileError(source, field, f"{text!r} is also another reserved piece")
            named[text] = i
            scores.append(None)
        tokens.append(alphabet.token_of_text(text))
    pattern = "sentencepiece"
    if model.model_type == "unigram" or model.treat_whitespace_as_suffix or not all(
            _PREFIX_SPACES_ONLY.fullmatch(p.piece) for p in model.pieces if p.type == "normal"):
        pattern = "none"
    args = {"tokens": tokens, "special_tokens": special, "control_tokens": control, "pattern": pattern,
            "algorithm": model.model_type, "params": {"vocab_size": len(tokens)}, "alphabet": alphabet,
            "normalizer": model_normalizer(model, source)}
    if model.model_type == "bpe":
        learned = [i for i, p in enumerate(model.pieces) if p.type == "normal" and len(p.piece) > 1]
        learned.sort(key=lambda i: (-model.pieces[i].score, i))
        ordinary = [t if p.type in ("normal", "byte") else None for t, p in zip(tokens, model.pieces)]
        args.update(merges=every_split_merges(ordinary, learned), segmenter="bpe")
    else:
        width = max([1] + [len(p.piece) for p in model.pieces if p.type == "normal"])
        args.update(merges=[], segmenter="likelihood", scores=scores,
                    segmenter_params={"max_width": width, "float_bits": 32})
    return args


def model_normalizer(model: SentencePieceModel, source: str = "sentencepiece model") -> SentencePieceNormalizer:
    """The normalizer that sentencepiece builds for `model`: its normalizer spec, its
    treat_whitespace_as_suffix, its user-defined pieces (a fault in its rules is a
    TokenizerFileError naming `source`)."""
    spec = model.normalizer
    return SentencePieceNormalizer(spec.precompiled_charsmap, spec.add_dummy_prefix, spec.remove_extra_whitespaces,
                                   spec.escape_whitespaces, model.treat_whitespace_as_suffix,
                                   [p.piece for p in model.pieces if p.type == "user_defined"], source)


def sentencepiece_model(tokenizer) -> tuple[SentencePieceModel, str | None]:
    """The sentencepiece model that encodes as `tokenizer` does, and a note on what differs (an
    unknown piece added at the end, which sentencepiece needs); a ValueError saying why when the
    format cannot express it. Over an alphabet with an unknown symbol, its token is the unknown
    piece (named <unk>, the name the tokenizer does not keep) and byte_fallback is off."""
    refusal = sentencepiece_refusal(tokenizer)
    if refusal:
        raise ValueError(refusal)
    alphabet, tokens = tokenizer.alphabet, tokenizer.tokens
    unknown_token = (alphabet.unknown_symbol,)
    special = {i: name for name, i in tokenizer.special_tokens.items()}
    control = {i: name for name, i in tokenizer.control_tokens.items()}
    bpe = tokenizer.segmenter == "bpe"
    rank = {merged: r for r, merged in enumerate(dict.fromkeys(m for _, _, m in tokenizer.merge_ids))}
    texts, scores, types = [], [], []
    for i, token in enumerate(tokens):
        score, kind = 0.0, "normal"
        if i in special:
            text, kind = special[i], "user_defined"
        elif i in control:
            text = control[i]
            kind = "unknown" if text == UNKNOWN_PIECE and alphabet.unknown is None else "control"
        elif token == unknown_token:
            text, kind = None, "unknown"  # named below, apart from every other piece
        elif token[0] < alphabet.char_base:
            text, kind = f"<0x{token[0]:02X}>", "byte"
        else:
            text = alphabet.decode(token)
            # BPE: minus the merge rank; characters after every merged piece, as sentencepiece
            # orders them (their scores steer nothing).
            score = -float(rank.get(i, len(rank) + i)) if bpe else tokenizer.scores[i]
        texts.append(text)
        scores.append(score)
        types.append(kind)
    note = None
    # Named apart from every piece: sentencepiece refuses a name given twice (a text's own
    # "<unk>" learned as a piece). Only pieces like the candidates are kept to compare, and the
    # candidates are made one at a time (a set of every piece, and a tuple of as many candidate
    # names, were 4 MB of a trainer's peak when it saves 32,000 pieces: issue 26).
    taken = {text for text in texts if text is not None and text.startswith("<unk")}
    name = next(n for n in chain([UNKNOWN_PIECE], (f"<unk{k}>" for k in count(1))) if n not in taken)
    if None in texts:
        texts = [name if text is None else text for text in texts]
    elif "unknown" not in types:
        texts.append(name)
        scores.append(0.0)
        types.append("unknown")
        note = (f"sentencepiece needs an unknown piece: {name} added as id {len(texts) - 1},"
                " which encoding never produces")
    normalizer = tokenizer.normalizer
    spec = NormalizerSpec(normalizer.name, normalizer.charsmap, normalizer.add_dummy_prefix,
                          normalizer.remove_extra_whitespaces, normalizer.escape_whitespaces)
    model = SentencePieceModel(PieceColumns(texts, scores, types), "bpe" if bpe else "unigram", alphabet.unknown is None,
                               alphabet.unknown or DEFAULT_UNK_SURFACE,
                               treat_whitespace_as_suffix=normalizer.treat_whitespace_as_suffix,
                               normalizer=spec)
    return model, note


def sentencepiece_refusal(tokenizer) -> str | None:
    """Why a sentencepiece model cannot encode as `tokenizer` does, or None when it can."""
    if tokenizer.alphabet.name != "chars":
        return f"a sentencepiece model has no {tokenizer.alphabet.name} alphabet (its alphabet is chars)"
    if not isinstance(tokenizer.normalizer, SentencePieceNormalizer):
        return "a sentencepiece model spells spaces U+2581: train with --pattern sentencepiece"
    if tokenizer.pretokenizer.pattern_name not in ("sentencepiece", "none"):
        return (f"sentencepiece does not pre-tokenize; the pattern {tokenizer.pattern!r} cuts where"
                " it does not (use --pattern sentencepiece)")
    if tokenizer.scaffold is not None:
        return "a sentencepiece model has no scaffold tokens"
    char_base = tokenizer.alphabet.char_base
    reserved = set(tokenizer.special_tokens.values()) | set(tokenizer.control_tokens.values())
    ordinary = [None if i in reserved else t for i, t in enumerate(tokenizer.tokens)]
    if any(t is not None and len(t) > 1 and min(t) < char_base for t in ordinary):
        return (f"a token holds {'a fallback byte' if tokenizer.alphabet.unknown is None else 'the unknown symbol'},"
                " which a sentencepiece piece cannot")
    if tokenizer.segmenter == "bpe":
        merge_ids = tokenizer.merge_ids  # made from the flat merges at each read
        learned = list(dict.fromkeys(m for _, _, m in merge_ids))
        if merge_ids != every_split_merges(ordinary, learned):
            return ("sentencepiece merges every split of a piece; this tokenizer's merges are only the"
                    " learned pairs (byte-level BPE)")
        return None
    if tokenizer.segmenter == "likelihood" and tokenizer.scores is not None:
        if tokenizer.segmenter_params["float_bits"] != 32:
            return "sentencepiece sums Unigram scores in float32: segment with float_bits 32"
        if max(len(t) for t in ordinary if t is not None) > tokenizer.segmenter_params["max_width"]:
            return "a sentencepiece Unigram model has no max_width, and tokens are wider than this one"
        return _unknown_score_refusal(tokenizer, ordinary)
    return f"sentencepiece segments by BPE merges or Unigram scores, not {tokenizer.segmenter}"


def _unknown_score_refusal(tokenizer, ordinary: list) -> str | None:
    """A Unigram over an alphabet with an unknown symbol: sentencepiece scores the unknown piece
    itself (unknown_score of its normal pieces), so the tokenizer's must be that."""
    if tokenizer.alphabet.unknown is None:
        return None
    symbol = tokenizer.alphabet.unknown_symbol
    unknown = [i for i, t in enumerate(ordinary) if t == (symbol,)]
    normal = [tokenizer.scores[i] for i, t in enumerate(ordinary) if t is not None and i not in unknown]
    expected = unknown_score(normal or [0.0])
    if any(tokenizer.scores[i] != expected for i in unknown):
        return (f"sentencepiece scores its unknown piece {expected} (its lowest normal score - 10),"
                " and this tokenizer does not")
    return None
