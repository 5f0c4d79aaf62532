"""Tokenizer against tiktoken built offline from the GPT-2 fixtures: same ids, exact round trips."""
import itertools
import multiprocessing

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ASSIGNED, CORPUS_FILES, corpus_path, fixture_path
import tokfx
from tokfx import Tokenizer
from tokfx.pre_tokenizers.patterns import GPT2

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def gpt2():
    return Tokenizer.from_gpt2_files(fixture_path("gpt2_vocab.json"), fixture_path("gpt2_merges.txt"),
                                     [EOT])


@pytest.fixture(scope="module")
def tiktoken_gpt2(gpt2):
    ranks = {token: i for i, token in gpt2.vocab.items() if i != gpt2.token_to_id(EOT)}
    return tiktoken.Encoding(name="gpt2_fixture", pat_str=GPT2, mergeable_ranks=ranks,
                             special_tokens={EOT: 50256})


def _same_as_tiktoken(gpt2, reference, text):
    ids = gpt2.encode(text)
    assert ids == reference.encode(text, allowed_special="all")
    assert gpt2.decode(ids) == text


FIXTURE_TEXTS = ["address.txt", "german.txt", "tinystories_sample.txt",
                 "special_token_trailing_newlines.txt",
                 "special_token_double_newlines_non_whitespace.txt"]


@pytest.mark.parametrize("name", FIXTURE_TEXTS)
def test_fixture_texts_encode_like_tiktoken(gpt2, tiktoken_gpt2, name):
    _same_as_tiktoken(gpt2, tiktoken_gpt2, fixture_path(name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_files_encode_like_tiktoken(gpt2, tiktoken_gpt2, name):
    _same_as_tiktoken(gpt2, tiktoken_gpt2, corpus_path(name).read_bytes().decode("utf-8"))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ASSIGNED, max_size=200))  # conftest.ASSIGNED says why not every character
def test_fuzzed_text_encodes_like_tiktoken(gpt2, tiktoken_gpt2, text):
    _same_as_tiktoken(gpt2, tiktoken_gpt2, text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", " ", "\n", "  ", "'s", "12", "é", "你", "🙂", EOT, "<|end"]),
                max_size=40))
def test_special_tokens_anywhere_encode_like_tiktoken(gpt2, tiktoken_gpt2, parts):
    _same_as_tiktoken(gpt2, tiktoken_gpt2, "".join(parts))


def test_longest_special_token_wins_in_encoding():
    tok = Tokenizer.from_gpt2_files(fixture_path("gpt2_vocab.json"), fixture_path("gpt2_merges.txt"),
                                    [EOT, EOT + EOT])
    double = tok.token_to_id(EOT + EOT)
    assert tok.encode(f"a{EOT}{EOT}{EOT}") == tok.encode("a") + [double, tok.token_to_id(EOT)]


def test_encode_iterable_equals_encode_of_the_whole(gpt2):
    text = fixture_path("tinystories_sample.txt").read_text(encoding="utf-8") + "  tail \n\n x"
    lines = text.splitlines(keepends=True)
    assert list(gpt2.encode_iterable(lines)) == gpt2.encode(text)
    # Arbitrary cuts, not only at line ends.
    pieces = [text[i:i + 7] for i in range(0, len(text), 7)]
    assert list(gpt2.encode_iterable(pieces)) == gpt2.encode(text)


def test_encode_iterable_is_lazy(gpt2):
    endless = itertools.cycle(["Once upon a time.\n", "The end.\n"])
    first = list(itertools.islice(gpt2.encode_iterable(endless), 1000))
    assert len(first) == 1000


def test_encode_iterable_on_one_huge_line_stays_exact(gpt2):
    text = "word " * 300_000
    chunks = [text[i:i + 4096] for i in range(0, len(text), 4096)]
    assert list(gpt2.encode_iterable(chunks)) == gpt2.encode(text)


def test_encode_batch(gpt2):
    texts = ["hello world", "", EOT, "x y z"]
    assert gpt2.encode_batch(texts) == [gpt2.encode(t) for t in texts]


def test_decode_replaces_invalid_utf8(gpt2):
    ids = [gpt2.token_to_id(b"a"), gpt2.token_to_id(b"\xff"), gpt2.token_to_id(b"b")]
    assert gpt2.decode(ids) == "a\ufffdb"
    first_of_rare_char = gpt2.encode("\U0001d518")[:1]  # 4 UTF-8 bytes, not one token
    assert gpt2.decode(first_of_rare_char) == gpt2.id_to_token(first_of_rare_char[0]).decode(
        "utf-8", errors="replace")
    assert "\ufffd" in gpt2.decode(first_of_rare_char)
    assert gpt2.decode([]) == ""


def test_decode_refuses_unknown_ids(gpt2):
    with pytest.raises(ValueError, match="token id 50257 outside 0..50256"):
        gpt2.decode([1, 50257])
    with pytest.raises(ValueError, match="token id -1"):
        gpt2.decode([-1])


def test_vocabulary_lookups(gpt2):
    assert gpt2.vocab_size == 50257
    assert gpt2.token_to_id(EOT) == 50256
    assert gpt2.token_to_id(b" the") == gpt2.encode(" the")[0]
    assert gpt2.id_to_token(gpt2.token_to_id(b"hello")) == b"hello"
    with pytest.raises(KeyError):
        gpt2.id_to_token(10**6)


# --- lone surrogates: tiktoken replaces them by U+FFFD (joining valid pairs) before encoding ---
SURROGATE_TEXTS = ["a\ud800b", "\udfff", "x\ud83d\ude00y", "\ude00\ud83d", f"a\ud800{EOT}\udc00b",
                   "caf\u00e9 \ud800\ud800 \U0001f600\ud83d"]


@pytest.mark.parametrize("text", SURROGATE_TEXTS)
def test_lone_surrogates_encode_like_tiktoken(gpt2, tiktoken_gpt2, text):
    expected = tiktoken_gpt2.encode(text, allowed_special="all")
    assert gpt2.encode(text) == expected
    assert gpt2.encode_batch([text, text]) == [expected, expected]
    assert gpt2.encode_ordinary(text) == tiktoken_gpt2.encode_ordinary(text)
    assert list(gpt2.encode_iterable([text])) == expected
    assert gpt2.encode_to_array(text).tolist() == expected
    assert gpt2.encode_to_array(text, ordinary=True).tolist() == tiktoken_gpt2.encode_ordinary(text)


def test_training_reads_lone_surrogates_as_encoding_does():
    texts = ["caf\u00e9 \ud800 x\ud83d\ude00y " * 20, "\udfff and more"]
    replaced = [t.replace("\ud800", "\ufffd").replace("\ud83d\ude00", "\U0001f600").replace("\udfff", "\ufffd")
                for t in texts]
    assert tokfx.count_pretokens(texts) == tokfx.count_pretokens(replaced)
    assert tokfx.train(texts, vocab_size=280).merges == tokfx.train(replaced, vocab_size=280).merges


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from([EOT, "\n", " ", "é", "日本", "🙂", "'s"]), st.text(ASSIGNED, max_size=6)),
                max_size=12).map("".join))
def test_encode_to_array_is_encode_as_an_array(gpt2, tiktoken_gpt2, text):
    ids = gpt2.encode_to_array(text)
    assert ids.typecode == "i" and ids.tolist() == tiktoken_gpt2.encode(text, allowed_special="all")
    assert gpt2.encode_to_array(text, ordinary=True).tolist() == tiktoken_gpt2.encode_ordinary(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00",
                                           EOT, "\n", " "]),
                          st.text(ASSIGNED, max_size=5)), max_size=12),
       st.data())
def test_text_with_surrogates_encodes_like_tiktoken_however_it_is_cut(gpt2, tiktoken_gpt2, parts, data):
    text = "".join(parts)
    expected = tiktoken_gpt2.encode(text, allowed_special="all")
    assert gpt2.encode(text) == expected
    # encode_iterable over any cut of the text, a surrogate pair's halves in two pieces included.
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=4)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    assert list(gpt2.encode_iterable(pieces)) == expected


def _ids_in_a_spawned_process(tokenizer, text):
    return tokenizer.encode(text)


def test_a_tokenizer_crosses_to_a_spawned_process(gpt2, tiktoken_gpt2):
    # A spawned worker (macOS's and Windows' default) gets the tokenizer pickled.
    text = fixture_path("corpus.en").read_text(encoding="utf-8")[:50_000]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        ids = pool.apply(_ids_in_a_spawned_process, (gpt2, text))
    assert ids == tiktoken_gpt2.encode_ordinary(text)
