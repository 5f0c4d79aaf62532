"""Tokenizer with a segmenter other than BPE merges: over any vocabulary, either alphabet,
saved in tokfx.json."""
import json

import pytest

import tokfx
from conftest import corpus_text, fixture_path
from tokfx import Tokenizer
from tokfx._path_segment import PathSegmenter
from tokfx.reference import path_segment as ref

EOT = "<|endoftext|>"
MODES = ["pathpiece-l", "pathpiece-r", "greedy"]


@pytest.fixture(scope="module")
def english():
    return fixture_path("corpus.en").read_text(encoding="utf-8")[:60_000]


@pytest.fixture(scope="module")
def bpe(english):
    return tokfx.train(english, "bpe", vocab_size=600, pattern="firstspace")


@pytest.mark.parametrize("mode", MODES)
def test_encoding_equals_the_reference_per_piece(bpe, english, mode):
    tok = bpe.with_segmenter(mode, seed=7) if mode == "pathpiece-r" else bpe.with_segmenter(mode)
    text = english[:8_000]
    special = set(tok.special_tokens.values())
    tokens = [None if i in special else list(t) for i, t in enumerate(tok.tokens)]
    expected = [t for piece in tok.pretokenizer.pieces(text)
                for _, _, t in ref.segment(list(piece), tokens, 16, mode, 7)]
    assert tok.encode(text) == expected
    assert tok.decode(tok.encode(text)) == text


def test_pathpiece_needs_no_more_tokens_than_bpe_on_the_same_vocabulary(bpe, english):
    widest = max(len(t) for t in bpe.tokens)
    shortest = bpe.with_segmenter("pathpiece-l", max_width=widest)
    for piece in bpe.pretokenizer.pieces(english[:20_000]):
        text = piece.decode()
        by_merges, by_path = len(bpe.encode(text)), len(shortest.encode(text))
        assert by_path <= by_merges
    assert shortest.segmenter == "pathpiece-l" and bpe.segmenter == "bpe"


def test_special_tokens_are_ids_and_never_segmented_from_text(bpe):
    tok = bpe.with_segmenter("pathpiece-l", max_width=64)
    eot = tok.special_tokens[EOT]
    assert tok.encode(f"a{EOT}b") == [tok.token_to_id(b"a"), eot, tok.token_to_id(b"b")]
    assert eot not in tok.encode_ordinary(EOT)


def test_save_and_load_keep_the_segmenter_and_write_tokfx_json_only(bpe, tmp_path, english):
    tok = bpe.with_segmenter("pathpiece-r", seed=3, max_width=8)
    tok.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokfx.json"]
    doc = json.loads((tmp_path / "tokfx.json").read_text())
    assert doc["segmenter"] == {"name": "pathpiece-r", "params": {"max_width": 8, "seed": 3}}
    loaded = Tokenizer.load(tmp_path)
    assert (loaded.segmenter, loaded.segmenter_params) == ("pathpiece-r", {"max_width": 8, "seed": 3})
    assert loaded.encode(english[:5000]) == tok.encode(english[:5000])


def test_another_segmenter_keeps_max_width_and_seed_unless_given(bpe):
    tok = bpe.with_segmenter("pathpiece-r", seed=3, max_width=8)
    assert tok.with_segmenter("pathpiece-r").segmenter_params == {"max_width": 8, "seed": 3}
    assert tok.with_segmenter("pathpiece-r", seed=4).segmenter_params == {"max_width": 8, "seed": 4}
    assert tok.with_segmenter("greedy").segmenter_params == {"max_width": 8}
    assert tok.with_segmenter("greedy").with_segmenter("pathpiece-r").segmenter_params == {"max_width": 8, "seed": 0}


def test_a_bpe_file_has_no_segmenter_field(bpe, tmp_path):
    bpe.save(tmp_path)
    assert "segmenter" not in json.loads((tmp_path / "tokfx.json").read_text())
    assert Tokenizer.load(tmp_path).segmenter == "bpe"


def test_a_vocabulary_without_merges_needs_another_segmenter():
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b"abc", EOT.encode()]
    special = {EOT: 258}
    tok = Tokenizer(tokens, [], special, "firstspace", "pathpiece", segmenter="pathpiece-l")
    assert tok.encode("abcab") == [257, 256]
    with pytest.raises(ValueError, match="needs merges"):
        tok.with_segmenter("bpe")


def test_bad_segmenter_names_and_params_are_refused(bpe):
    with pytest.raises(ValueError, match="unknown segmenter"):
        bpe.with_segmenter("shortest")
    with pytest.raises(ValueError, match="takes no parameter 'seed'"):
        bpe.with_segmenter("pathpiece-l", seed=1)
    with pytest.raises(ValueError, match="must be an integer"):
        bpe.with_segmenter("greedy", max_width="16")


def test_a_file_naming_an_unknown_segmenter_is_refused(bpe, tmp_path):
    bpe.with_segmenter("greedy").save(tmp_path)
    doc = json.loads((tmp_path / "tokfx.json").read_text())
    doc["segmenter"]["name"] = "shortest"
    (tmp_path / "tokfx.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="tokfx.json: segmenter.name: unknown segmenter \"shortest\"; known: bpe"):
        Tokenizer.load(tmp_path)


@pytest.mark.parametrize("mode", MODES)
def test_cjk_tokenizer_segments_remapped_symbols(mode):
    text = corpus_text("chinese/hongloumeng.txt")[:30_000]
    tok = tokfx.train(text, "bpe", vocab_size=900, alphabet="cjk").with_segmenter(mode)
    sample = text[10_000:14_000]
    special = set(tok.special_tokens.values())
    tokens = [None if i in special else list(t) for i, t in enumerate(tok.tokens)]
    expected = [t for piece in tok.pretokenizer.pieces(sample)
                for _, _, t in ref.segment(tok.alphabet.symbols(piece), tokens, 16, mode)]
    assert tok.encode(sample) == expected
    assert tok.decode(tok.encode(sample)) == sample


@pytest.mark.parametrize("mode", MODES)
def test_the_piece_cache_never_changes_the_ids(bpe, english, mode):
    """A cache of 3 pieces overflows again and again; the second pass reads what the first left."""
    special = set(bpe.special_tokens.values())
    tokens = [None if i in special else list(t) for i, t in enumerate(bpe.tokens)]
    data = english[:20_000].encode()
    ends = bpe.pretokenizer.piece_ends(data)
    uncached = PathSegmenter(tokens, mode, seed=9, cache_size=0).encode_pieces(data, ends)
    assert uncached == [t for piece in bpe.pretokenizer.pieces(english[:20_000])
                        for _, _, t in ref.segment(list(piece), tokens, 16, mode, 9)]
    for cache_size in (3, 1 << 18):
        segmenter = PathSegmenter(tokens, mode, seed=9, cache_size=cache_size)
        assert segmenter.encode_pieces(data, ends) == uncached
        assert segmenter.encode_pieces(data, ends) == uncached
        assert segmenter.encode_pieces(data, ends, as_array=True).tolist() == uncached
