"""sentencepiece `.model` files: a serialized `sentencepiece.ModelProto` (protobuf, proto2), read
and written by our own wire-format codec (`protobuf_wire`), without the protobuf package.

The fields used, by number, from sentencepiece's src/sentencepiece_model.proto:

    ModelProto
      1  pieces             repeated SentencePiece   the vocabulary; a piece's id is its index
      2  trainer_spec       TrainerSpec
      3  normalizer_spec    NormalizerSpec           applied to text before encoding
      5  denormalizer_spec  NormalizerSpec           applied to decoded text (rarely set)
    ModelProto.SentencePiece
      1  piece  string      the piece's text, spaces spelled U+2581; "<0xE4>" for a byte piece
      2  score  float       a log probability (unigram) or minus the merge rank (bpe)
      3  type   enum Type   NORMAL=1 (default), UNKNOWN=2, CONTROL=3, USER_DEFINED=4, UNUSED=5,
                            BYTE=6
    TrainerSpec (training settings; these few also steer encoding, or name the special ids)
      3  model_type                  enum  UNIGRAM=1 (default), BPE=2, WORD=3, CHAR=4
      4  vocab_size                  int32 (written: the number of pieces)
      24 treat_whitespace_as_suffix  bool  "▁" ends a word instead of starting it (default false)
      35 byte_fallback               bool  characters outside the vocabulary become byte pieces
      40 unk_id, 41 bos_id, 42 eos_id, 43 pad_id   int32 (written to match the pieces; -1: none)
      44 unk_surface                 string  what an unknown piece decodes to (default " ⁇ ")
    NormalizerSpec
      1  name                      string  the rule set ("nmt_nfkc", "identity", ...)
      2  precompiled_charsmap      bytes   the rules, compiled (tokfx.normalizers.charsmap)
      3  add_dummy_prefix          bool    a space before the text (default true)
      4  remove_extra_whitespaces  bool    leading, trailing and repeated spaces removed (default true)
      5  escape_whitespaces        bool    spaces written U+2581 (default true)

Every other field is skipped when read: the rest of TrainerSpec (training only), the
NormalizerSpec's rule TSV (compiled into the charsmap already), self-test data (field 4) and
extensions. A message field given twice is merged, as protobuf does (its fields read in order,
the last value of a scalar wins). The denormalizer spec is kept parsed, like the normalizer's.
"""
from __future__ import annotations

import math
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

from tokfx.formats.protobuf_wire import (I32, LEN, VARINT, MessageReader, bytes_field, float_field,
                                         signed64, string_field, varint_field)
from tokfx.formats.untrusted import TokenizerFileError, read_file_bytes
from tokfx.limits import MAX_TOKENS

PIECE_TYPES = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}
DEFAULT_UNK_SURFACE = " \u2047 "
# sentencepiece refuses a piece of 8,000 bytes or more when it loads a model.
MAX_PIECE_BYTES = 7999
BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")
_FLOAT = struct.Struct("<f")
_RESERVED_TYPES = ("control", "unknown", "byte")  # sentencepiece looks these up apart from the others

_MODEL_FIELDS = {1: "pieces", 2: "trainer_spec", 3: "normalizer_spec", 5: "denormalizer_spec"}
_PIECE_FIELDS = {1: "piece", 2: "score", 3: "type"}
_TRAINER_FIELDS = {3: "model_type", 24: "treat_whitespace_as_suffix", 35: "byte_fallback",
                   44: "unk_surface"}
_NORMALIZER_FIELDS = {1: "name", 2: "precompiled_charsmap", 3: "add_dummy_prefix",
                      4: "remove_extra_whitespaces", 5: "escape_whitespaces"}


class Piece(NamedTuple):
    """A vocabulary entry; its id is its index in the model's pieces."""
    piece: str
    score: float
    type: str  # a value of PIECE_TYPES


class PieceColumns(Sequence):
    """Pieces held as three lists (texts, scores, types), each Piece made as it is read: the
    pieces of a model written from a tokenizer, whose Piece tuples held at once were 2.25 MB of
    a trainer's peak as it saved 32,000 of them (issue 26). Equal to the tuple of its Pieces."""

    def __init__(self, texts: list[str], scores: list[float], types: list[str]):
        if not len(texts) == len(scores) == len(types):
            raise ValueError(f"{len(texts)} texts, {len(scores)} scores and {len(types)} types")
        self.texts, self.scores, self.types = texts, scores, types

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        return Piece(self.texts[index], self.scores[index], self.types[index])

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))


@dataclass(frozen=True)
class NormalizerSpec:
    """sentencepiece's NormalizerSpec, the proto's defaults for the fields a file leaves out."""
    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True


@dataclass(frozen=True)
class SentencePieceModel:
    """What tokfx keeps of a ModelProto: the pieces, and the settings that steer encoding and
    decoding."""
    pieces: Sequence[Piece]  # a tuple as read from a file; PieceColumns as made from a tokenizer
    model_type: str = "unigram"
    byte_fallback: bool = False
    unk_surface: str = DEFAULT_UNK_SURFACE
    treat_whitespace_as_suffix: bool = False
    normalizer: NormalizerSpec = NormalizerSpec()
    denormalizer: NormalizerSpec | None = None


# --- reading ------------------------------------------------------------------------------------
def read_sentencepiece_model(path, source: str | None = None) -> SentencePieceModel:
    """The model in a `.model` file, which is untrusted input: anything malformed, beyond
    tokfx.limits, or that sentencepiece itself would refuse to load, is one TokenizerFileError
    naming the file and the field. The charsmap stays bytes here: its rules are decoded, and
    checked, when a normalizer is built from it (sentencepiece_tokenizer.model_normalizer, given the
    file's name as `source`)."""
    source = source or str(path)
    return parse_sentencepiece_model(read_file_bytes(Path(path), source), source)


def parse_sentencepiece_model(data: bytes, source: str) -> SentencePieceModel:
    pieces, specs = [], {2: [], 3: [], 5: []}
    message = MessageReader(data, source, "", _MODEL_FIELDS)
    for number, wire_type, value in message:
        if number == 1:
            _expect(message, number, wire_type, LEN)
            if len(pieces) == MAX_TOKENS:
                message.fail(number, f"more than {MAX_TOKENS:,} pieces")
            pieces.append(_read_piece(value, source, len(pieces)))
        elif number in specs:
            _expect(message, number, wire_type, LEN)
            specs[number].append(value)
    trainer = _read_trainer_spec(b"".join(specs[2]), source)
    model = SentencePieceModel(
        pieces=tuple(pieces), **trainer,
        normalizer=_read_normalizer_spec(b"".join(specs[3]), source, "normalizer_spec"),
        denormalizer=_read_normalizer_spec(b"".join(specs[5]), source, "denormalizer_spec")
        if specs[5] else None)
    fault = model_fault(model)
    if fault:
        raise TokenizerFileError(source, *fault)
    return model


def _expect(message: MessageReader, number: int, wire_type: int, expected: int) -> None:
    if wire_type != expected:
        names = {VARINT: "a varint", LEN: "length-delimited", I32: "a fixed32"}
        message.fail(number, f"wire type {wire_type}, expected {names[expected]}")


def _string(message: MessageReader, number: int, value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        message.fail(number, f"not UTF-8 at byte {exc.start}")


def _read_piece(data: bytes, source: str, index: int) -> Piece:
    """pieces[index]. sentencepiece writes a piece as 0x0A, the text's length (one byte: under
    128) and its UTF-8, 0x15 and the score, then 0x18 and the type unless it is normal: that is
    read at once, anything else (or wrong) by the field reader, which names the fault."""
    size = len(data)
    if size >= 7 and data[0] == 0x0A and data[1] < 0x80:
        end = 2 + data[1]
        if data[end:end + 1] == b"\x15" and (size == end + 5 or size == end + 7 and data[end + 5] == 0x18):
            kind = PIECE_TYPES.get(data[end + 6]) if size == end + 7 else "normal"
            (score,) = _FLOAT.unpack_from(data, end + 1)
            if kind and math.isfinite(score):
                try:
                    return Piece(data[2:end].decode("utf-8"), score, kind)
                except UnicodeDecodeError:
                    pass
    return _read_piece_fields(data, source, f"pieces[{index}]")


def _read_piece_fields(data: bytes, source: str, path: str) -> Piece:
    text, score, kind = "", 0.0, "normal"  # the proto's defaults
    message = MessageReader(data, source, path, _PIECE_FIELDS)
    for number, wire_type, value in message:
        if number == 1:
            _expect(message, number, wire_type, LEN)
            text = _string(message, number, value)
        elif number == 2:
            _expect(message, number, wire_type, I32)
            (score,) = _FLOAT.unpack(value)
            if not math.isfinite(score):
                message.fail(number, f"{score} is not a finite number")
        elif number == 3:
            _expect(message, number, wire_type, VARINT)
            kind = PIECE_TYPES.get(signed64(value))
            if kind is None:
                message.fail(number, f"unknown piece type {signed64(value)}")
    return Piece(text, score, kind)


def _read_trainer_spec(data: bytes, source: str) -> dict:
    spec = {"model_type": "unigram", "byte_fallback": False, "unk_surface": DEFAULT_UNK_SURFACE,
            "treat_whitespace_as_suffix": False}
    message = MessageReader(data, source, "trainer_spec", _TRAINER_FIELDS)
    for number, wire_type, value in message:
        if number == 3:
            _expect(message, number, wire_type, VARINT)
            spec["model_type"] = MODEL_TYPES.get(signed64(value))
            if spec["model_type"] is None:
                message.fail(number, f"unknown model type {signed64(value)}")
        elif number in (24, 35):
            _expect(message, number, wire_type, VARINT)
            spec[_TRAINER_FIELDS[number]] = value != 0
        elif number == 44:
            _expect(message, number, wire_type, LEN)
            spec["unk_surface"] = _string(message, number, value)
    return spec


def _read_normalizer_spec(data: bytes, source: str, path: str) -> NormalizerSpec:
    spec = {}
    message = MessageReader(data, source, path, _NORMALIZER_FIELDS)
    for number, wire_type, value in message:
        if number == 1:
            _expect(message, number, wire_type, LEN)
            spec["name"] = _string(message, number, value)
        elif number == 2:
            _expect(message, number, wire_type, LEN)
            spec["precompiled_charsmap"] = value
        elif number in (3, 4, 5):
            _expect(message, number, wire_type, VARINT)
            spec[_NORMALIZER_FIELDS[number]] = value != 0
    return NormalizerSpec(**spec)


def model_fault(model: SentencePieceModel) -> tuple[str | None, str] | None:
    """(field, what is wrong) for a model that sentencepiece would refuse to load, else None:
    its checks (src/model_interface.cc, InitializePieces), and a piece type and model type that
    tokfx knows. Checked in bulk; the pieces are walked one by one only to name a fault."""
    if not model.pieces:
        return "pieces", "no pieces"
    if len(model.pieces) > MAX_TOKENS:
        return "pieces", f"{len(model.pieces):,} pieces: at most {MAX_TOKENS:,}"
    if model.model_type not in MODEL_TYPES.values():
        return "trainer_spec.model_type", f"unknown model type {model.model_type!r}"
    return None if _pieces_look_right(model) else _piece_fault(model)


def _pieces_look_right(model: SentencePieceModel) -> bool:
    """Whether _piece_fault would find nothing, at the speed of C loops (but the one that reads
    the pieces once, with no tuple of them all: PieceColumns)."""
    texts, kinds = [], []
    for text, score, kind in model.pieces:
        if not math.isfinite(score):
            return False
        texts.append(text)
        kinds.append(kind)
    joined = "".join(texts)
    if not all(texts) or "\0" in joined or not _utf8_encodable(joined):
        return False
    if max(map(len, texts)) * 4 > MAX_PIECE_BYTES:  # only then may a piece's UTF-8 be too long
        return False
    if not set(kinds) <= set(PIECE_TYPES.values()):
        return False
    reserved = [text for text, kind in zip(texts, kinds) if kind in _RESERVED_TYPES]
    others = [text for text, kind in zip(texts, kinds) if kind not in _RESERVED_TYPES]
    if _repeats(reserved) or _repeats(others):
        return False
    byte_pieces = [text for text, kind in zip(texts, kinds) if kind == "byte"]
    if byte_pieces and not (model.byte_fallback and all(map(BYTE_PIECE.fullmatch, byte_pieces))):
        return False
    return kinds.count("unknown") == 1 and (not model.byte_fallback or len(set(byte_pieces)) == 256)


def _repeats(texts: list[str]) -> bool:
    """Whether a text comes twice: sorted in place and compared with its neighbour (a set of
    32,000 pieces' texts took 2 MB of a trainer's peak as it saved them: issue 26)."""
    texts.sort()
    return any(a == b for a, b in pairwise(texts))


def _piece_fault(model: SentencePieceModel) -> tuple[str | None, str] | None:
    seen_normal, seen_reserved = {}, {}
    unknown, byte_pieces = [], set()
    for i, (text, score, kind) in enumerate(model.pieces):
        field = f"pieces[{i}]"
        if not text:
            return field + ".piece", "is empty"
        if "\0" in text:
            return field + ".piece", "holds a NUL character"
        if not _utf8_encodable(text):
            return field + ".piece", "holds a lone surrogate, which UTF-8 cannot encode"
        if len(text.encode("utf-8")) > MAX_PIECE_BYTES:
            return field + ".piece", f"longer than {MAX_PIECE_BYTES:,} bytes"
        if kind not in PIECE_TYPES.values():
            return field + ".type", f"unknown piece type {kind!r}"
        if not math.isfinite(score):
            return field + ".score", f"{score} is not a finite number"
        same_text = seen_reserved if kind in _RESERVED_TYPES else seen_normal
        if text in same_text:
            return field + ".piece", f"{text!r} is also pieces[{same_text[text]}]"
        same_text[text] = i
        if kind == "unknown":
            unknown.append(i)
        elif kind == "byte":
            if not model.byte_fallback:
                return field + ".type", "a byte piece, but trainer_spec.byte_fallback is false"
            if not BYTE_PIECE.fullmatch(text):
                return field + ".piece", f"{text!r} is not a byte piece <0x00>..<0xFF>"
            byte_pieces.add(text)
    if len(unknown) != 1:
        return "pieces", (f"{len(unknown)} unknown pieces" if unknown else "no unknown piece") + ": expected one"
    if model.byte_fallback and len(byte_pieces) != 256:
        return "pieces", f"{len(byte_pieces)} byte pieces: trainer_spec.byte_fallback needs all 256"
    return None


def _utf8_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# --- writing ------------------------------------------------------------------------------------
def write_sentencepiece_model(path, model: SentencePieceModel) -> None:
    """Writes `model` as a `.model` file that sentencepiece loads (ValueError for a model it
    would refuse, as read_sentencepiece_model names them). Scores are written as float32, as
    the format holds them."""
    Path(path).write_bytes(serialize_sentencepiece_model(model))


def serialize_sentencepiece_model(model: SentencePieceModel) -> bytes:
    fault = model_fault(model)
    if fault:
        raise ValueError(f"{fault[0]}: {fault[1]}")
    kinds = {name: number for number, name in PIECE_TYPES.items()}
    out = bytearray()
    for text, score, kind in model.pieces:
        piece = string_field(1, text) + float_field(2, score)
        if kind != "normal":
            piece += varint_field(3, kinds[kind])
        out += bytes_field(1, piece)
    out += bytes_field(2, _trainer_spec(model))
    out += bytes_field(3, _normalizer_spec(model.normalizer))
    if model.denormalizer is not None:
        out += bytes_field(5, _normalizer_spec(model.denormalizer))
    return bytes(out)


def _trainer_spec(model: SentencePieceModel) -> bytes:
    model_types = {name: number for number, name in MODEL_TYPES.items()}
    unk_id = next(i for i, p in enumerate(model.pieces) if p.type == "unknown")
    controls = {p.piece: i for i, p in enumerate(model.pieces) if p.type == "control"}
    spec = varint_field(3, model_types[model.model_type]) + varint_field(4, len(model.pieces))
    if model.treat_whitespace_as_suffix:
        spec += varint_field(24, 1)
    spec += varint_field(35, int(model.byte_fallback))
    # sentencepiece finds its bos, eos and pad ids by these pieces' default texts, which must be
    # control pieces; the ids here only record them.
    spec += varint_field(40, unk_id)
    for number, text in ((41, "<s>"), (42, "</s>"), (43, "<pad>")):
        spec += varint_field(number, controls.get(text, -1))
    return spec + string_field(44, model.unk_surface)


def _normalizer_spec(spec: NormalizerSpec) -> bytes:
    out = string_field(1, spec.name)
    if spec.precompiled_charsmap:
        out += bytes_field(2, spec.precompiled_charsmap)
    for number, flag in ((3, spec.add_dummy_prefix), (4, spec.remove_extra_whitespaces),
                         (5, spec.escape_whitespaces)):
        out += varint_field(number, int(flag))
    return out
