"""tiktoken rank files (Tokenizer.from_tiktoken) against tiktoken.Encoding built from the same
ranks: random small rank tables (trained or not), GPT-2's ranks on fuzzed text and corpora,
GPT-2's tokens ranked out of order; the file's faults; save and load."""
import json
import random

import pytest
import regex
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiktoken.load import load_tiktoken_bpe

from conftest import ASSIGNED, corpus_text
from tokfx import Tokenizer, TokenizerFileError
from tokfx.formats.tiktoken_ranks import KNOWN_RANK_FILES, write_tiktoken_ranks
from tokfx.pre_tokenizers.patterns import PATTERNS

END_OF_TEXT = "<|endoftext|>"
SMALL = b"ab"  # two letters: tokens overlap and their splits compete in most pre-tokens


def oracle(ranks: dict[bytes, int], pattern: str, special_tokens: dict[str, int] | None = None):
    return tiktoken.Encoding("test", pat_str=PATTERNS.get(pattern, pattern), mergeable_ranks=ranks,
                             special_tokens=special_tokens or {})


@pytest.fixture(scope="module")
def rank_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("ranks")


def test_written_file_reads_back_in_tiktoken(rank_dir, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken caches files by path otherwise
    ranks = {bytes([b]): 255 - b for b in range(256)} | {b"ab": 300, b"\n\n": 256}
    write_tiktoken_ranks(rank_dir / "w.tiktoken", ranks)
    assert load_tiktoken_bpe(str(rank_dir / "w.tiktoken")) == ranks


# --- random small rank tables -------------------------------------------------------------------

@st.composite
def rank_tables(draw):
    """{token: rank}: the 256 bytes and 4..30 tokens of 2..7 of the bytes a, b; the tokens and the
    bytes a and b ranked in any order after the other bytes (each at its own value, so ranks 97
    and 98 are unused), with some ranks past them unused too. So a token often ranks below its
    parts or is reachable by no merge (only whole), and two splits of one token compete in one
    pre-token (merging in rounds, or ranking a token's splits apart, differs from tiktoken on
    about one text in ten)."""
    token = st.integers(2, 7).flatmap(lambda n: st.lists(st.sampled_from(SMALL), min_size=n, max_size=n)).map(bytes)
    tokens = draw(st.lists(token, unique=True, min_size=4, max_size=30))
    ranked = [b"a", b"b", *tokens]
    ranks = draw(st.permutations(range(256, 256 + len(ranked) + draw(st.integers(0, 4)))))
    return {bytes([b]): b for b in range(256) if b not in SMALL} | dict(zip(ranked, ranks))


texts = st.lists(st.sampled_from(["a", "b", "ab", "ba"]), min_size=4, max_size=45).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranks=rank_tables(), text=texts)
def test_random_rank_tables_encode_as_tiktoken(ranks, text, rank_dir):
    """The pattern "none" keeps the whole text one piece: up to 90 bytes, past the 64 where the
    heap takes over."""
    write_tiktoken_ranks(rank_dir / "random.tiktoken", ranks)
    tok = Tokenizer.from_tiktoken(rank_dir / "random.tiktoken", "none")
    expected = oracle(ranks, "none").encode_ordinary(text)
    assert tok.encode(text) == expected
    assert tok.decode(expected) == text


def test_seeded_rank_tables_encode_as_tiktoken(rank_dir):
    """Larger tables and texts than hypothesis tends to draw, where merging in rounds or ranking a
    token's splits apart differs from tiktoken on about one text in six (measured)."""
    rng = random.Random(7)
    for table in range(150):
        tokens = {bytes(rng.choice(SMALL) for _ in range(rng.randint(2, 6))) for _ in range(rng.randint(2, 25))}
        every = [bytes([b]) for b in range(256)] + sorted(tokens)
        ranks = dict(zip(every, rng.sample(range(len(every) + 3), len(every))))
        write_tiktoken_ranks(rank_dir / "seeded.tiktoken", ranks)
        tok, tk = Tokenizer.from_tiktoken(rank_dir / "seeded.tiktoken", "none"), oracle(ranks, "none")
        for _ in range(20):
            text = "".join(rng.choice("ab") for _ in range(rng.randint(1, 90)))
            assert tok.encode(text) == tk.encode_ordinary(text), (ranks, text)


def test_a_merge_can_outrank_the_rest_of_a_round(rank_dir):
    """`abab` with ab (rank 300) and aba (rank 299): tiktoken merges the first ab, then (ab, a)
    outranks the second ab; merging every ab in one round would give [ab, ab]."""
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 300, b"aba": 299}
    write_tiktoken_ranks(rank_dir / "round.tiktoken", ranks)
    expected = oracle(ranks, "gpt2").encode_ordinary("abab")
    assert expected == [299, ord("b")]
    assert Tokenizer.from_tiktoken(rank_dir / "round.tiktoken", "gpt2").encode("abab") == expected


def test_unused_ids_are_control_tokens(rank_dir):
    """cl100k-like gaps: ranks 256 and 258 unused, a special token past another gap."""
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 257, b"abc": 259}
    write_tiktoken_ranks(rank_dir / "gaps.tiktoken", ranks)
    tok = Tokenizer.from_tiktoken(rank_dir / "gaps.tiktoken", "gpt2", {"<|end|>": 262})
    assert tok.vocab_size == 263
    assert tok.control_tokens == {"<|tokfx_unused_256|>": 256, "<|tokfx_unused_258|>": 258,
                                  "<|tokfx_unused_260|>": 260, "<|tokfx_unused_261|>": 261}
    text = "abc ab<|end|>a <|tokfx_unused_256|>"
    assert tok.encode(text) == oracle(ranks, "gpt2", {"<|end|>": 262}).encode(text, allowed_special="all")
    assert tok.decode([256, 259, 258, 262]) == "abc<|end|>"  # unused ids decode as nothing


# --- GPT-2's ranks --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gpt2_ranks(gpt2_vocab_merges):
    vocab, _ = gpt2_vocab_merges
    return {token: i for i, token in vocab.items() if i != 50256}


# User patterns outside the named set, of the GPT shape (run by tokfx._class_runs): Llama 3's
# with numbers of one or two digits, o200k's with up to four and its contractions alone.
# Class intersections (`&&`), which tiktoken's engine reads as such and `regex` only in its
# VERSION1: letters other than Lo apart from the Lo ones; Kimi K2's pattern (tokenization_kimi.py),
# Han runs apart from the other letters by intersections with a nested negated set.
USER_PATTERNS = {
    "user-llama3-digits-1-2": PATTERNS["llama3"].replace(r"\p{N}{1,3}", r"\p{N}{1,2}"),
    "user-o200k-digits-1-4": PATTERNS["o200k"].replace(r"\p{N}{1,3}", r"\p{N}{1,4}+"),
    "user-gpt2-intersection": PATTERNS["gpt2"].replace(r" ?\p{L}+", r" ?[\p{L}&&\P{Lo}]+| ?\p{Lo}+"),
    "user-kimi-k2": "|".join([
        r"[\p{Han}]+",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"]),
}
PAIRED = ["gpt2", "cl100k", "llama3", *USER_PATTERNS]


@pytest.fixture(scope="module")
def gpt2_pairs(gpt2_ranks, rank_dir):
    """{pattern: (tokfx, tiktoken)} over GPT-2's ranks with its end-of-text token."""
    write_tiktoken_ranks(rank_dir / "gpt2.tiktoken", gpt2_ranks)
    special = {END_OF_TEXT: 50256}
    patterns = {name: USER_PATTERNS.get(name, name) for name in PAIRED}
    return {name: (Tokenizer.from_tiktoken(rank_dir / "gpt2.tiktoken", pattern, special),
                   oracle(gpt2_ranks, pattern, special)) for name, pattern in patterns.items()}


def test_the_user_patterns_run_natively(gpt2_pairs):
    for name in USER_PATTERNS:
        pre_tokenizer = gpt2_pairs[name][0].pretokenizer
        assert pre_tokenizer.pattern_name is None and pre_tokenizer._user.native is not None


def assert_agree(text, pair):
    tok, tk = pair
    expected = tk.encode(text, allowed_special="all")
    assert tok.encode(text) == expected
    assert tok.encode_ordinary(text) == tk.encode_ordinary(text)
    assert tok.decode(expected) == tk.decode(expected)


TRICKY = [" ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u3000", "'s", "'LL", "0", "12345", "٣", "é", "e\u0301",
          "中文", "한국", "🙂", "🏳️‍🌈", ".", "!?", "/", END_OF_TEXT]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(PAIRED),
       text=st.lists(st.one_of(st.sampled_from(TRICKY), st.text(ASSIGNED, max_size=8)), max_size=20).map("".join))
def test_gpt2_ranks_on_fuzzed_text(name, text, gpt2_pairs):
    assert_agree(text, gpt2_pairs[name])


CORPUS_FILES = ["english/pg2701_moby_dick.txt", "chinese/hongloumeng.txt", "korean/nsmc_reviews_4M.txt",
                "sentencepiece/wagahaiwa_nekodearu.txt"]


@pytest.mark.parametrize("relative", CORPUS_FILES)
@pytest.mark.parametrize("name", PAIRED)
def test_gpt2_ranks_on_corpus_files(relative, name, gpt2_pairs):
    assert_agree(corpus_text(relative)[:100_000], gpt2_pairs[name])


@pytest.mark.parametrize("order", ["reversed", "shuffled"])
def test_gpt2_tokens_ranked_out_of_order(order, gpt2_ranks, rank_dir):
    """GPT-2's multi-byte tokens ranked in reverse or at random: a token ranks below its parts,
    so the merges do not grow in rank, and tiktoken's one-at-a-time rule decides."""
    multi = sorted((t for t in gpt2_ranks if len(t) > 1), key=gpt2_ranks.get)
    ranks_of_multi = sorted(gpt2_ranks[t] for t in multi)
    if order == "reversed":
        ranks_of_multi.reverse()
    else:
        random.Random(0).shuffle(ranks_of_multi)
    ranks = {t: r for t, r in gpt2_ranks.items() if len(t) == 1} | dict(zip(multi, ranks_of_multi))
    write_tiktoken_ranks(rank_dir / f"{order}.tiktoken", ranks)
    tok, tk = Tokenizer.from_tiktoken(rank_dir / f"{order}.tiktoken", "cl100k"), oracle(ranks, "cl100k")
    for relative in ["english/wikitext2_valid.txt", "chinese/shuihu.txt"]:
        text = corpus_text(relative)[:60_000]
        assert tok.encode(text) == tk.encode_ordinary(text)


# --- faults -----------------------------------------------------------------------------------

BYTES = "".join(f"{__import__('base64').b64encode(bytes([b])).decode()} {b}\n" for b in range(256))


@pytest.mark.parametrize("extra, message", [
    ("YWI= 300\nYW*= 301\n", r"bad.tiktoken:258: \"YW\*=\" is not base64"),
    ("YWI= 300\nYWI= 301\n", r"bad.tiktoken:258: token b'ab' is also line 257's"),
    ("YWI= 300\nYWJj 300\n", r"bad.tiktoken:258: rank 300 is also line 257's"),
    ("YWI= 2097152\n", r"bad.tiktoken:257: rank \"2097152\" is not an integer in 0..2,097,151"),
    ("YWI= -1\n", r"bad.tiktoken:257: rank \"-1\" is not an integer"),
    ("YWI= 1.5\n", r"bad.tiktoken:257: rank \"1.5\" is not an integer"),
    ("YWI= 300 7\n", r"bad.tiktoken:257: expected `base64-token rank`"),
    ("YWI=\n", r"bad.tiktoken:257: expected `base64-token rank`"),
    ("= 300\n", r"bad.tiktoken:257: \"=\" is not base64"),
])
def test_malformed_lines_name_file_and_line(extra, message, rank_dir):
    (rank_dir / "bad.tiktoken").write_text(BYTES + extra)
    with pytest.raises(TokenizerFileError, match=message):
        Tokenizer.from_tiktoken(rank_dir / "bad.tiktoken", "gpt2")


def test_missing_byte_is_refused(rank_dir):
    (rank_dir / "bad.tiktoken").write_text(BYTES.replace("QQ== 65\n", ""))  # "A"
    with pytest.raises(TokenizerFileError, match=r"bad.tiktoken: no token for byte 0x41 \(every byte needs one"):
        Tokenizer.from_tiktoken(rank_dir / "bad.tiktoken", "gpt2")


def test_oversize_file_is_refused(rank_dir, monkeypatch):
    monkeypatch.setattr("tokfx.formats.untrusted.MAX_FILE_BYTES", 1000)
    (rank_dir / "bad.tiktoken").write_text(BYTES)
    with pytest.raises(TokenizerFileError, match=r"bad.tiktoken: larger than 1,000 bytes"):
        Tokenizer.from_tiktoken(rank_dir / "bad.tiktoken", "gpt2")


def test_ids_spread_too_far_are_refused(rank_dir):
    (rank_dir / "bad.tiktoken").write_text(BYTES + "YWI= 2000000\n")
    with pytest.raises(TokenizerFileError, match=r"bad.tiktoken: 1,999,744 ids below 2,000,001 hold no token"):
        Tokenizer.from_tiktoken(rank_dir / "bad.tiktoken", "gpt2")


def test_quadratic_merges_are_refused(rank_dir, monkeypatch):
    """Tokens a, aa, aaa, ...: the k-th splits k - 1 ways."""
    monkeypatch.setattr("tokfx.formats.tiktoken_ranks.MAX_TOKENS", 1000)
    ranks = {bytes([b]): b for b in range(256)} | {b"a" * k: 254 + k for k in range(2, 60)}
    write_tiktoken_ranks(rank_dir / "bad.tiktoken", ranks)
    with pytest.raises(TokenizerFileError, match=r"split into more than 1,000 pairs"):
        Tokenizer.from_tiktoken(rank_dir / "bad.tiktoken", "gpt2")


@pytest.mark.parametrize("special, error, message", [
    ({"<|x|>": 65}, ValueError, r"special token '<\|x\|>': id 65 is a rank of"),
    ({"<|x|>": 300, "<|y|>": 300}, ValueError, "two special tokens share an id"),
    ({"<|x|>": "300"}, ValueError, r"id '300' is not an int"),
    ({"<|x|>": True}, ValueError, r"id True is not an int"),
    ({"": 300}, ValueError, "is empty"),
    (["<|x|>"], TypeError, r"special_tokens must be a mapping"),
    ({"<|tokfx_unused_256|>": 257}, ValueError, "is the name tokfx gives an unused id"),
])
def test_bad_special_tokens_are_the_callers_fault(special, error, message, rank_dir):
    (rank_dir / "ok.tiktoken").write_text(BYTES)
    with pytest.raises(error, match=message) as raised:
        Tokenizer.from_tiktoken(rank_dir / "ok.tiktoken", "gpt2", special)
    assert not isinstance(raised.value, TokenizerFileError)


def test_unknown_pattern_name_is_refused(rank_dir):
    (rank_dir / "ok.tiktoken").write_text(BYTES)
    with pytest.raises(ValueError, match="unknown pattern name 'cl200k'"):
        Tokenizer.from_tiktoken(rank_dir / "ok.tiktoken", "cl100k".replace("1", "2"))


def test_a_known_regex_runs_as_its_named_pattern(rank_dir):
    (rank_dir / "ok.tiktoken").write_text(BYTES)
    assert Tokenizer.from_tiktoken(rank_dir / "ok.tiktoken", PATTERNS["llama3"]).pattern == "llama3"


# --- save and load ---------------------------------------------------------------------------------

def test_save_and_load_keep_the_ids(gpt2_ranks, rank_dir, tmp_path):
    ranks = dict(gpt2_ranks)
    ranks.pop(b" the")  # a gap: an unused id to fill
    write_tiktoken_ranks(rank_dir / "gap.tiktoken", ranks)
    tok = Tokenizer.from_tiktoken(rank_dir / "gap.tiktoken", "cl100k", {END_OF_TEXT: 50256})
    note = tok.save(tmp_path)
    assert "ignore_merges and rank_by_id" in note
    saved = json.loads((tmp_path / "tokfx.json").read_text(encoding="utf-8"))
    assert saved["segmenter"] == {"name": "bpe", "params": {"ignore_merges": 1, "rank_by_id": 1}}
    loaded = Tokenizer.load(tmp_path)
    assert loaded.control_tokens == tok.control_tokens == {"<|tokfx_unused_262|>": 262}
    text = corpus_text("english/wikitext2_valid.txt")[:50_000] + END_OF_TEXT + " the"
    expected = oracle(ranks, "cl100k", {END_OF_TEXT: 50256}).encode(text, allowed_special="all")
    assert loaded.encode(text) == tok.encode(text) == expected


def test_plain_bpe_files_write_no_segmenter(gpt2_vocab_merges, tmp_path):
    """The default bpe params are not written: files of BPE tokenizers keep their bytes."""
    vocab, merges = gpt2_vocab_merges
    Tokenizer.from_byte_merges(vocab, merges).save(tmp_path)
    assert "segmenter" not in json.loads((tmp_path / "tokfx.json").read_text(encoding="utf-8"))


# --- tiktoken's own rank files, known by their sha256 ---------------------------------------------

def test_the_known_rank_files_are_tiktokens_own_encodings(monkeypatch):
    """Each entry of KNOWN_RANK_FILES is what tiktoken's registry says of that encoding: the
    sha256 it checks the download against, its pattern and its special tokens."""
    import tiktoken_ext.openai_public as registry

    hashes = {}
    texts = [corpus_text(name)[:200_000] for name in ("english/wikitext2_test.txt", "chinese/shuihu.txt")]
    texts += ["  \n", "a  \n\n b\t", "don't I'LL 1234567 ", "x \u00a0\u3000y", " $%^&*\r\n\r\n"]
    monkeypatch.setattr(registry, "load_tiktoken_bpe", lambda url, expected_hash: hashes.setdefault(url, expected_hash) and {})
    for digest, (encoding, pattern, special_tokens) in KNOWN_RANK_FILES.items():
        spec = getattr(registry, encoding)()
        assert hashes.pop(next(url for url in hashes if url.endswith(f"/{encoding}.tiktoken") or
                               url.endswith("/vocab.bpe"))) == digest
        assert spec["special_tokens"] == special_tokens
        # The named pattern splits as the encoding's own (r50k's is GPT-2's, spelled faster).
        for text in texts:
            assert regex.findall(PATTERNS[pattern], text) == regex.findall(spec["pat_str"], text)


def test_a_known_rank_file_loads_alone_as_its_tiktoken_encoding(gpt2_ranks, rank_dir):
    """GPT-2's ranks written as a rank file are r50k_base.tiktoken, byte for byte (its sha256 is
    the one tiktoken checks): Tokenizer.load takes it alone and encodes as r50k_base does."""
    import tiktoken_ext.openai_public as registry

    path = rank_dir / "r50k_base.tiktoken"
    write_tiktoken_ranks(path, gpt2_ranks)
    tok = Tokenizer.load(path)
    assert tok.source["format"] == "tiktoken" and KNOWN_RANK_FILES[tok.source["sha256"]][0] == "r50k_base"
    tk = tiktoken.Encoding("r50k_base", pat_str=registry.r50k_pat_str, mergeable_ranks=gpt2_ranks,
                           special_tokens={END_OF_TEXT: 50256})
    text = corpus_text("english/wikitext2_test.txt")[:20_000] + END_OF_TEXT + "  don't 12345\n\n"
    assert tok.encode(text) == tk.encode(text, allowed_special="all")


def test_another_rank_file_is_refused_by_load_with_the_way_to_load_it(rank_dir):
    path = rank_dir / "bytes.tiktoken"
    write_tiktoken_ranks(path, {bytes([b]): b for b in range(256)})
    with pytest.raises(TokenizerFileError, match="none of tiktoken's own .* Tokenizer.from_tiktoken"):
        Tokenizer.load(path)
