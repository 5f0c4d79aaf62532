from collections import Counter

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tokfx import count_pretokens
from tokfx.pre_tokenizers.patterns import GPT2, PATTERNS
from tokfx.pre_tokenizers import PreTokenizer, resolve_pattern

EOT = "<|endoftext|>"


def test_longest_special_token_wins_where_two_overlap():
    pre = PreTokenizer("gpt2", [EOT, EOT + EOT])
    chunks = list(pre.specials.split(f"a{EOT}{EOT}b{EOT}c"))
    assert chunks == [("a", False), (EOT + EOT, True), ("b", False), (EOT, True), ("c", False)]


def test_special_tokens_never_reach_the_counts():
    text = f"Hello world!{EOT} Hello again{EOT}{EOT}"
    counts = count_pretokens(text, "gpt2", [EOT])
    expected = Counter(p.encode() for chunk in text.split(EOT) for p in regex.findall(GPT2, chunk))
    assert counts == expected
    assert not any(b"endoftext" in k for k in counts)


def test_without_special_tokens_the_marker_is_ordinary_text():
    counts = count_pretokens(f"a{EOT}b", "gpt2")
    assert counts == Counter(p.encode() for p in regex.findall(GPT2, f"a{EOT}b"))


def test_counts_over_many_texts_add_up():
    texts = ["the cat sat", " on the mat", "the end"]
    total = Counter()
    for t in texts:
        total.update(p.encode() for p in regex.findall(GPT2, t))
    assert count_pretokens(texts) == total


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_named_patterns_split_like_regex(name):
    text = "I'LL go: 12345 apples, ٣٤ pears\r\n\n  Привет мир 你好，世界 🙂🙂  end  "
    pre = PreTokenizer(name)
    # sentencepiece's pattern splits the text its normalizer wrote (spaces as U+2581).
    normalized = "\u2581" + text.replace(" ", "\u2581") if name == "sentencepiece" else text
    assert pre.pieces(text) == [p.encode() for p in regex.findall(PATTERNS[name], normalized)]


def test_user_regex_pattern():
    pre = PreTokenizer(r"\S+|\s+")
    assert pre.pieces("a bc  d") == [b"a", b" ", b"bc", b"  ", b"d"]
    assert pre.pattern_name is None


def test_unknown_pattern_name_is_refused():
    with pytest.raises(ValueError, match="unknown pattern name 'gpt3'"):
        resolve_pattern("gpt3")


def test_invalid_regex_is_refused():
    with pytest.raises(ValueError, match="invalid pattern regex"):
        resolve_pattern(r"(\p{L}+")


@pytest.mark.parametrize("text", [
    "abc\ndef\nghi", "a  \n  b\n\nc", "x\n", "\n", "no newline at all", f"p\n{EOT}\nq",
])
def test_safe_cut_keeps_the_pieces(text):
    pre = PreTokenizer("gpt2", [EOT])
    cut = pre.safe_cut(text)
    assert 0 <= cut <= len(text)
    if cut:
        assert pre.pieces(text[:cut]) + pre.pieces(text[cut:]) == pre.pieces(text)


# Texts where whitespace pieces end early (\s+(?!\S)) or absorb newlines, before numbers, marks,
# punctuation, letters and characters of no class the patterns name.
cut_texts = st.lists(st.sampled_from([" ", "  ", "\t", "\n", "\r\n", "\u3000", "a", "Ab", "é", "\u0301",
                                      "0", "123", "٣", "!", "'s", ".", "/", "$", "。", "中文", "ひ",
                                      "\x00", "\u200b", "\u2581"]), max_size=14).map("".join)
# Each chunk of sentencepiece's pattern gets a space in front from its normalizer, so no cut keeps
# its pieces (Tokenizer.encode_iterable refuses a tokenizer with a normalizer).
CUT_PATTERNS = sorted(PATTERNS.keys() - {"sentencepiece"})


def assert_cut_keeps_the_pieces(pre: PreTokenizer, text: str, cut: int) -> None:
    assert 0 <= cut <= len(text)
    assert pre.pieces(text[:cut]) + pre.pieces(text[cut:]) == pre.pieces(text)


@pytest.mark.parametrize("name", CUT_PATTERNS)
@settings(max_examples=200, deadline=None)
@given(text=cut_texts)
def test_safe_cut_keeps_the_pieces_of_every_pattern(name, text):
    pre = PreTokenizer(name)
    assert_cut_keeps_the_pieces(pre, text, pre.safe_cut(text))


@pytest.mark.parametrize("name", CUT_PATTERNS)
@settings(max_examples=200, deadline=None)
@given(text=cut_texts)
@example(text="  0 ")  # " ", " ", "0", " " under llama3, but "  " alone is one piece
@example(text="x \t 1 a")
def test_forced_safe_cut_keeps_the_pieces_of_every_pattern(name, text):
    pre = PreTokenizer(name)
    assert_cut_keeps_the_pieces(pre, text, pre.safe_cut(text, force=True))
