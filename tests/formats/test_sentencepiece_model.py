"""sentencepiece `.model` files: read as sentencepiece reads them (every piece's text, score and
type, the settings), written so that sentencepiece loads them and encodes exactly as the
original, and read as untrusted input (each fault one TokenizerFileError naming the file and
the field; random damage never anything else, never a hang)."""
import dataclasses
import math
import re
import signal
import struct

import pytest
import sentencepiece
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import CORPUS_FILES, corpus_text, fixture_path
from sentencepiece_models import FIXTURE_MODELS, FIXTURE_TEXTS, MODELS, TEXT
from tokfx.formats import sentencepiece_model as spm_model
from tokfx.formats.protobuf_wire import MessageReader, bytes_field, float_field, string_field, varint, varint_field
from tokfx.formats.sentencepiece_model import (NormalizerSpec, Piece, PieceColumns, SentencePieceModel,
                                               read_sentencepiece_model, serialize_sentencepiece_model,
                                               write_sentencepiece_model)
from tokfx.formats.untrusted import TokenizerFileError
from tokfx.formats.sentencepiece_tokenizer import model_normalizer
from tokfx.normalizers.surrogates import replace_lone_surrogates

ALL_MODELS = list(MODELS)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _rule_charsmap(rule_name: str) -> bytes:
    spec = sentencepiece.SentencePieceNormalizer(rule_name=rule_name).serialized_normalizer_spec()
    return dict((number, value) for number, _, value in MessageReader(spec, "spec", "", {})).get(2, b"")


@pytest.mark.parametrize("name", ALL_MODELS[:3])
def test_pieces_as_columns_are_the_tuple_of_pieces(sentencepiece_models, name):
    model = read_sentencepiece_model(sentencepiece_models.path(name))
    texts, scores, types = (list(column) for column in zip(*model.pieces))
    columns = PieceColumns(texts, scores, types)
    assert columns == model.pieces and tuple(columns) == model.pieces and len(columns) == len(model.pieces)
    assert columns[3] == model.pieces[3] and columns[-1] == model.pieces[-1] and columns[2:9:3] == model.pieces[2:9:3]
    written = serialize_sentencepiece_model(dataclasses.replace(model, pieces=columns))
    assert written == serialize_sentencepiece_model(model)
    assert columns != PieceColumns(texts[::-1], scores[::-1], types[::-1])
    with pytest.raises(ValueError, match="3 texts, 2 scores and 3 types"):
        PieceColumns(["a", "b", "c"], [0.0, 0.0], ["normal"] * 3)


@pytest.mark.parametrize("name", ALL_MODELS)
def test_pieces_are_read_as_sentencepiece_reads_them(sentencepiece_models, name):
    model = read_sentencepiece_model(sentencepiece_models.path(name))
    sp = sentencepiece_models.processor(name)
    arguments = MODELS[name][1]
    user_defined = set(arguments.get("user_defined_symbols", ()))
    assert len(model.pieces) == sp.get_piece_size() == arguments["vocab_size"]
    for i, (piece, score, kind) in enumerate(model.pieces):
        assert piece == sp.id_to_piece(i) and score == sp.get_score(i)
        flags = {"unknown": sp.is_unknown(i), "control": sp.is_control(i), "byte": sp.is_byte(i),
                 "unused": sp.is_unused(i), "user_defined": piece in user_defined}
        assert kind == next((k for k, flag in flags.items() if flag), "normal")
    assert sum(p.type == "byte" for p in model.pieces) == 256


@pytest.mark.parametrize("name", ALL_MODELS)
def test_settings_are_read(sentencepiece_models, name):
    model = read_sentencepiece_model(sentencepiece_models.path(name))
    arguments = MODELS[name][1]
    rule = arguments["normalization_rule_name"]
    assert (model.model_type, model.byte_fallback, model.unk_surface) == (arguments["model_type"], True, " \u2047 ")
    assert model.treat_whitespace_as_suffix == arguments.get("treat_whitespace_as_suffix", False)
    assert model.normalizer == NormalizerSpec(
        name=rule, precompiled_charsmap=_rule_charsmap(rule),
        add_dummy_prefix=arguments.get("add_dummy_prefix", True),
        remove_extra_whitespaces=arguments.get("remove_extra_whitespaces", True), escape_whitespaces=True)
    assert model.denormalizer is None


@pytest.fixture(scope="module")
def rewritten(sentencepiece_models, tmp_path_factory):
    """{name: (original processor, processor of the model read and written by tokfx)}, lazily."""
    directory, pairs = tmp_path_factory.mktemp("rewritten"), {}

    def pair(name):
        if name not in pairs:
            model = read_sentencepiece_model(sentencepiece_models.path(name))
            write_sentencepiece_model(directory / f"{name}.model", model)
            assert read_sentencepiece_model(directory / f"{name}.model") == model
            pairs[name] = (sentencepiece_models.processor(name),
                           sentencepiece.SentencePieceProcessor(model_file=str(directory / f"{name}.model")))
        return pairs[name]
    return pair


@pytest.mark.parametrize("name", ALL_MODELS)
def test_a_written_model_loads_in_sentencepiece_as_the_original(rewritten, name):
    original, written = rewritten(name)
    for method in ("get_piece_size", "unk_id", "bos_id", "eos_id", "pad_id"):
        assert getattr(written, method)() == getattr(original, method)(), method
    for i in range(original.get_piece_size()):
        assert (written.id_to_piece(i), written.get_score(i)) == (original.id_to_piece(i), original.get_score(i))
        assert [f(i) for f in (written.is_unknown, written.is_control, written.is_byte, written.is_unused)] \
            == [f(i) for f in (original.is_unknown, original.is_control, original.is_byte, original.is_unused)]


@pytest.mark.parametrize("name", ALL_MODELS)
@SETTINGS
@given(text=TEXT)
def test_a_written_model_encodes_fuzzed_text_as_the_original(rewritten, name, text):
    original, written = rewritten(name)
    text = replace_lone_surrogates(text)  # sentencepiece cannot be given a lone surrogate
    ids = original.encode(text)
    assert written.encode(text) == ids
    assert written.decode(ids) == original.decode(ids)
    assert written.normalize(text) == original.normalize(text)


@pytest.mark.parametrize("name", ALL_MODELS)
def test_a_written_model_encodes_the_corpora_as_the_original(rewritten, name):
    original, written = rewritten(name)
    texts = [fixture_path(f).read_text(encoding="utf-8") for f in FIXTURE_TEXTS]
    if name not in FIXTURE_MODELS:
        texts += [corpus_text(relative) for relative in CORPUS_FILES]
    lines = [line for text in texts for line in text.split("\n")]
    assert written.encode(lines) == original.encode(lines)


def test_a_model_of_our_own_round_trips_and_loads(tmp_path):
    bytes_pieces = [Piece(f"<0x{b:02X}>", 0.0, "byte") for b in range(256)]
    model = SentencePieceModel(
        pieces=(Piece("<pad>", 0.0, "control"), Piece("<unk>", 0.0, "unknown"), Piece("</s>", 0.0, "control"),
                Piece("<sep>", 0.0, "user_defined"), Piece("<old>", 0.0, "unused"), *bytes_pieces,
                Piece("\u2581", -1.0, "normal"), Piece("a", -2.5, "normal"), Piece("\u2581a", -3.25, "normal")),
        model_type="bpe", byte_fallback=True, unk_surface="??",
        normalizer=NormalizerSpec(name="identity", add_dummy_prefix=False),
        # A denormalizer applies to decoded text; this one turns the fullwidth "ａ" into "a".
        denormalizer=NormalizerSpec(name="nfkc", precompiled_charsmap=_rule_charsmap("nfkc"), add_dummy_prefix=False,
                                    remove_extra_whitespaces=False, escape_whitespaces=False))
    path = tmp_path / "own.model"
    write_sentencepiece_model(path, model)
    assert read_sentencepiece_model(path) == model
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    assert (sp.unk_id(), sp.bos_id(), sp.eos_id(), sp.pad_id()) == (1, -1, 2, 0)
    assert sp.encode("a a\u00e9", out_type=str) == ["a", "\u2581a", "<0xC3>", "<0xA9>"]
    assert sp.decode([1, 263]) == "?? a"
    assert sp.decode([5 + 0xEF, 5 + 0xBD, 5 + 0x81]) == "a"  # the bytes of "ａ", denormalized


@pytest.mark.parametrize("edit, message", [
    (lambda m: dataclasses.replace(m, pieces=()), r"pieces: no pieces"),
    (lambda m: dataclasses.replace(m, pieces=m.pieces[1:]), r"pieces: no unknown piece"),
    (lambda m: dataclasses.replace(m, pieces=(*m.pieces, Piece("<unk2>", 0.0, "unknown"))), r"2 unknown pieces"),
    (lambda m: dataclasses.replace(m, byte_fallback=False), r"pieces\[\d+\]\.type: a byte piece, but"),
    (lambda m: dataclasses.replace(m, pieces=m.pieces[:-1] + (Piece("<0x100>", 0.0, "byte"),)),
     r"pieces\[\d+\]\.piece: '<0x100>' is not a byte piece"),
    (lambda m: dataclasses.replace(m, pieces=(*m.pieces, m.pieces[-1])), r"pieces\[1001\]\.piece: .* is also pieces\[1000\]"),
    (lambda m: dataclasses.replace(m, pieces=(*m.pieces, Piece("x", math.inf, "normal"))), r"pieces\[1001\]\.score"),
    (lambda m: dataclasses.replace(m, pieces=(*m.pieces, Piece("x\ud800", 0.0, "normal"))), r"lone surrogate"),
    (lambda m: dataclasses.replace(m, model_type="wordpiece"), r"trainer_spec\.model_type: unknown model type"),
])
def test_a_model_sentencepiece_would_refuse_is_not_written(sentencepiece_models, tmp_path, edit, message):
    model = read_sentencepiece_model(sentencepiece_models.path("bpe-identity-keep-spaces"))
    model = dataclasses.replace(model, pieces=(*model.pieces, Piece("\u2581\u2581\u2581zz", -9.0, "normal")))
    with pytest.raises(ValueError, match=message):
        write_sentencepiece_model(tmp_path / "bad.model", edit(model))


# --- untrusted input ----------------------------------------------------------------------------
def _piece(text=b"a", score=b"\x00\x00\x80\xbf", kind=None) -> bytes:
    """A ModelProto.SentencePiece field with raw parts: text bytes, score bytes, type number."""
    body = bytes_field(1, text) + varint(2 << 3 | 5) + score
    return bytes_field(1, body + (varint_field(3, kind) if kind is not None else b""))


VALID = _piece(b"<unk>", kind=2) + _piece(b"a")


def _refused(tmp_path, data: bytes) -> str:
    path = tmp_path / "m.model"
    path.write_bytes(data)
    with pytest.raises(TokenizerFileError) as info:
        read_sentencepiece_model(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message.removeprefix(f"{path}: ")


@pytest.mark.parametrize("data, message", [
    (b"", r"^pieces: no pieces$"),
    ((VALID + _piece(b"abc"))[:-2], r"^pieces: length 10 runs past the end of the data \(8 bytes left\)$"),
    (VALID + bytes_field(1, bytes_field(1, b"a") + b"\x15\x00\x00"), r"^pieces\[2\]\.score: truncated fixed32$"),
    (VALID + b"\x48" + b"\xff" * 11, r"^field 9: varint longer than 10 bytes$"),
    (VALID + b"\x48\xff\xff", r"^field 9: truncated varint$"),
    (VALID + b"\xff", r"^truncated field key varint$"),
    (VALID + b"\x0a\x80", r"^pieces: truncated length varint$"),
    (VALID + bytes_field(1, b"\x0a\x05ab"), r"^pieces\[2\]\.piece: length 5 runs past the end"),
    (VALID + b"\x08\x01", r"^pieces: wire type 0, expected length-delimited$"),
    (VALID + bytes_field(1, varint_field(2, 1)), r"^pieces\[2\]\.score: wire type 0, expected a fixed32$"),
    (VALID + bytes_field(2, varint_field(3, 9)), r"^trainer_spec\.model_type: unknown model type 9$"),
    (VALID + bytes_field(2, string_field(3, "bpe")), r"^trainer_spec\.model_type: wire type 2, expected a varint$"),
    (VALID + bytes_field(2, bytes_field(44, b"\xff")), r"^trainer_spec\.unk_surface: not UTF-8 at byte 0$"),
    (VALID + bytes_field(3, varint_field(2, 0)), r"^normalizer_spec\.precompiled_charsmap: wire type 0"),
    (VALID + _piece(b"\xe4\xbc"), r"^pieces\[2\]\.piece: not UTF-8 at byte 0$"),
    (VALID + _piece(score=struct.pack("<f", math.nan)), r"^pieces\[2\]\.score: nan is not a finite number$"),
    (VALID + _piece(score=struct.pack("<f", -math.inf)), r"^pieces\[2\]\.score: -inf is not a finite"),
    (VALID + _piece(b"b", kind=7), r"^pieces\[2\]\.type: unknown piece type 7$"),
    (VALID + _piece(b"b", kind=0), r"^pieces\[2\]\.type: unknown piece type 0$"),
    (VALID + _piece(b""), r"^pieces\[2\]\.piece: is empty$"),
    (VALID + _piece(b"a\0"), r"^pieces\[2\]\.piece: holds a NUL"),
    (VALID + _piece(b"x" * 8000), r"^pieces\[2\]\.piece: longer than 7,999 bytes$"),
    (VALID + _piece(b"a"), r"^pieces\[2\]\.piece: 'a' is also pieces\[1\]$"),
    (VALID + _piece(b"<0x41>", kind=6), r"^pieces\[2\]\.type: a byte piece, but trainer_spec\.byte_fallback is false$"),
    (VALID + _piece(b"<0x41>", kind=6) + bytes_field(2, varint_field(35, 1)), r"^pieces: 1 byte pieces:"),
    (_piece(b"a"), r"^pieces: no unknown piece: expected one$"),
    (VALID + b"\x4c", r"^field 9: group end without its group start$"),
    (VALID + b"\x4b\x50\x01", r"^field 9: truncated group$"),
    (VALID + b"\x4b\x54", r"^field 9: group end 10 does not close the open group$"),
    (VALID + b"\x4e", r"^field 9: wire type 6 does not exist$"),
    (VALID + b"\x02\x00", r"^field number 0 at byte \d+: not a valid field number$"),
])
def test_each_fault_is_one_error_naming_the_file_and_field(tmp_path, data, message):
    assert re.search(message, _refused(tmp_path, data))


def test_more_pieces_than_the_limit_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(spm_model, "MAX_TOKENS", 3)
    assert _refused(tmp_path, VALID + _piece(b"b") + _piece(b"c")) == "pieces: more than 3 pieces"


def test_a_file_larger_than_the_limit_is_refused_before_reading(tmp_path, monkeypatch):
    import tokfx.formats.untrusted as untrusted
    monkeypatch.setattr(untrusted, "MAX_FILE_BYTES", 100)
    assert _refused(tmp_path, VALID * 20) == "larger than 100 bytes"


UNKNOWN_FIELDS = (varint_field(99, 2**64 - 1) + varint(98 << 3 | 1) + b"\x01" * 8 + bytes_field(97, b"\xff\x00")
                  + varint(96 << 3 | 5) + b"\x01" * 4
                  + varint(95 << 3 | 3) + varint_field(1, 5) + varint(94 << 3 | 3) + bytes_field(2, b"x")
                  + varint(94 << 3 | 4) + varint(95 << 3 | 4))


def test_unknown_fields_of_every_wire_type_are_skipped_at_every_level(tmp_path):
    plain = VALID + bytes_field(2, varint_field(3, 2)) + bytes_field(3, string_field(1, "identity"))
    noisy = (UNKNOWN_FIELDS + _piece(b"<unk>", kind=2) + bytes_field(1, UNKNOWN_FIELDS + bytes_field(1, b"a")
             + float_field(2, -1.0)) + bytes_field(2, UNKNOWN_FIELDS + varint_field(3, 2))
             + bytes_field(3, string_field(1, "identity") + UNKNOWN_FIELDS) + UNKNOWN_FIELDS)
    (tmp_path / "plain.model").write_bytes(plain)
    (tmp_path / "noisy.model").write_bytes(noisy)
    model = read_sentencepiece_model(tmp_path / "plain.model")
    assert read_sentencepiece_model(tmp_path / "noisy.model") == model
    assert model.pieces == (Piece("<unk>", -1.0, "unknown"), Piece("a", -1.0, "normal"))
    assert (model.model_type, model.normalizer.name, model.normalizer.add_dummy_prefix) == ("bpe", "identity", True)


def test_a_message_given_twice_is_merged_and_the_last_scalar_wins(tmp_path):
    data = (VALID + bytes_field(2, varint_field(3, 2) + varint_field(35, 0)) + bytes_field(3, varint_field(3, 0))
            + bytes_field(2, varint_field(24, 1)) + bytes_field(3, string_field(1, "x")))
    (tmp_path / "m.model").write_bytes(data)
    model = read_sentencepiece_model(tmp_path / "m.model")
    assert (model.model_type, model.treat_whitespace_as_suffix) == ("bpe", True)
    assert model.normalizer == NormalizerSpec(name="x", add_dummy_prefix=False)


# --- random damage ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_model_bytes(sentencepiece_models, tmp_path_factory):
    """A real model, with a small charsmap of its own so that damage reaches the trie often."""
    model = read_sentencepiece_model(sentencepiece_models.path("unigram-nmt_nfkc"))
    rules = [("\u3000", " "), ("ｓ", "s"), ("e\u0301", "\u00e9"), ("ﬁ", "fi"), ("\x01", ""), ("<\u0338", "\u226e")]
    spec = sentencepiece.SentencePieceNormalizer(norm_map=rules).serialized_normalizer_spec()
    charsmap = dict((n, v) for n, _, v in MessageReader(spec, "spec", "", {}))[2]
    model = dataclasses.replace(model, pieces=model.pieces[:300],
                                normalizer=dataclasses.replace(model.normalizer, precompiled_charsmap=charsmap))
    path = tmp_path_factory.mktemp("small") / "small.model"
    write_sentencepiece_model(path, model)
    return path.read_bytes()


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


DAMAGE = st.lists(st.tuples(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]),
                            st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=4)


def _damaged(data: bytes, edits) -> bytes:
    data = bytearray(data)
    for kind, where, value in edits:
        at = int(where * len(data))
        if kind == "flip" and data:
            data[at] ^= 1 << (value % 8)
        elif kind == "set" and data:
            data[at] = value
        elif kind == "insert":
            data[at:at] = bytes([value]) * (1 + value % 3)
        elif kind == "delete":
            del data[at:at + 1 + value % 4]
        elif kind == "truncate":
            del data[at:]
    return bytes(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=DAMAGE)
def test_damaged_files_load_or_raise_tokenizer_file_error(small_model_bytes, tmp_path, edits):
    path = tmp_path / "damaged.model"
    path.write_bytes(_damaged(small_model_bytes, edits))
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(10)  # a read and a normalize take milliseconds
    try:
        model = read_sentencepiece_model(path)
        model_normalizer(model, str(path)).normalize("a\u3000ｓe\u0301 <sep>ﬁ\x01 <\u0338")
    except TokenizerFileError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(f"{path}: ")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
