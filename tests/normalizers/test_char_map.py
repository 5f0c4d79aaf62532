"""tokfx._char_map against its twin, tokfx.reference.char_map, on random texts and classes and
on the corpora with BertNormalizer's classes (test_huggingface_normalizers.py holds the
normalizers that use it to `tokenizers`)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ASSIGNED, corpus_text
from tokfx._char_map import char_map, first_member
from tokfx.normalizers import huggingface as hf
from tokfx.normalizers.code_point_sets import bitmap, code_point_bitmap
from tokfx.reference import char_map as twin

_CHARS = "a \t\n\x00\x85\u00a0\u3000中文\u0301é\U00020000\ufffd\u200b\U0010fffd"
TEXTS = st.text(st.one_of(st.sampled_from(_CHARS), ASSIGNED), max_size=40)
CLASSES = st.one_of(st.just(b""), st.sets(st.sampled_from([ord(c) for c in _CHARS]) | st.integers(0, 0x10FFFF),
                                          max_size=8).map(bitmap), st.binary(max_size=64))


@settings(max_examples=500, deadline=None)
@given(text=TEXTS, dropped=CLASSES, spaced=CLASSES, padded=CLASSES)
def test_char_map_is_its_twin(text, dropped, spaced, padded):
    assert char_map(text, dropped, spaced, padded) == twin.char_map(text, dropped, spaced, padded)
    assert first_member(text, padded) == twin.first_member(text, padded)


@pytest.mark.parametrize("relative", ["english/pg2701_moby_dick.txt", "chinese/hongloumeng.txt",
                                      "korean/nsmc_reviews_4M.txt"])
def test_bert_classes_on_corpora(relative):
    text = corpus_text(relative)[:200_000]
    classes = [code_point_bitmap(p) for p in (hf._BERT_DROPPED, hf.WHITESPACE, hf._BERT_CJK)]
    assert char_map(text, *classes) == twin.char_map(text, *classes)


def test_the_text_itself_when_nothing_changes():
    text = "nothing to map here"
    assert char_map(text, b"", bitmap([ord(" ")]), b"") is text
