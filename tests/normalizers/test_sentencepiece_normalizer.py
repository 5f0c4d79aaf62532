"""SentencePieceNormalizer normalizes exactly as sentencepiece does: its shipped rule sets with
every whitespace setting, rule sets of our own (runs of spaces and deletions in the
replacements), and the models trained by sentencepiece (user-defined symbols go before the
rules; treat_whitespace_as_suffix), on fuzzed text and on every corpus file line by line. A
malformed charsmap is one TokenizerFileError, in bounded time."""
import re
import signal
import struct
import time

import pytest
import sentencepiece
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import CORPUS_FILES, corpus_text, fixture_path
from sentencepiece_models import FIXTURE_TEXTS, MODELS, TEXT
from tokfx.formats.protobuf_wire import MessageReader
from tokfx.normalizers.charsmap import decode_charsmap
from tokfx.formats.sentencepiece_model import read_sentencepiece_model
from tokfx.formats.sentencepiece_tokenizer import model_normalizer
from tokfx.formats.untrusted import TokenizerFileError
from tokfx.limits import MAX_CHARSMAP_TRIE_NODES
from tokfx.normalizers import SentencePieceNormalizer
from tokfx.normalizers.surrogates import replace_lone_surrogates

RULE_NAMES = ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity"]
# (add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces)
FLAGS = [(True, True, True), (False, True, True), (True, False, True), (True, True, False), (False, False, False)]
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _charsmap(reference: sentencepiece.SentencePieceNormalizer) -> bytes:
    spec = reference.serialized_normalizer_spec()
    return dict((number, value) for number, _, value in MessageReader(spec, "spec", "", {})).get(2, b"")


_normalizers = {}


def _pair(rule_name: str, flags: tuple) -> tuple:
    """(sentencepiece's normalizer, ours) for a shipped rule set, built once."""
    if (rule_name, flags) not in _normalizers:
        keywords = dict(zip(["add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"], flags))
        reference = sentencepiece.SentencePieceNormalizer(rule_name=rule_name, **keywords)
        _normalizers[rule_name, flags] = reference, SentencePieceNormalizer(_charsmap(reference), *flags)
    return _normalizers[rule_name, flags]


def _expected(reference, text: str) -> str:
    """sentencepiece's normalization; it cannot be given a lone surrogate, which we read as
    U+FFFD."""
    return reference.normalize(replace_lone_surrogates(text))


@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("rule_name", RULE_NAMES)
@SETTINGS
@given(text=TEXT)
def test_shipped_rules_normalize_fuzzed_text_as_sentencepiece(rule_name, flags, text):
    reference, ours = _pair(rule_name, flags)
    assert ours.normalize(text) == _expected(reference, text)


@pytest.fixture(scope="module")
def model_pair(sentencepiece_models):
    """(sentencepiece's processor, our normalizer) of a trained model, built once."""
    pairs = {}

    def pair(name):
        if name not in pairs:
            model = read_sentencepiece_model(sentencepiece_models.path(name))
            pairs[name] = sentencepiece_models.processor(name), model_normalizer(model)
        return pairs[name]
    return pair


@pytest.mark.parametrize("name", MODELS)
@SETTINGS
@given(text=TEXT)
def test_models_normalize_fuzzed_text_as_sentencepiece(model_pair, name, text):
    processor, ours = model_pair(name)
    assert ours.normalize(text) == _expected(processor, text)


# Rule sets of our own: keys and replacements over a few characters, so that they overlap, run
# into each other and into user symbols; replacements that are empty, start or end with spaces
# or hold runs of them (which sentencepiece keeps inside a replacement).
RULE_ALPHABET = ["a", "b", "c", " ", "\u3000", "\u2581", "\u0301", "e"]
RULES = st.dictionaries(st.text(st.sampled_from(RULE_ALPHABET), min_size=1, max_size=3),
                        st.text(st.sampled_from(RULE_ALPHABET + ["x"]), max_size=4), min_size=1, max_size=8)
RULE_TEXT = st.lists(st.sampled_from(RULE_ALPHABET + ["x", "  ", "\t"]), max_size=14).map("".join)


@SETTINGS
@given(rules=RULES, flags=st.sampled_from(FLAGS), text=RULE_TEXT)
def test_rules_of_our_own_normalize_as_sentencepiece(rules, flags, text):
    rules = {key: value for key, value in rules.items() if key != value}  # sentencepiece refuses those
    assume(rules)
    keywords = dict(zip(["add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"], flags))
    reference = sentencepiece.SentencePieceNormalizer(norm_map=sorted(rules.items()), **keywords)
    ours = SentencePieceNormalizer(_charsmap(reference), *flags)
    assert decode_charsmap(_charsmap(reference), "rules") == rules
    assert ours.normalize(text) == reference.normalize(text)


@SETTINGS
@given(rules=RULES, symbols=st.lists(st.text(st.sampled_from(RULE_ALPHABET + ["x"]), min_size=1, max_size=3),
                                     max_size=3), suffix=st.booleans(), flags=st.sampled_from(FLAGS), text=RULE_TEXT)
def test_the_core_equals_the_walk_over_pieces(rules, symbols, suffix, flags, text):
    """With random user symbols and either side for the dummy space: normalize (the C core, or
    without rules and symbols a few str operations) and the core itself equal the walk over
    pieces (Normalizer::Normalize transliterated, which the tests above check against
    sentencepiece), and a piece is the longest user symbol at its position, else the longest
    key, else one character."""
    rules = {key: value for key, value in rules.items() if key != value}
    charsmap = _charsmap(sentencepiece.SentencePieceNormalizer(norm_map=sorted(rules.items()))) if rules else b""
    ours = SentencePieceNormalizer(charsmap, *flags, treat_whitespace_as_suffix=suffix, user_defined_symbols=symbols)
    walked = ours._normalize_pieces(ours.pieces(text))
    assert ours.normalize(text) == walked
    assert ours._core.normalize(text) == walked  # normalize takes str operations where no rules or symbols
    assert ours.normalize_utf8(text) == ours._core.normalize_utf8(text) == walked.encode("utf-8")
    at, pieces = 0, list(ours.pieces(text))
    for piece in pieces:
        symbol = max((s for s in symbols if text.startswith(s, at)), key=len, default=None)
        key = max((k for k in rules if text.startswith(k, at)), key=len, default=None)
        taken = symbol or key or text[at]
        assert piece == (symbol or rules.get(key, text[at]))
        at += len(taken)
    assert at == len(text)


EDGE_CASES = [  # (rule name, flags, text, what sentencepiece gives)
    ("nmt_nfkc", FLAGS[0], "", ""),
    ("nmt_nfkc", FLAGS[0], "   ", ""),                      # only spaces: nothing, no dummy prefix
    ("nmt_nfkc", FLAGS[0], "\t\n\r\u3000\u00a0", ""),       # all spaces once the rules have run
    ("nmt_nfkc", FLAGS[0], "\x01\x7f", ""),                 # controls deleted; the prefix goes too
    ("nmt_nfkc", FLAGS[0], "\ufffd", ""),                   # U+FFFD is a space to nmt_nfkc
    ("nmt_nfkc", FLAGS[0], "\ud800a", "\u2581a"),           # a lone surrogate is read as U+FFFD
    ("nmt_nfkc", FLAGS[0], " a  b\t\tc ", "\u2581a\u2581b\u2581c"),
    ("nmt_nfkc", FLAGS[0], "a\u2581", "\u2581a"),           # "▁" is a space to nmt_nfkc
    ("nmt_nfkc", FLAGS[0], "ｓｔ\u3000e\u0301", "\u2581st\u2581\u00e9"),
    ("nmt_nfkc", FLAGS[0], "a\u00a8", "\u2581a\u2581\u0308"),  # a replacement starting with a space
    ("nfkc", FLAGS[0], "\x01\t", "\u2581\x01\t"),           # nfkc keeps controls and tabs
    ("identity", FLAGS[0], "\u2581a\u2581 \u2581", "\u2581\u2581a"),  # the text's own "▁" kept, but not at the end
    ("identity", FLAGS[2], "  a  ", "\u2581\u2581\u2581a\u2581\u2581"),      # nothing removed
    ("identity", FLAGS[2], " ", "\u2581\u2581"),
    ("identity", FLAGS[4], " a ", " a "),
    ("nmt_nfkc", FLAGS[3], " a  b ", " a b"),                # not escaped: plain spaces, trimmed
]


@pytest.mark.parametrize("rule_name, flags, text, expected", EDGE_CASES)
def test_edge_cases(rule_name, flags, text, expected):
    reference, ours = _pair(rule_name, flags)
    assert ours.normalize(text) == expected == _expected(reference, text)


FULLWIDTH = "".join(chr(c) for c in range(0xFF21, 0xFF3B))  # Ａ..Ｚ, which nmt_nfkc makes A..Z


@pytest.mark.parametrize("text", [
    "ａｂ ab" * 50,                     # keys and plain characters by turns
    FULLWIDTH * 3,                       # keys only
    "plain text, " * 30 + FULLWIDTH,     # long runs of characters that are their own pieces, then keys
    "e\u0301 ae\u0301e" * 20,             # ASCII letters that start NFKC's compositions, before a mark
])
def test_keys_among_plain_characters(text):
    reference, ours = _pair("nmt_nfkc", FLAGS[0])
    assert ours.normalize(text) == reference.normalize(text)



# Chinese text as the core's shortcuts see it: runs of 3-byte characters that are their own
# pieces, characters that are keys of their own with a short replacement (full-width
# punctuation, "…" of 3 bytes, 2-byte ones, U+009F deleted; U+3000, U+00A0, U+200B become a
# space, so they take NormalizePrefix's way), ones that start longer keys (コ + ﾞ, e + U+0301),
# spaces, ASCII next to them, and user symbols whose first byte is that of plain characters
# ("中文" and "文" share E6).
CJK_PARTS = ["中", "文", "字", "。", "，", "：", "！", "…", "\u3000", "\u00a0", "\u200b", "\x9f", "²", "é", "コ",
             "ﾞ", "e", "\u0301", "a", " ", "  ", "ｓ", "𝐀"]
CJK_TEXT = st.lists(st.sampled_from(CJK_PARTS), max_size=30).map("".join)


@pytest.mark.parametrize("rule_name", ["nmt_nfkc", "nfkc_cf"])
@SETTINGS
@given(flags=st.sampled_from(FLAGS), text=CJK_TEXT)
def test_chinese_text_normalizes_as_sentencepiece(rule_name, flags, text):
    reference, ours = _pair(rule_name, flags)
    assert ours.normalize_utf8(text) == _expected(reference, text).encode("utf-8")


_with_symbols = {}


@pytest.mark.parametrize("symbols", [("中文", "，，"), ("文", "é"), ("ab",)])
@SETTINGS
@given(flags=st.sampled_from(FLAGS), suffix=st.booleans(), text=CJK_TEXT)
def test_chinese_text_with_user_symbols_is_the_walk_over_pieces(symbols, flags, suffix, text):
    """nmt_nfkc with user symbols (which sentencepiece's normalizer alone does not take) and
    either side for the dummy space: the core equals the walk over pieces."""
    key = symbols, flags, suffix
    if key not in _with_symbols:  # built once: decoding nmt_nfkc's rules in Python takes half a second
        _with_symbols[key] = SentencePieceNormalizer(_charsmap(_pair("nmt_nfkc", flags)[0]), *flags,
                                                     treat_whitespace_as_suffix=suffix, user_defined_symbols=symbols)
    ours = _with_symbols[key]
    assert ours._core.normalize(text) == ours._normalize_pieces(ours.pieces(text))


@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("text", ["x" * 700, "ab x  " * 150 + "x", "\u00e9x" * 300])
def test_replacements_many_times_longer_than_their_keys(flags, text):
    """The core writes ahead into a buffer of 3 bytes per input byte and grows it only for a
    replacement: keys that each become 40 bytes (spaces among them) must grow it, many times."""
    keywords = dict(zip(["add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"], flags))
    reference = sentencepiece.SentencePieceNormalizer(norm_map=[("x", "long  replacement " * 2 + "ends")], **keywords)
    ours = SentencePieceNormalizer(_charsmap(reference), *flags)
    assert len(ours.normalize_utf8(text)) > 3 * len(text.encode("utf-8")) + 6  # past the first buffer
    assert ours.normalize_utf8(text) == reference.normalize(text).encode("utf-8")
    assert ours.normalize(text) == reference.normalize(text)

def test_the_suffix_tells_deleted_characters_from_spaces(model_pair):
    """With treat_whitespace_as_suffix, text of spaces alone gives "", but text that the rules
    delete gives the suffix alone."""
    processor, ours = model_pair("unigram-suffix-nmt_nfkc_cf")
    for text, expected in [(" ", ""), ("\x01", "\u2581"), (" \x01 ", "\u2581"), ("a b", "a\u2581b\u2581"),
                           ("\t", "\t\u2581"), ("a  b", "a\u2581\u2581b\u2581")]:  # user symbols "\t", "a  b"
        assert ours.normalize(text) == expected == processor.normalize(text)


def test_no_charsmap_is_the_identity():  # as in sentencepiece, an empty charsmap has no rules
    ours = SentencePieceNormalizer(b"")
    assert ours.is_identity and not SentencePieceNormalizer(_charsmap(_pair("nfkc", FLAGS[0])[0])).is_identity
    assert ours.normalize(" a\tｓ  b ") == "\u2581a\tｓ\u2581b"


def _corpus_lines(name: str) -> list[str]:
    text = (fixture_path(name).read_text(encoding="utf-8") if name in FIXTURE_TEXTS else corpus_text(name))
    return text.split("\n")  # "\r" kept: CRLF files end their lines with it


@pytest.mark.parametrize("model", ["shared-unigram-nmt_nfkc", "unigram-suffix-nmt_nfkc_cf", "bpe-identity-keep-spaces"])
@pytest.mark.parametrize("corpus", FIXTURE_TEXTS + CORPUS_FILES)
def test_every_corpus_line_normalizes_as_in_sentencepiece(model_pair, model, corpus):
    processor, ours = model_pair(model)
    lines = _corpus_lines(corpus)
    assert [ours.normalize(line) for line in lines] == processor.normalize(lines)
    assert ours.normalize("\n".join(lines)) == processor.normalize("\n".join(lines))


# --- malformed charsmaps ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def nmt_nfkc() -> bytes:
    return _charsmap(_pair("nmt_nfkc", FLAGS[0])[0])


def _blob(units: list[int], pool: bytes) -> bytes:
    return struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + pool


def _unit(label: int, base: int, position: int, leaf: bool = False) -> int:
    """A unit at `position` with this label whose children are at `base` ^ label."""
    return (position ^ base) << 10 | leaf << 8 | label


VALUE = 1 << 31  # a value unit (of value 0), which no byte matches: what fills the unused units


def _a_to_b(key_byte: int = 97, base: int = 512, size: int = 513) -> list[int]:
    """A trie of one key, one byte: the root (base 256) leads by `key_byte` to the unit at
    256 ^ key_byte, whose value (0: the pool's first string) sits at its base."""
    units = [VALUE] * size
    units[0] = _unit(0, 256, 0)
    units[256 ^ key_byte] = _unit(key_byte, base, 256 ^ key_byte, leaf=True)
    return units


def test_a_hand_built_charsmap_decodes():
    assert decode_charsmap(_blob(_a_to_b(), b"b\0"), "m.model") == {"a": "b"}
    assert SentencePieceNormalizer(_blob(_a_to_b(), b"b\0")).normalize("a ab") == "\u2581b\u2581bb"


def _diamonds(depth: int) -> list[int]:
    """Each level's node leads by "a" and by "b" to the same next node: 2^depth keys in
    2 * depth + 1 units."""
    units = [VALUE] * (256 * (depth + 2))
    units[0] = _unit(0, 256, 0)
    for level in range(depth):
        base, following = 256 * (level + 1), 256 * (level + 2)
        for label in (97, 98):
            units[base ^ label] = _unit(label, following, base ^ label, leaf=True)
    return units


@pytest.mark.parametrize("blob, message", [
    (b"\x04\x00\x00\x00", r"4 bytes: shorter than its header"),
    (struct.pack("<I", 8) + b"\x00" * 5, r"a trie of 8 bytes: expected a positive multiple of 4 within the 5"),
    (struct.pack("<I", 6) + b"\x00" * 8, r"a trie of 6 bytes"),
    (struct.pack("<I", 0) + b"\x00" * 8, r"a trie of 0 bytes"),
    (_blob(_a_to_b()[:-1] + [VALUE | 7], b"b\0"), r"a value 7 points past the end of the 2-byte pool"),
    (_blob(_a_to_b(), b"bb"), r"the replacement at 0 has no NUL after it"),
    (_blob(_a_to_b(), b"\xff\0"), r"the replacement at 0 is not UTF-8 at byte 0"),
    (_blob(_a_to_b(0xE4), b"b\0"), r"a key is not UTF-8 at byte 0: b'\\xe4'"),
    (_blob(_a_to_b(base=256), b"b\0"), r"a key longer than 1,024 bytes \(a loop\?\)"),
    (_blob(_a_to_b(base=4096), b"b\0"), r"unit 353: its value is past the end of the trie"),
    (_blob(_diamonds(30), b"b\0"), rf"more than {MAX_CHARSMAP_TRIE_NODES:,} nodes"),
])
def test_each_fault_in_a_charsmap_is_one_error(blob, message):
    start = time.monotonic()
    with pytest.raises(TokenizerFileError, match=r"^m\.model: normalizer_spec\.precompiled_charsmap: .*" + message):
        SentencePieceNormalizer(blob, source="m.model")
    assert time.monotonic() - start < 10


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def _damage_is_refused_or_harmless(blob: bytes, edits: list[tuple[float, int]], seconds: int):
    data = bytearray(blob)
    for where, value in edits:
        data[int(where * len(data))] = value
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        SentencePieceNormalizer(bytes(data), source="m.model").normalize("a\u3000ｓe\u0301\x01 ﬁ <\u0338 가ㄱㅏ")
    except TokenizerFileError as exc:
        assert re.match(r"^m\.model: normalizer_spec\.precompiled_charsmap: [^\n]+$", str(exc))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


EDITS = st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(edits=EDITS)
def test_a_damaged_small_charsmap_is_refused_or_harmless(edits):
    rules = [("\u3000", " "), ("ｓ", "s"), ("e\u0301", "\u00e9"), ("ﬁ", "fi"), ("\x01", ""), ("<\u0338", "\u226e")]
    _damage_is_refused_or_harmless(_charsmap(sentencepiece.SentencePieceNormalizer(norm_map=rules)), edits, 10)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS)
def test_a_damaged_nmt_nfkc_charsmap_is_refused_or_harmless(nmt_nfkc, edits):
    _damage_is_refused_or_harmless(nmt_nfkc, edits, 20)
