"""A tokenizer pickles (multiprocessing, the pipeline's workers): the copy is the same tokenizer,
its canonical tokfx.json byte for byte and its ids on real text, whatever trained it and over
whichever alphabet. (Loaded files: tests/formats/test_huggingface.py, against `tokenizers`.)"""
from __future__ import annotations

import pickle
import tracemalloc

import pytest
import tiktoken
from tiktoken.load import data_gym_to_mergeable_bpe_ranks

import tokfx
from conftest import fixture_path
from tokfx.formats import tokfx_json
from tokfx.formats.tiktoken_ranks import write_tiktoken_ranks
from tokfx.formats.tokfx_json import tokenizer_json_bytes
from tokfx.pre_tokenizers.patterns import GPT2

LINES = fixture_path("corpus.en").read_text(encoding="utf-8").splitlines()[:400]
TEXT = "\n".join(LINES[:50]) + " 中文字 ひらがな 한국어 👩‍👩‍👧 <|endoftext|> x"
CASES = {
    "bpe bytes": dict(algorithm="bpe", vocab_size=400),
    "bpe cjk": dict(algorithm="bpe", vocab_size=700, alphabet="cjk"),
    "bpe chars": dict(algorithm="bpe", vocab_size=400, alphabet="chars", pattern="sentencepiece"),
    "scaffold-bpe": dict(algorithm="scaffold-bpe", vocab_size=400),
    "unigram bytes": dict(algorithm="unigram", vocab_size=400),
    "unigram chars": dict(algorithm="unigram", vocab_size=400, alphabet="chars", pattern="sentencepiece"),
    "wordpiece": dict(algorithm="wordpiece", vocab_size=400),
    "pathpiece": dict(algorithm="pathpiece", vocab_size=400),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_pickled_tokenizer_is_the_same_tokenizer(name):
    tokenizer = tokfx.train(LINES, special_tokens=["<|endoftext|>"], **CASES[name])
    for original in (tokenizer, tokenizer.with_segmenter("greedy") if name == "bpe bytes" else tokenizer):
        copy = pickle.loads(pickle.dumps(original))
        assert tokenizer_json_bytes(copy) == tokenizer_json_bytes(original)
        assert copy.encode(TEXT) == original.encode(TEXT)
        assert copy.decode(copy.encode(TEXT)) == original.decode(original.encode(TEXT))


@pytest.mark.parametrize("algorithm, alphabet", [("unigram", "chars"), ("bpe", "bytes"), ("bpe", "chars")])
def test_saved_tokfx_json_is_the_canonical_bytes(algorithm, alphabet, tmp_path, monkeypatch):
    # save writes tokfx.json a part at a time (write_tokenizer_json; long lists in slices, here
    # of 7 items and of the default size): the bytes tokenizer_json_bytes makes whole, and
    # hashes, with non-ASCII text, scores and merges.
    text = fixture_path("corpus.en").read_text(encoding="utf-8")[:20_000] + "猫坐在垫子上。\n" * 20
    tok = tokfx.train(text, algorithm, vocab_size=500, alphabet=alphabet, special_tokens=["<|终|>"])
    for size in (tokfx_json.JSON_SLICE, 7):
        monkeypatch.setattr(tokfx_json, "JSON_SLICE", size)
        tok.save(tmp_path / str(size))
        assert (tmp_path / str(size) / "tokfx.json").read_bytes() == tokenizer_json_bytes(tok)


# --- GPT-2's vocabulary, as the pipeline's workers get it (beam_jobs.records.TokenizerFile) ------

EOT = "<|endoftext|>"
GPT2_TEXT = fixture_path("corpus.en").read_text(encoding="utf-8")[:100_000] + f" 中文字 👩‍👩‍👧 {EOT} x\n\n  "


@pytest.fixture(scope="module")
def gpt2_files(tmp_path_factory):
    """GPT-2's vocab.json and merges.txt from the fixtures, merges.txt with the `#version` line
    OpenAI's file has (the fixture lacks it, tiktoken skips it)."""
    directory = tmp_path_factory.mktemp("gpt2")
    (directory / "vocab.json").write_bytes(fixture_path("gpt2_vocab.json").read_bytes())
    (directory / "merges.txt").write_bytes(b"#version: 0.2\n" + fixture_path("gpt2_merges.txt").read_bytes())
    return directory


@pytest.fixture(scope="module")
def gpt2_ranks(gpt2_files):
    """{token bytes: id} as tiktoken reads GPT-2's files itself (not through tokfx)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken caches files by path otherwise
        return data_gym_to_mergeable_bpe_ranks(str(gpt2_files / "merges.txt"), str(gpt2_files / "vocab.json"))


def _same_as_tiktoken_and_original(copy, original, ranks, tmp_path):
    oracle = tiktoken.Encoding("gpt2", pat_str=GPT2, mergeable_ranks=ranks, special_tokens={EOT: 50256})
    ids = oracle.encode(GPT2_TEXT, allowed_special="all")
    assert copy.encode(GPT2_TEXT) == original.encode(GPT2_TEXT) == ids
    assert copy.encode_to_array(GPT2_TEXT).tolist() == ids
    assert copy.encode_ordinary(GPT2_TEXT) == oracle.encode_ordinary(GPT2_TEXT)
    assert copy.decode(ids) == oracle.decode(ids) == GPT2_TEXT
    assert copy.decode_bytes(ids) == oracle.decode_bytes(ids)
    # Looked up in the map built on the first token_to_id (not at unpickling).
    assert {copy.id_to_token(i): i for i in range(50256)} == ranks
    assert all(copy.token_to_id(token) == i for token, i in ranks.items())
    assert copy.token_to_id(EOT) == 50256
    assert copy.merge_ids == original.merge_ids and copy.merges == original.merges
    copy.save(tmp_path / "copy")
    original.save(tmp_path / "original")
    names = sorted(p.name for p in (tmp_path / "original").iterdir())
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == names
    for name in names:
        assert (tmp_path / "copy" / name).read_bytes() == (tmp_path / "original" / name).read_bytes(), name


def test_a_pickled_gpt2_encodes_decodes_and_saves_as_tiktoken_and_the_original(gpt2_files, gpt2_ranks, tmp_path):
    original = tokfx.Tokenizer.from_gpt2_files(gpt2_files / "vocab.json", gpt2_files / "merges.txt", [EOT])
    copy = pickle.loads(pickle.dumps(original, pickle.HIGHEST_PROTOCOL))
    _same_as_tiktoken_and_original(copy, original, gpt2_ranks, tmp_path)
    assert (tmp_path / "copy" / "merges.txt").read_bytes() == (gpt2_files / "merges.txt").read_bytes()
    # A copy of a copy, and a tokenizer built from the copy's merges, are the same again.
    again = pickle.loads(pickle.dumps(copy))
    assert tokenizer_json_bytes(again) == tokenizer_json_bytes(original)
    assert tokenizer_json_bytes(copy.with_segmenter("bpe")) == tokenizer_json_bytes(original)


def test_a_pickled_tiktoken_rule_tokenizer_encodes_as_tiktoken(gpt2_ranks, tmp_path):
    """GPT-2's ranks read as a tiktoken rank file: the bpe segmenter with rank_by_id and
    ignore_merges (the whole tokens' map, kept by the encoder)."""
    write_tiktoken_ranks(tmp_path / "gpt2.tiktoken", gpt2_ranks)
    original = tokfx.Tokenizer.from_tiktoken(tmp_path / "gpt2.tiktoken", "gpt2", {EOT: 50256})
    copy = pickle.loads(pickle.dumps(original, pickle.HIGHEST_PROTOCOL))
    assert copy.segmenter_params == original.segmenter_params == {"ignore_merges": 1, "rank_by_id": 1}
    _same_as_tiktoken_and_original(copy, original, gpt2_ranks, tmp_path)


def test_unpickling_gpt2_allocates_few_python_objects(gpt2_files):
    """Issue 28 (a pipeline worker's memory): the merges as one flat array, the {token: id} map
    and the encoder's Python int per id made only when first used. About 3 MB of Python
    allocations, the tokens' bytes most of it (it was 16 MB: bench/README.md, per-worker cost)."""
    data = pickle.dumps(tokfx.Tokenizer.from_gpt2_files(gpt2_files / "vocab.json", gpt2_files / "merges.txt",
                                                        [EOT]), pickle.HIGHEST_PROTOCOL)
    tracemalloc.start()
    try:
        copy = pickle.loads(data)
        copy.encode_to_array(GPT2_TEXT[:10_000])
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 5 * 2**20, f"{held / 2**20:.1f} MB"
