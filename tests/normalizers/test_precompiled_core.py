"""tokfx._precompiled (the Precompiled normalizer of a tokenizer.json, natively) against its twin,
tokfx.reference.precompiled (the rule over UAX #29's cluster regex), and against `tokenizers`' own
Precompiled normalizer: on fuzzed text of every script (combining marks, emoji ZWJ and modifier
sequences, flags, Hangul jamo, CRLF, Indic conjuncts, Prepend and SpacingMark characters), on
every pair and triple of grapheme classes, and on the corpora. Two charsmaps: sentencepiece's
nmt_nfkc, and one of our own whose rules mark each character (c -> c|), so that a cluster cut
elsewhere changes the text (a cluster under 6 bytes keeps its first character's mark only).
The whole T5-like tokenizer.json against `tokenizers` is in tests/formats/test_huggingface.py."""
from functools import lru_cache

import pytest
import regex
import sentencepiece
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import normalizers

from conftest import ASSIGNED, CORPUS_FILES, corpus_text
from tokfx._precompiled import GRAPHEME_CLUSTER_BREAKS, INDIC_CONJUNCT_BREAKS, PICTOGRAPHIC, PrecompiledCore
from tokfx.formats.protobuf_wire import MessageReader
from tokfx.normalizers.charsmap import decode_charsmap
from tokfx.normalizers.grapheme_classes import grapheme_classes
from tokfx.reference.precompiled import precompiled

# What grapheme clusters are made of, from many scripts; each one also gets a rule in MARKED.
_PIECES = [
    "a", "Z", "5", " ", ".", "\r", "\n", "\t", "\x00", "\x7f", "\x85",
    "\u0301", "\u0308", "\u20dd", "\u200c", "\u200d", "\ufe0f", "\U000e0041",  # marks, joiners, a tag
    "\U0001f468", "\U0001f469", "\U0001f467", "\u2764", "\U0001f3fb", "\U0001f44d", "\u00a9",  # emoji
    "\U0001f1ef", "\U0001f1f5", "\U0001f1fa",  # regional indicators
    "\u1100", "\u1161", "\u11a8", "\uac00", "\uac01", "\ud7b0", "\ud7cb",  # Hangul L V T LV LVT
    "\u0915", "\u094d", "\u0937", "\u093f", "\u0903", "\u09cd", "\u0995", "\u0bcd", "\u0b95",  # Indic
    "\u17d2", "\u1780", "\u0e33", "\u0e01",  # Khmer coeng, Thai
    "\u0600", "\u0605", "\u0627", "\u064b", "\U000110bd",  # Prepend, Arabic
    "\u05d0", "\u05b4", "\u0410", "\u03b1", "\u0342",  # Hebrew, Cyrillic, Greek
    "\uff21", "\uff76", "\uff9e", "\ufb01", "\u2460", "\u3000", "\u00a0", "\u3399", "\u2126", "\u1e9b",
    "\u4e2d", "\u6587", "\u3002", "\uff0c", "\u3042", "\U00020000", "\U0001d400", "\U0010fffd",
]
TEXTS = st.lists(st.one_of(st.sampled_from(_PIECES + ["\r\n", "e\u0301", "\U0001f468\u200d\U0001f469"]), ASSIGNED),
                 max_size=30).map("".join)


def _charsmap(**arguments) -> bytes:
    spec = sentencepiece.SentencePieceNormalizer(**arguments).serialized_normalizer_spec()
    return dict((number, value) for number, _, value in MessageReader(spec, "spec", "", {})).get(2, b"")


@lru_cache(maxsize=None)
def charsmap(name: str) -> bytes:
    if name == "nmt_nfkc":
        return _charsmap(rule_name="nmt_nfkc")
    # Each piece marked, and keys of several characters (a mark after a letter, a jamo pair).
    rules = [(c, c + "|") for c in _PIECES if c != "\x00"] + [("e\u0301", "\u00e9|"), ("\u1100\u1161", "\uac00|")]
    return _charsmap(norm_map=rules)


CHARSMAPS = ["nmt_nfkc", "marked"]


@lru_cache(maxsize=None)
def core(name: str):
    return PrecompiledCore(charsmap(name), grapheme_classes()).normalize


@lru_cache(maxsize=None)
def rules(name: str) -> dict[str, str]:
    return decode_charsmap(charsmap(name), name)


@lru_cache(maxsize=None)
def tokenizers_normalizer(name: str):
    return normalizers.Precompiled(charsmap(name))


@pytest.mark.parametrize("name", CHARSMAPS)
@settings(max_examples=1500, deadline=None)
@given(text=TEXTS)
def test_the_core_is_its_twin(name, text):
    assert core(name)(text) == precompiled(text, rules(name))


@pytest.mark.parametrize("name", CHARSMAPS)
@settings(max_examples=500, deadline=None)
@given(text=TEXTS)
def test_the_core_normalizes_as_tokenizers(name, text):
    assert core(name)(text) == tokenizers_normalizer(name).normalize_str(text)


def _representatives() -> list[str]:
    """One code point of each class byte there is, the first one."""
    classes, first = grapheme_classes(), {}
    for code, value in enumerate(classes):
        if not 0xD800 <= code < 0xE000:
            first.setdefault(value, chr(code))
    return list(first.values())


def test_every_pair_and_triple_of_grapheme_classes():
    """Each boundary rule with each class on either side (and one before: GB9c, GB11, GB12
    look back), every character marked (its own rule): the clusters show in the output."""
    chars = _representatives()
    values = [grapheme_classes()[ord(c)] for c in chars]
    assert {v & 0x0F for v in values} == set(range(len(GRAPHEME_CLUSTER_BREAKS)))
    assert {v & 0x60 for v in values} == {0, *INDIC_CONJUNCT_BREAKS.values()} and any(v & PICTOGRAPHIC for v in values)
    marks = [(c, c + "|") for c in chars if c != "\x00"]
    blob = _charsmap(norm_map=marks)
    ours, twin_rules = PrecompiledCore(blob, grapheme_classes()).normalize, decode_charsmap(blob, "marks")
    peer = normalizers.Precompiled(blob)
    for a in chars:
        for b in chars:
            for text in [a + b] + [a + b + c for c in chars]:
                assert ours(text) == precompiled(text, twin_rules) == peer.normalize_str(text), ascii(text)


def test_a_linker_joins_a_consonant_only_after_a_consonant():
    """GB9c as UAX #29 and tokenizers have it, where regex's \\X joins " \u094d\u0915" whole."""
    for text in [" \u094d\u0915", "\u094d\u0915", "a\u0301\u094d\u0915", "\u0915\u094d\u0915", "\u0915\u0301\u094d\u200d\u0915"]:
        assert core("marked")(text) == precompiled(text, rules("marked")) == tokenizers_normalizer("marked").normalize_str(text)


@pytest.mark.parametrize("relative", CORPUS_FILES)
def test_corpora(relative):
    text = corpus_text(relative)[:300_000]
    assert core("nmt_nfkc")(text) == precompiled(text, rules("nmt_nfkc"))


@settings(max_examples=3000, deadline=None)
@given(char=st.characters(exclude_categories=("Cs",)))
def test_class_bytes_are_regex_properties(char):
    value = grapheme_classes()[ord(char)]
    expected_break = next((i for i, name in enumerate(GRAPHEME_CLUSTER_BREAKS)
                           if regex.fullmatch(rf"\p{{Grapheme_Cluster_Break={name}}}", char)))
    assert value & 0x0F == expected_break
    assert bool(value & PICTOGRAPHIC) == bool(regex.fullmatch(r"\p{Extended_Pictographic}", char))
    incb = next((bits for name, bits in INDIC_CONJUNCT_BREAKS.items()
                 if regex.fullmatch(rf"\p{{Indic_Conjunct_Break={name}}}", char)), 0)
    assert value & 0x60 == incb


def test_the_text_itself_when_nothing_changes():
    text = "nothing to rewrite here, 中文 too"
    assert core("nmt_nfkc")(text) is text
    assert core("nmt_nfkc")("") == ""


def test_a_key_is_read_up_to_a_nul_as_tokenizers_reads_it():
    """The spm_precompiled crate stops its search at a NUL byte; NUL starts no key."""
    for name in CHARSMAPS:
        for text in ["\x00", "a\x00\u0301", "\x00\uff21"]:
            assert core(name)(text) == precompiled(text, rules(name)) == tokenizers_normalizer(name).normalize_str(text)
