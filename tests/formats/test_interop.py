"""GPT-2 vocab.json/merges.txt files and the Hugging Face tokenizer.json export, checked against
the fixtures, `tokenizers` and `tiktoken`."""
import json
import pytest
import regex
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from conftest import ASSIGNED, corpus_text, ends_of, fixture_path
from tokfx._bpe_encode import BPEEncoder
from tokfx.formats.gpt2 import read_gpt2_files, write_gpt2_files
from tokfx.formats.hf_json import hf_tokenizer_json
from tokfx.segmenters.bpe import byte_ids, merges_as_ids
from tokfx.pre_tokenizers.patterns import GPT2, PATTERNS

END_OF_TEXT = "<|endoftext|>"
END_OF_TEXT_ID = 50256


# --- GPT-2 files -------------------------------------------------------------------------------

@pytest.mark.parametrize("vocab_name, merges_name", [
    ("gpt2_vocab.json", "gpt2_merges.txt"),
    ("train-bpe-reference-vocab.json", "train-bpe-reference-merges.txt"),
])
def test_read_write_read_round_trip(vocab_name, merges_name, tmp_path):
    vocab, merges = read_gpt2_files(fixture_path(vocab_name), fixture_path(merges_name))
    write_gpt2_files(tmp_path, vocab, merges)
    assert read_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt") == (vocab, merges)


def test_gpt2_files_as_read_by_hand(gpt2_vocab_merges):
    vocab, merges = gpt2_vocab_merges
    assert len(vocab) == 50257 and len(merges) == 50000
    assert vocab[0] == b"!" and vocab[220] == b" " and vocab[198] == b"\n"
    assert vocab[END_OF_TEXT_ID] == END_OF_TEXT.encode()
    assert merges[0] == (b" ", b"t") and merges[-1] == (b" g", b"azed")


def test_written_files_match_the_fixtures_byte_for_byte(gpt2_vocab_merges, tmp_path):
    """merges.txt differs only by the `#version: 0.2` first line, which the fixture lacks and
    OpenAI's original has; vocab.json only in escaping, since the fixture escapes non-ASCII
    (`\\u0120`) where we write UTF-8."""
    write_gpt2_files(tmp_path, *gpt2_vocab_merges)
    fixture_merges = fixture_path("gpt2_merges.txt").read_bytes()
    assert (tmp_path / "merges.txt").read_bytes() == b"#version: 0.2\n" + fixture_merges
    written_vocab = (tmp_path / "vocab.json").read_text(encoding="utf-8")
    assert "Ġ" in written_vocab
    assert json.dumps(json.loads(written_vocab)).encode() == fixture_path("gpt2_vocab.json").read_bytes()


@pytest.fixture
def tiny_vocab_json(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_text(json.dumps({"a": 0, "b": 1, "ab": 2}), encoding="utf-8")
    return path


@pytest.mark.parametrize("merges_text, message", [
    ("#version: 0.2\na b\na b c\n", r"merges.txt:3: expected two tokens"),
    ("a b\nab\n", r"merges.txt:2: expected two tokens"),
    ("a  b\n", r"merges.txt:1: expected two tokens"),
    ("a b\nab x\n", r"merges.txt:2: \"x\" not in .*vocab.json"),
    ("a b\n#version: 0.2\n", r"merges.txt:2: \"#version:\" and \"0.2\" not in"),
])
def test_malformed_merges_name_file_and_line(merges_text, message, tiny_vocab_json):
    merges_txt = tiny_vocab_json.parent / "merges.txt"
    merges_txt.write_text(merges_text, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_gpt2_files(tiny_vocab_json, merges_txt)


@pytest.mark.parametrize("vocab_json, message", [
    ({"a b": 0}, "vocab.json: token \"a b\": has the character ' '"),
    ({"a": 0, "b": 0}, "vocab.json: token \"b\": id 0 belongs to two tokens, \"a\" and this one"),
    ({"a": "0"}, "vocab.json: token \"a\": expected an int, got \"0\""),
])
def test_malformed_vocab_is_refused(vocab_json, message, tmp_path):
    (tmp_path / "vocab.json").write_text(json.dumps(vocab_json), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt")


def test_blank_merges_lines_are_skipped(tiny_vocab_json):
    merges_txt = tiny_vocab_json.parent / "merges.txt"
    merges_txt.write_text("#version: 0.2\r\na b\r\n\r\n", encoding="utf-8", newline="")
    assert read_gpt2_files(tiny_vocab_json, merges_txt)[1] == [(b"a", b"b")]


# --- Hugging Face export, encoded by tokenizers vs tiktoken vs our encoder ---------------------

@pytest.fixture(scope="module")
def gpt2_three_ways(gpt2_vocab_merges):
    """GPT-2 as (tokenizers loaded from our export, tiktoken built offline, our BPEEncoder)."""
    vocab, merges = gpt2_vocab_merges
    exported = hf_tokenizer_json(vocab, merges, {END_OF_TEXT: END_OF_TEXT_ID}, GPT2)
    hf = Tokenizer.from_str(json.dumps(exported))
    tk = tiktoken.Encoding(
        name="gpt2_test", pat_str=GPT2,
        mergeable_ranks={token: token_id for token_id, token in vocab.items() if token_id != END_OF_TEXT_ID},
        special_tokens={END_OF_TEXT: END_OF_TEXT_ID})
    return hf, tk, BPEEncoder(merges_as_ids(vocab, merges), byte_ids(vocab))


def encode_with_bpe_encoder(text: str, encoder: BPEEncoder, special_tokens: dict[str, int],
                            pattern: str = GPT2) -> list[int]:
    """Split on the special tokens, then regex pieces -> BPEEncoder.encode_pieces."""
    if not special_tokens:
        chunks = [text]
    else:
        chunks = regex.split("(" + "|".join(map(regex.escape, special_tokens)) + ")", text)
    ids = []
    for chunk in chunks:
        if chunk in special_tokens:
            ids.append(special_tokens[chunk])
            continue
        pieces = [piece.encode("utf-8") for piece in regex.findall(pattern, chunk)]
        ids += encoder.encode_pieces(b"".join(pieces), ends_of(pieces))
    return ids


def assert_three_ways_agree(text, gpt2_three_ways):
    hf, tk, encoder = gpt2_three_ways
    ours = encode_with_bpe_encoder(text, encoder, {END_OF_TEXT: END_OF_TEXT_ID})
    assert hf.encode(text).ids == ours
    assert tk.encode(text, allowed_special={END_OF_TEXT}) == ours


@pytest.mark.parametrize("name", ["address.txt", "corpus.en", "german.txt", "tinystories_sample.txt",
                                  "special_token_trailing_newlines.txt",
                                  "special_token_double_newlines_non_whitespace.txt"])
def test_gpt2_export_on_fixture_texts(name, gpt2_three_ways):
    # newline="": keep \r\n, which the regex and BPE must handle like the peers do.
    with open(fixture_path(name), encoding="utf-8", newline="") as f:
        assert_three_ways_agree(f.read(), gpt2_three_ways)


CORPUS_FILES = ["english/pg2701_moby_dick.txt", "english/wikitext2_valid.txt", "chinese/hongloumeng.txt",
                "korean/nsmc_reviews_4M.txt", "sentencepiece/botchan.txt", "sentencepiece/wagahaiwa_nekodearu.txt"]


@pytest.mark.parametrize("relative", CORPUS_FILES)
def test_gpt2_export_on_corpus_files(relative, gpt2_three_ways):
    assert_three_ways_agree(corpus_text(relative)[:200_000], gpt2_three_ways)


# Characters where pre-tokenizers tend to differ: whitespace of every kind, apostrophes, digits,
# letters of several scripts, combining marks, emoji, and the special token itself.
TRICKY = [" ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u3000", "\u2028", "'s", "'ll", "'", "0", "12",
          "٣", "a", "Z", "é", "e\u0301", "ß", "中文", "한국", "ー", "🙂", "🏳️‍🌈", ".", "!?", END_OF_TEXT]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.one_of(st.sampled_from(TRICKY), st.text(ASSIGNED, max_size=8)), max_size=20)
       .map("".join))
def test_gpt2_export_on_fuzzed_text(text, gpt2_three_ways):
    assert_three_ways_agree(text, gpt2_three_ways)


@pytest.fixture(scope="module")
def hf_per_pattern(gpt2_vocab_merges):
    """tokenizers loaded from our export of GPT-2's vocabulary with each named pattern."""
    vocab, merges = gpt2_vocab_merges
    return {name: Tokenizer.from_str(json.dumps(hf_tokenizer_json(vocab, merges, {}, pattern)))
            for name, pattern in PATTERNS.items()}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PATTERNS)),
       text=st.lists(st.one_of(st.sampled_from(TRICKY + ["12345", "'S", "'LL", "Ab", "aB", "\r", "/"]),
                               st.text(ASSIGNED, max_size=4)), max_size=16).map("".join))
def test_export_splits_like_regex_for_every_named_pattern(name, text, hf_per_pattern, gpt2_three_ways):
    """The export must carry each pattern over to Oniguruma with its meaning (cl100k's `{1,3}+`)."""
    encoder, hf = gpt2_three_ways[2], hf_per_pattern[name]
    text = text.replace(END_OF_TEXT, "")
    # Pieces, not only ids: "12345" whole and "123" + "45" happen to give the same GPT-2 ids.
    hf_pieces = [text[start:end] for _, (start, end) in hf.pre_tokenizer.pre_tokenize_str(text)]
    assert hf_pieces == regex.findall(PATTERNS[name], text)
    assert hf.encode(text).ids == encode_with_bpe_encoder(text, encoder, {}, PATTERNS[name])


def test_tiny_vocab_with_a_special_token():
    """Ids that are not GPT-2's (bytes at 10..265), a gap before the special token, and merges
    that make a space-prefixed token."""
    vocab = {10 + b: bytes([b]) for b in range(256)}
    merges = [(b"a", b"b"), (b"ab", b"c"), (b" ", b"ab"), (b"c", b"c")]
    for token_id, (left, right) in enumerate(merges, start=300):
        vocab[token_id] = left + right
    special = {"<|pad|>": 400}
    hf = Tokenizer.from_str(json.dumps(hf_tokenizer_json(vocab, merges, special, GPT2)))
    encoder = BPEEncoder(merges_as_ids(vocab, merges), byte_ids(vocab))
    text = "abc ab abcc<|pad|>cccab\n\n<|pad|>"
    expected = encode_with_bpe_encoder(text, encoder, special)
    assert 400 in expected and 302 in expected and 300 in expected
    assert hf.encode(text).ids == expected
    assert hf.token_to_id("<|pad|>") == 400
    assert hf.decode(expected, skip_special_tokens=False) == text


def test_special_token_spelled_like_another_token_is_refused():
    vocab = {b: bytes([b]) for b in range(256)} | {256: b"<s>"}
    with pytest.raises(ValueError, match="spelled like token 256"):
        hf_tokenizer_json(vocab, [], {"<s>": 257}, GPT2)


def test_unigram_tokenizer_json_encodes_as_tokfx(tmp_path):
    import random

    from tokenizers import Tokenizer as HfTokenizer

    import tokfx
    from conftest import fixture_path

    english = fixture_path("corpus.en").read_text(encoding="utf-8")[:40_000]
    tok = tokfx.train(english, "unigram", vocab_size=600, pattern="gpt2")
    assert "tokenizer.json only" in tok.save(tmp_path)
    assert not (tmp_path / "merges.txt").exists()
    hf = HfTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    rng = random.Random(0)
    alphabet = list("abcdefghij klmnop ,.'\n\t0123") + ["é", "日本", "🙂", "<|endoftext|>", "  "]
    texts = [english[:5000]] + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
                                for _ in range(300)]
    for text in texts:
        assert hf.encode(text).ids == tok.encode(text), text
        assert hf.decode(tok.encode(text), skip_special_tokens=False) == text


def test_unigram_export_splits_whitespace_runs_as_tokenizers(tmp_path):
    """Runs of spaces that several tokens of spaces can cover (issue 26: HF gave ' ', '   ',
    ' ' where tokfx gave ' ', ' ', '   ', equal pieces in another order): the same path, as
    tokenizers' Viterbi picks it among equal scores."""
    import random

    from tokenizers import Tokenizer as HfTokenizer

    import tokfx

    rng = random.Random(0)
    english = fixture_path("corpus.en").read_text(encoding="utf-8")[:40_000]
    indented = "\n".join(" " * rng.choice([1, 2, 3, 4, 5, 8, 11]) + line for line in english.splitlines())
    tok = tokfx.train(indented, "unigram", vocab_size=600, pattern="gpt2")
    tok.save(tmp_path)
    runs = {len(t) for t in map(tok.decode, ([i] for i in range(tok.vocab_size))) if len(t) > 1 and not t.strip()}
    assert {2, 3, 4} <= runs  # the case needs tokens of spaces of several lengths
    hf = HfTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    pieces = ["cw", " ", "  ", "   ", "\n", "a", " the", "\t", "."]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14)))
        assert hf.encode(text).ids == tok.encode(text), repr(text)


@pytest.fixture(scope="module")
def unigram_pair(tmp_path_factory):
    """A Unigram tokenizer (likelihood) and tokenizers' reading of its tokenizer.json."""
    import tokfx

    tok = tokfx.train(fixture_path("corpus.en").read_text(encoding="utf-8")[:40_000], "unigram",
                      vocab_size=600, pattern="gpt2")
    directory = tmp_path_factory.mktemp("unigram")
    tok.save(directory)
    return tok, Tokenizer.from_file(str(directory / "tokenizer.json"))


@pytest.mark.parametrize("relative", CORPUS_FILES)
@pytest.mark.parametrize("pair", ["unigram_pair", "wordpiece_pair"])
def test_unigram_and_wordpiece_exports_on_corpus_files(pair, relative, request):
    tok, hf = request.getfixturevalue(pair)[:2]
    text = corpus_text(relative)[:100_000]
    assert hf.encode(text).ids == tok.encode(text)


@pytest.fixture(scope="module")
def wordpiece_pair(tmp_path_factory):
    """A WordPiece tokenizer (greedy) and tokenizers' reading of its tokenizer.json."""
    import tokfx
    from conftest import fixture_path

    english = fixture_path("corpus.en").read_text(encoding="utf-8")[:40_000]
    tok = tokfx.train(english, "wordpiece", vocab_size=1500, pattern="gpt2")
    directory = tmp_path_factory.mktemp("wordpiece")
    assert "tokenizer.json only" in tok.save(directory)
    assert not (directory / "merges.txt").exists()
    doc = json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))
    assert doc["model"]["type"] == "WordPiece" and doc["model"]["continuing_subword_prefix"] == ""
    return tok, Tokenizer.from_file(str(directory / "tokenizer.json")), english


def test_wordpiece_tokenizer_json_encodes_as_tokfx(wordpiece_pair):
    import random

    tok, hf, english = wordpiece_pair
    rng = random.Random(0)
    alphabet = list("abcdefghij klmnop ,.'\n\t0123") + ["é", "日本", "🙂", "<|endoftext|>", "  ", "the", "ing"]
    # A word far beyond tokenizers' default limit of 100 characters is spelled, not [UNK].
    texts = [english[:8000], "x" * 500 + "abc" * 100] + \
        ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(300)]
    for text in texts:
        assert hf.encode(text).ids == tok.encode(text), text
        assert hf.decode(tok.encode(text), skip_special_tokens=False) == text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.one_of(st.sampled_from(TRICKY), st.text(ASSIGNED, max_size=8)), max_size=20)
       .map("".join))
def test_wordpiece_tokenizer_json_on_fuzzed_text(text, wordpiece_pair):
    tok, hf, _ = wordpiece_pair
    assert hf.encode(text).ids == tok.encode(text)


def test_greedy_with_tokens_wider_than_max_width_is_refused(tmp_path):
    import tokfx
    from conftest import fixture_path

    english = fixture_path("corpus.en").read_text(encoding="utf-8")[:20_000]
    tok = tokfx.train(english, "bpe", vocab_size=400).with_segmenter("greedy", max_width=2)
    assert "no max_width" in tok.save(tmp_path)
    assert not (tmp_path / "tokenizer.json").exists()
    # The same vocabulary with every token in reach exports, and encodes alike.
    tok = tok.with_segmenter("greedy", max_width=16)
    assert tok.save(tmp_path / "wide") is not None
    hf = Tokenizer.from_file(str(tmp_path / "wide" / "tokenizer.json"))
    assert hf.encode(english[:5000]).ids == tok.encode(english[:5000])


@pytest.fixture(scope="module")
def hf_trained_unigram(tmp_path_factory):
    """A byte-level Unigram trained by tokenizers (UnigramTrainer, ByteLevel pre-tokenizer) on
    fixture text, saved, and imported into tokfx."""
    from tokenizers import decoders, models, pre_tokenizers, trainers

    import tokfx
    from conftest import fixture_path

    english = fixture_path("corpus.en").read_text(encoding="utf-8")[:60_000]
    hf = Tokenizer(models.Unigram())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.UnigramTrainer(vocab_size=800, special_tokens=[END_OF_TEXT],
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    hf.train_from_iterator(english.split("\n"), trainer)
    path = tmp_path_factory.mktemp("hf-unigram") / "tokenizer.json"
    hf.save(str(path))
    return hf, tokfx.Tokenizer.from_hf_unigram(path), english


def test_hf_unigram_import_encodes_as_tokenizers(hf_trained_unigram):
    import random

    hf, tok, english = hf_trained_unigram
    assert tok.vocab_size == hf.get_vocab_size() and tok.segmenter == "likelihood" and tok.pattern == "gpt2"
    assert tok.special_tokens == {END_OF_TEXT: hf.token_to_id(END_OF_TEXT)}
    rng = random.Random(1)
    alphabet = list("abcdefghij klmnop ,.'\n\t0123") + ["é", "日本", "🙂", END_OF_TEXT, "  ", "the", "ing"]
    texts = [english[:10_000]] + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
                                  for _ in range(300)]
    for text in texts:
        assert tok.encode(text) == hf.encode(text).ids, text
        assert tok.decode(tok.encode(text)) == text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.one_of(st.sampled_from(TRICKY), st.text(ASSIGNED, max_size=8)), max_size=20)
       .map("".join))
def test_hf_unigram_import_on_fuzzed_text(text, hf_trained_unigram):
    hf, tok, _ = hf_trained_unigram
    assert tok.encode(text) == hf.encode(text).ids


def test_our_unigram_export_reads_back(tmp_path):
    import tokfx
    from conftest import fixture_path

    english = fixture_path("corpus.en").read_text(encoding="utf-8")[:30_000]
    tok = tokfx.train(english, "unigram", vocab_size=500, pattern="cl100k")
    tok.save(tmp_path)
    again = tokfx.Tokenizer.from_hf_unigram(tmp_path / "tokenizer.json")
    assert again.pattern == "cl100k" and again.tokens == tok.tokens and again.scores == tok.scores
    assert again.encode(english) == tok.encode(english)


@pytest.mark.parametrize("change, message", [
    (lambda doc: doc["model"].update(type="BPE"), "model.type: .*its model is \"BPE\""),
    (lambda doc: doc.update(normalizer={"type": "NFC"}), "normalizer"),
    (lambda doc: doc["model"]["vocab"].pop(300), "has no piece of its own|special token"),
    (lambda doc: doc["model"]["vocab"].__setitem__(300, ["\u4e00x", -3.0]), "byte alphabet"),
    # Hostile: wrong types where objects and numbers belong, huge pieces, deep nesting.
    (lambda doc: doc.update(added_tokens=["<|endoftext|>"]), r"added_tokens\[0\]: expected an object"),
    (lambda doc: doc["added_tokens"][0].update(id=3.0), r"added_tokens\[0\]\.id: expected an int"),
    (lambda doc: doc.update(pre_tokenizer=["ByteLevel"]), r"pre_tokenizer: expected an object"),
    (lambda doc: doc["pre_tokenizer"].update(pretokenizers=["x", {"type": "ByteLevel"}]),
     r"pre_tokenizer\.pretokenizers\[0\]: expected an object"),
    (lambda doc: doc["model"]["vocab"].__setitem__(300, ["ab", "-3.0"]), r"model\.vocab\[300\]: .*expected \[piece"),
    (lambda doc: doc["model"]["vocab"].__setitem__(300, ["a" * 70_000, -3.0]), r"model\.vocab\[300\]: .*a piece of 70,000"),
    (lambda doc: doc.update(extra=json.loads("[" * 40 + "]" * 40)), "nest"),
])
def test_hf_unigram_import_refuses_what_it_cannot_read(change, message, tmp_path):
    import tokfx
    from conftest import fixture_path

    tok = tokfx.train(fixture_path("corpus.en").read_text(encoding="utf-8")[:20_000], "unigram", vocab_size=400)
    tok.save(tmp_path)
    doc = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    change(doc)
    (tmp_path / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(tokfx.TokenizerFileError, match=message) as info:
        tokfx.Tokenizer.from_hf_unigram(tmp_path / "tokenizer.json")
    assert str(info.value).startswith(f"{tmp_path / 'tokenizer.json'}: ") and "\n" not in str(info.value)
