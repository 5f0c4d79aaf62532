"""SaGe vocabulary construction: schedules, round invariants and drops against the pure-Python
loss, the trained tokenizer, reproducible embeddings, CLI and pipeline routing."""
import os
import subprocess
import sys
from array import array
from itertools import accumulate

import numpy as np
import pytest

import tokfx
from conftest import fixture_path
from tokfx import Tokenizer
from tokfx.cli import main
from tokfx.reference import sage as ref
from tokfx.sage import default_embeddings_schedule, default_schedule, prune_rounds
from tokfx.training import training_settings

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def english():
    return fixture_path("corpus.en").read_text(encoding="utf-8")[:50_000]


def corpus_arrays(counts):
    words = list(counts)
    symbols = array("i", list(b"".join(words)))
    offsets = array("q", [0, *accumulate(map(len, words))])
    return words, symbols, offsets, array("q", counts.values())


def test_default_schedules_scale_the_official_ones():
    # The official example: 262,144 down to 16,384, embeddings at 262,144 131,072 65,536 49,152
    # 40,960 32,768 (the package's README).
    assert default_schedule(262144, 16384) == [229376, 196608, 163840, 131072, 98304, 65536, 57344,
                                               49152, 40960, 32768, 16384]
    assert default_embeddings_schedule(262144, 16384) == [262144, 131072, 65536, 49152, 40960, 32768]
    # Our default start, 4 x the target: the official tail 4, 3.5, 3, 2.5, 2, 1 x 1,024.
    assert default_schedule(4096, 1024) == [3584, 3072, 2560, 2048, 1024]
    assert default_embeddings_schedule(4096, 1024) == [4096, 3072, 2560, 2048]


def test_each_round_keeps_the_schedule_size_every_byte_and_drops_the_smallest_losses(english):
    counts = tokfx.count_pretokens(english[:12_000], "gpt2")
    words, symbols, offsets, word_counts = corpus_arrays(counts)
    initial = tokfx.train(counts, "bpe", vocab_size=900, special_tokens=())
    tokens = [tuple(t) for t in initial.tokens]
    sizes = [800, 650, 500, 400]
    before = tokens
    rounds = list(prune_rounds(symbols, offsets, word_counts, tokens, sizes, [True, False, True, False],
                               256, 16, 0))
    assert len(rounds) == len(sizes)
    for done, size in zip(rounds, sizes):
        assert done.tokens[:256] == [(b,) for b in range(256)]
        # The pass recomputed with the pure-Python loss over the same embeddings.
        losses, occurrences, corpus_tokens = ref.sage_losses([list(w) for w in words], list(word_counts),
                                                             before, done.embeddings.tolist())
        assert done.corpus_tokens == corpus_tokens
        in_use = [i for i in range(256, len(before)) if occurrences[i]]
        assert done.active_before == 256 + len(in_use)
        if done.active_before <= size:
            assert not done.dropped and done.tokens == before
        else:
            order = sorted(in_use, key=lambda i: (losses[i], i))
            dropped = set(order[:256 + len(in_use) - size])
            assert done.dropped
            assert done.tokens == [t for i, t in enumerate(before) if i not in dropped]
            # The active vocabulary after the round has the scheduled size.
            assert 256 + len(done.active) == size
            assert done.active == [before[i] for i in in_use if i not in dropped]
        before = done.tokens
    assert [done.dropped for done in rounds] == [False, True, True, True]  # fewer than 800 of the 900 in use


def test_a_round_is_skipped_when_the_active_vocabulary_already_fits():
    # BPE on "abc" learns "ab" then "abc"; greedy uses only "abc", so "ab" is inactive:
    # 256 + 2 tokens, 257 active. Target 257 (258 - 1 special): the vocabulary (258) is over
    # it, the active part is not: skipped, and the result is the active vocabulary.
    counts = {b"abc": 5}
    tok = tokfx.train(counts, "sage", vocab_size=258, initial_size=259, schedule=[258])
    assert tok.vocab_size == 258 and tuple(b"abc") in tok.tokens and tuple(b"ab") not in tok.tokens
    words, symbols, offsets, word_counts = corpus_arrays(counts)
    tokens = [(b,) for b in range(256)] + [tuple(b"ab"), tuple(b"abc")]
    # Round 1: the vocabulary (258) already fits 258: no pass. Round 2: active 257 fits 257.
    first, second = prune_rounds(symbols, offsets, word_counts, tokens, [258, 257], [True, True], 256, 16, 0)
    assert (first.dropped, first.active, first.tokens) == (False, None, tokens)
    assert (second.dropped, second.active_before, second.active, second.tokens) == \
        (False, 257, [tuple(b"abc")], tokens)


def test_trained_tokenizer(english, tmp_path):
    tok = tokfx.train(english, "sage", vocab_size=500, initial_size=1000, schedule=[800, 600, 500],
                      embeddings_schedule=[1000, 600])
    assert (tok.vocab_size, tok.algorithm, tok.segmenter) == (500, "sage", "greedy")
    assert tok.merge_ids == []
    assert all(tok.token_to_id(bytes([b])) == b for b in range(256))
    assert len(set(tok.tokens)) == 500 and tok.special_tokens == {EOT: 499}
    assert tok.decode(tok.encode(english)) == english
    tok.save(tmp_path)
    assert Tokenizer.load(tmp_path).encode(english[:3000]) == tok.encode(english[:3000])
    tokfx.train(english, "sage", vocab_size=500, initial_size=1000, schedule=[800, 600, 500],
                embeddings_schedule=[1000, 600]).save(tmp_path / "b")
    assert (tmp_path / "b" / "tokfx.json").read_bytes() == (tmp_path / "tokfx.json").read_bytes()
    # Counts gathered in another order (as the pipeline's are) give the same tokenizer.
    counts = tokfx.count_pretokens(english, "gpt2", [EOT])
    shuffled = dict(reversed(list(counts.items())))
    assert tokfx.train(shuffled, "sage", vocab_size=500, initial_size=1000, schedule=[800, 600, 500],
                       embeddings_schedule=[1000, 600]).tokens == tok.tokens


def test_embeddings_are_the_same_in_every_process(tmp_path):
    # gensim seeds its initial vectors from a hash of each word; Python's str hash differs from
    # process to process unless fixed, so run under two hash seeds.
    code = ("from tokfx.word2vec import train_embeddings; import sys, hashlib; "
            "e = train_embeddings([[1, 2, 3], [2, 3], [4, 1, 2, 5]], [3, 2, 4], 8, seed=7); "
            "sys.stdout.write(hashlib.sha256(e.tobytes()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(digests) == 1


def test_tokens_absent_from_the_corpus_get_small_uniform_vectors():
    from tokfx.word2vec import DIMENSION, train_embeddings
    e = train_embeddings([[1, 2, 3], [2, 3]], [3, 2], 6, seed=0)
    assert e.shape == (6, DIMENSION) and e.dtype == np.float64
    for absent in (0, 4, 5):
        assert np.all(np.abs(e[absent]) <= 0.5 / DIMENSION)
    assert np.abs(e[2]).max() > 0.5 / DIMENSION  # trained


def test_bad_settings_are_refused(english):
    with pytest.raises(ValueError, match="smaller than vocab_size"):
        tokfx.train(english, "sage", vocab_size=500, initial_size=400)
    with pytest.raises(ValueError, match="must decrease"):
        tokfx.train(english, "sage", vocab_size=500, initial_size=1000, schedule=[800, 900, 500])
    with pytest.raises(ValueError, match="end at vocab_size 500"):
        tokfx.train(english, "sage", vocab_size=500, initial_size=1000, schedule=[])
    with pytest.raises(ValueError, match="embeddings_schedule size 700"):
        tokfx.train(english, "sage", vocab_size=500, initial_size=1000, schedule=[800, 500],
                    embeddings_schedule=[1000, 700])
    with pytest.raises(ValueError, match="embeddings_schedule does not apply to algorithm 'pathpiece'"):
        training_settings("pathpiece", None, embeddings_schedule=[1000])


def test_cli_trains_sage_with_its_options(tmp_path):
    out = tmp_path / "sage"
    assert main(["train", str(fixture_path("tinystories_sample.txt")), "-o", str(out), "-q",
                 "--algorithm", "sage", "--vocab-size", "300", "--initial-size", "400",
                 "--schedule", "350,300", "--embeddings-schedule", "400,350", "--seed", "3",
                 "--max-width", "8"]) == 0
    tok = Tokenizer.load(out)
    assert (tok.algorithm, tok.vocab_size, tok.segmenter) == ("sage", 300, "greedy")
    assert tok.params == {"vocab_size": 300, "initial_size": 400, "max_width": 8, "schedule": [350, 300],
                          "embeddings_schedule": [400, 350], "seed": 3}
    assert max(len(t) for t in tok.tokens[:-1]) <= 8


def test_cjk_alphabet():
    from conftest import corpus_text
    text = corpus_text("chinese/hongloumeng.txt")[:20_000]
    tok = tokfx.train(text, "sage", vocab_size=700, initial_size=1400, alphabet="cjk")
    assert (tok.vocab_size, tok.alphabet.name, tok.segmenter) == (700, "cjk", "greedy")
    assert tok.tokens[:tok.alphabet.size] == [(s,) for s in range(tok.alphabet.size)]
    assert tok.decode(tok.encode(text)) == text
