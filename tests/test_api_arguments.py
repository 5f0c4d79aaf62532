"""Misuse at the public boundary (tokfx.train, Tokenizer(...), encode, decode) is a TypeError or a
ValueError saying what to pass, raised before any work, never an error from deep inside."""
import time

import pytest

import tokfx
from tokfx import Tokenizer
from tokfx.limits import MAX_PATTERN_REPEATS, MAX_SPECIAL_TOKEN_BYTES

TEXTS = ["hello world, hello tokenizer", "the quick brown fox jumps over the lazy dog"]


@pytest.fixture(scope="module")
def tok():
    return tokfx.train(TEXTS, vocab_size=270)


@pytest.mark.parametrize("vocab_size", ["300", 300.5, 300.0, True, None, [300]])
def test_vocab_size_must_be_an_int(vocab_size):
    with pytest.raises(TypeError, match=r"vocab_size must be an int, got"):
        tokfx.train(TEXTS, vocab_size=vocab_size)


@pytest.mark.parametrize("vocab_size, message", [(100, "smaller than the alphabet"),
                                                 (10**9, "larger than")])
def test_vocab_size_must_be_in_range(vocab_size, message):
    with pytest.raises(ValueError, match=message):
        tokfx.train(TEXTS, vocab_size=vocab_size)


@pytest.mark.parametrize("params, message", [
    (dict(algorithm="pathpiece", initial_size="3000"), "algorithm 'pathpiece': initial_size must be an int or None, not '3000'"),
    (dict(algorithm="pathpiece", schedule=[400.0, 300]), "schedule must be a list of ints or None, not [400.0, 300]"),
    (dict(algorithm="unigram", shrinking_factor="0.5"), "shrinking_factor must be a number, not '0.5'"),
    (dict(algorithm="unigram", em_iterations=True), "em_iterations must be an int, not True"),
    (dict(algorithm="sage", seed=1.5), "algorithm 'sage': seed must be an int, not 1.5"),
    (dict(algorithm="sage", context=1), "context must be a string, not 1"),
])
def test_a_trainers_own_parameters_are_type_checked(params, message):
    with pytest.raises(TypeError) as info:
        tokfx.train(["hello world"] * 10, vocab_size=300, **params)
    assert str(info.value) == message or str(info.value).endswith(message)


def test_a_bare_string_of_special_tokens_is_refused_with_what_to_pass():
    with pytest.raises(TypeError, match=r"not a str: pass \['<\|endoftext\|>'\]"):
        tokfx.train(TEXTS, vocab_size=300, special_tokens="<|endoftext|>")


@pytest.mark.parametrize("special_tokens, error, message", [
    ([""], ValueError, r"special_tokens\[0\] is empty"),
    (["<a>", ""], ValueError, r"special_tokens\[1\] is empty"),
    (["<a>", "<a>"], ValueError, r"special_tokens\[1\] '<a>' is given twice"),
    (["<a>", 3], TypeError, r"special_tokens\[1\] must be a str, got int"),
    ([b"<a>"], TypeError, r"special_tokens\[0\] must be a str, got bytes"),
    (["\ud800"], ValueError, r"special_tokens\[0\] is not valid text"),
    (["x" * (MAX_SPECIAL_TOKEN_BYTES + 1)], ValueError, r"special_tokens\[0\] is .* bytes long"),
    (5, TypeError, "special_tokens must be a list of strings"),
])
def test_special_tokens_must_be_distinct_non_empty_strings(special_tokens, error, message):
    with pytest.raises(error, match=message):
        tokfx.train(TEXTS, vocab_size=300, special_tokens=special_tokens)
    with pytest.raises(error, match=message):
        tokfx.count_pretokens(TEXTS, special_tokens=special_tokens)


def test_tokenizer_arguments_are_checked(tok):
    tokens = [tok.id_to_token(i) for i in range(tok.vocab_size)]
    with pytest.raises(TypeError, match="special_tokens must be a mapping"):
        Tokenizer(tokens, tok.merge_ids, ["<|endoftext|>"])
    with pytest.raises(ValueError, match="unknown algorithm 'sentencepiece'"):
        Tokenizer(tokens, tok.merge_ids, tok.special_tokens, algorithm="sentencepiece")
    with pytest.raises(ValueError, match=r"merges\[0\] \(1\.0, 2, 3\): expected three ids"):
        Tokenizer(tokens, [(1.0, 2, 3)], tok.special_tokens)
    with pytest.raises(ValueError, match=r"max_width must be in 1\.\.65536, got 1000000000000"):
        tok.with_segmenter("greedy", max_width=10**12)


@pytest.mark.parametrize("ids, error, message", [
    ([1.5], TypeError, r"ids\[0\] is 1\.5 \(float\), not an int"),
    ([65, True], TypeError, r"ids\[1\] is True \(bool\), not an int"),
    (["3"], TypeError, r"ids\[0\] is '3' \(str\)"),
    ("abc", TypeError, "ids must be a sequence of ints, not str"),
    ([65, 10**6], ValueError, r"ids\[1\]: token id 1000000 outside 0\.\.269"),
    ([-1], ValueError, r"ids\[0\]: token id -1 outside"),
])
def test_decode_takes_ints_in_range(tok, ids, error, message):
    with pytest.raises(error, match=message):
        tok.decode(ids)


def test_decode_takes_integers_of_numpy(tok):
    numpy = pytest.importorskip("numpy")
    assert tok.decode(numpy.array([104, 105], dtype=numpy.int64)) == "hi"


@pytest.mark.parametrize("method", ["encode", "encode_ordinary"])
def test_encode_takes_a_str(tok, method):
    with pytest.raises(TypeError, match="text must be a str, not bytes"):
        getattr(tok, method)(b"hello")


# --- user patterns ----------------------------------------------------------------------------
def test_a_pattern_that_skips_characters_is_refused_before_training():
    with pytest.raises(ValueError, match=r"pattern '\\\\w\+' does not cover the text: it skips"):
        tokfx.train(TEXTS, vocab_size=300, pattern=r"\w+")


def test_a_pattern_that_skips_a_character_the_probe_lacks_fails_on_the_text_holding_it():
    # '#' is not in the construction-time probe, so this pattern is accepted; the check on every
    # text (guaranteed) still refuses it, in training and in encoding, naming the pattern.
    tok = tokfx.train(TEXTS, vocab_size=270, pattern=r"[^#]+")
    with pytest.raises(ValueError, match=r"pattern '\[\^#\]\+' does not cover the text: it skips '#b' at character 1"):
        tok.encode("a#b")
    with pytest.raises(ValueError, match="does not cover"):
        tokfx.train(["a#b"], vocab_size=270, pattern=r"[^#]+")


def test_a_catastrophic_pattern_fails_in_bounded_time_naming_it():
    # The probe has no run of b, so construction succeeds; encoding a run of b backtracks
    # exponentially and meets the timeout (1 s plus 1 microsecond per character).
    tok = tokfx.train(TEXTS, vocab_size=270, pattern=r"(b|bb)+$|\s+|[\s\S]")
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"pattern '\(b\|bb\)\+\$.*' ran for more than 1\.0 s on 41 characters"):
        tok.encode("b" * 40 + "!")
    assert time.monotonic() - start < 10


def test_a_catastrophic_pattern_the_probe_meets_is_refused_at_construction():
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"pattern '\(a\|aa\)\+\$\|\\\\s\+\|\.' ran for more than"):
        tokfx.train(TEXTS, vocab_size=300, pattern=r"(a|aa)+$|\s+|.")
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("pattern, message", [
    (r"((a{1000}){1000}){1000}|[\s\S]", f"counted repeats multiply to more than {MAX_PATTERN_REPEATS:,}"),
    ("a|" * 5000 + ".", "pattern of 10,001 characters: at most 4,096"),
    (r"(?:", "invalid pattern regex"),
])
def test_patterns_that_would_compile_without_bound_are_refused(pattern, message):
    with pytest.raises(ValueError, match=message):
        tokfx.train(TEXTS, vocab_size=300, pattern=pattern)


def test_legitimate_counted_repeats_and_groups_are_accepted():
    # A group does not make the pieces its captures: they are the whole matches.
    tok = tokfx.train(TEXTS, vocab_size=270, pattern=r"\p{N}{1,3}|\p{L}{1,100}|(\s)|[\s\S]")
    assert tok.decode(tok.encode("hello 12345")) == "hello 12345"
