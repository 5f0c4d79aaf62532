"""PathPiece vocabulary construction: schedule, rounds against the pure-Python MI, the trained
tokenizer."""
from array import array
from itertools import accumulate

import pytest

import tokfx
from conftest import fixture_path
from tokfx import Tokenizer
from tokfx.alphabet import BYTES
from tokfx.models.pathpiece import default_schedule, prune_rounds
from tokfx.reference import pathpiece_mi as ref
from tokfx.models.training import training_settings

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def english():
    return fixture_path("corpus.en").read_text(encoding="utf-8")[:50_000]


def test_default_schedule_is_the_halving_steps_of_algorithms_md():
    # docs/algorithms.md: 262,144 -> 229,376 -> ... (steps of 32,768) -> 131,072, then steps of
    # 16,384 to 65,536, then 8,192 to the target.
    assert default_schedule(262_144, 32_768) == [
        229_376, 196_608, 163_840, 131_072, 114_688, 98_304, 81_920, 65_536, 57_344, 49_152,
        40_960, 32_768]
    # A target between two steps: the last step stops at it.
    assert default_schedule(1000, 700) == [875, 750, 700]
    assert default_schedule(500, 500) == []


def corpus_arrays(counts):
    words = list(counts)
    symbols, offsets = BYTES.map_pieces(b"".join(words), array("q", accumulate(map(len, words))))
    return words, symbols, offsets, array("q", counts.values())


def test_each_round_keeps_the_schedule_size_every_byte_and_drops_the_smallest_mi_sums(english):
    counts = tokfx.count_pretokens(english, "firstspace")
    words, symbols, offsets, word_counts = corpus_arrays(counts)
    initial = tokfx.train(counts, "bpe", vocab_size=1200, pattern="firstspace", special_tokens=())
    tokens = [tuple(t) for t in initial.tokens if len(t) <= 16]
    sizes = [1000, 800, 500, 300]
    before = tokens
    for done, size in zip(prune_rounds(symbols, offsets, word_counts, tokens, sizes, 256, 16), sizes):
        assert len(done.tokens) == size
        assert done.tokens[:256] == [(b,) for b in range(256)]
        # The drop, recomputed with the pure-Python MI: smallest sums first, ties by bytes.
        sums, corpus_tokens = [0] * len(before), 0
        for word, count in counts.items():
            occurrences = ref.chunk_mi(list(word), before)
            corpus_tokens += count * len(occurrences)
            for _, _, token, mi in occurrences:
                sums[token] += count * (mi or 0)
        order = sorted(range(256, len(before)), key=lambda i: (sums[i], before[i]))
        dropped = set(order[:len(before) - size])
        assert done.tokens == [t for i, t in enumerate(before) if i not in dropped]
        assert done.corpus_tokens == corpus_tokens
        before = done.tokens


def test_random_ties_keep_every_byte_reach_each_size_and_drop_as_the_twin(english):
    """tie_break "random": each round segments as pathpiece-r with the seed (the twin's mi_pass
    recomputes the drop), keeps the base symbols and ends at the scheduled size; and since the
    MI sums do not depend on the tie rule, every round keeps what the longest rule keeps."""
    counts = tokfx.count_pretokens(english, "firstspace")
    words, symbols, offsets, word_counts = corpus_arrays(counts)
    initial = tokfx.train(counts, "bpe", vocab_size=1000, pattern="firstspace", special_tokens=())
    tokens = [tuple(t) for t in initial.tokens if len(t) <= 16]
    sizes = [900, 700, 450]
    rounds = prune_rounds(symbols, offsets, word_counts, tokens, sizes, 256, 16, "random", 11)
    longest = prune_rounds(symbols, offsets, word_counts, tokens, sizes, 256, 16)
    before = tokens
    for done, same, size in zip(rounds, longest, sizes):
        assert len(done.tokens) == size
        assert done.tokens[:256] == [(b,) for b in range(256)]
        sums, corpus_tokens = ref.mi_pass(list(symbols), list(offsets), list(word_counts), before, 16,
                                          "random", 11)
        order = sorted(range(256, len(before)), key=lambda i: (sums[i], before[i]))
        dropped = set(order[:len(before) - size])
        assert done.tokens == [t for i, t in enumerate(before) if i not in dropped]
        assert done.corpus_tokens == corpus_tokens
        assert (done.tokens, done.corpus_tokens) == (same.tokens, same.corpus_tokens)
        before = done.tokens


def test_random_ties_train_a_pathpiece_r_tokenizer(english, tmp_path):
    longest = tokfx.train(english, "pathpiece", vocab_size=700, pattern="firstspace", initial_size=2000)
    tok = tokfx.train(english, "pathpiece", vocab_size=700, pattern="firstspace", initial_size=2000,
                      tie_break="random", seed=9)
    assert (tok.segmenter, tok.segmenter_params) == ("pathpiece-r", {"max_width": 16, "seed": 9})
    assert tok.params == {**longest.params, "tie_break": "random", "seed": 9}
    assert "tie_break" not in longest.params and "seed" not in longest.params
    assert tok.tokens == longest.tokens  # the same vocabulary (the MI sums are the same) ...
    sample = english[:20_000]
    assert tok.encode(sample) == longest.with_segmenter("pathpiece-r", seed=9).encode(sample)
    assert tok.encode(sample) != longest.encode(sample)  # ... segmented with random ties
    assert tok.decode(tok.encode(sample)) == sample
    tok.save(tmp_path / "a")
    again = Tokenizer.load(tmp_path / "a")
    assert (again.params, again.segmenter_params) == (tok.params, tok.segmenter_params)
    assert again.encode(sample) == tok.encode(sample)
    # Deterministic for a seed: the same file; the seed defaults to 0.
    tokfx.train(english, "pathpiece", vocab_size=700, pattern="firstspace", initial_size=2000,
                tie_break="random", seed=9).save(tmp_path / "b")
    assert (tmp_path / "b" / "tokfx.json").read_bytes() == (tmp_path / "a" / "tokfx.json").read_bytes()
    zero = tokfx.train(english, "pathpiece", vocab_size=700, pattern="firstspace", initial_size=2000,
                       tie_break="random")
    assert (zero.params["seed"], zero.segmenter_params["seed"]) == (0, 0)
    # Another segmenter picked at training keeps the seed where it takes one.
    other = tokfx.train(english, "pathpiece", vocab_size=700, pattern="firstspace", initial_size=2000,
                        tie_break="random", seed=9, segmenter="pathpiece-r", segmenter_params={"max_width": 8})
    assert other.segmenter_params == {"max_width": 8, "seed": 9}


def test_trained_tokenizer(english, tmp_path):
    tok = tokfx.train(english, "pathpiece", vocab_size=700, pattern="firstspace", initial_size=2000)
    assert tok.vocab_size == 700 and tok.segmenter == "pathpiece-l" and tok.algorithm == "pathpiece"
    assert tok.merge_ids == []
    assert all(tok.token_to_id(bytes([b])) == b for b in range(256))
    assert max(len(t) for i, t in enumerate(tok.tokens) if i != tok.special_tokens[EOT]) <= 16
    assert len(set(tok.tokens)) == 700
    assert tok.decode(tok.encode(english)) == english
    tok.save(tmp_path)
    again = Tokenizer.load(tmp_path)
    assert again.encode(english[:3000]) == tok.encode(english[:3000])
    assert again.params["schedule"] == default_schedule(2000, 700)
    # Same input and config, same file.
    tokfx.train(english, "pathpiece", vocab_size=700, pattern="firstspace", initial_size=2000).save(tmp_path / "b")
    assert (tmp_path / "b" / "tokfx.json").read_bytes() == (tmp_path / "tokfx.json").read_bytes()


def test_ngram_initial_vocabulary_and_other_segmenter(english):
    tok = tokfx.train(english, "pathpiece", vocab_size=500, pattern="firstspace", initial_vocab="ngram",
                      initial_size=1500, max_width=8, segmenter="pathpiece-r",
                      segmenter_params={"seed": 5})
    assert tok.vocab_size == 500
    assert (tok.segmenter, tok.segmenter_params) == ("pathpiece-r", {"max_width": 8, "seed": 5})
    assert max(len(t) for t in tok.tokens[:-1]) <= 8
    assert tok.decode(tok.encode(english[:5000])) == english[:5000]


def test_unigram_initial_vocabulary_is_our_unigram_of_initial_size(english):
    from tokfx.alphabet import BYTES
    from tokfx.models.base import Target
    from tokfx.models.top_down import initial_tokens
    from tokfx.progress import QUIET
    from tokfx.special_tokens import SpecialTokens

    counts = tokfx.count_pretokens(english, "firstspace")
    target = Target(500, SpecialTokens(["<|endoftext|>"]), BYTES, "firstspace")
    tokens = initial_tokens(counts, "unigram", 1500, target, 8, QUIET, "pathpiece")
    unigram = tokfx.train(counts, "unigram", vocab_size=1500, pattern="firstspace", max_width=8)
    assert tokens == [tuple(t) for t in unigram.tokens[:-1]]  # base symbols, then by score
    tok = tokfx.train(english, "pathpiece", vocab_size=500, pattern="firstspace", initial_vocab="unigram",
                      initial_size=1500, max_width=8)
    assert tok.vocab_size == 500 and tok.params["initial_vocab"] == "unigram"
    assert set(tok.tokens[:-1]) <= set(tokens)
    assert tok.decode(tok.encode(english[:5000])) == english[:5000]


def test_space_variant_holds_on_every_pathpiece_token(english):
    tok = tokfx.train(english, "pathpiece", vocab_size=600, pattern="space", initial_size=1500)
    assert not [t for t in tok.tokens[:-1] if len(t) > 1 and ord(" ") in t]


def test_bad_settings_are_refused(english):
    with pytest.raises(ValueError, match="unknown initial vocabulary"):
        tokfx.train(english, "pathpiece", vocab_size=500, initial_vocab="wordpiece")
    with pytest.raises(ValueError, match="smaller than vocab_size"):
        tokfx.train(english, "pathpiece", vocab_size=500, initial_size=400)
    with pytest.raises(ValueError, match="must decrease"):
        tokfx.train(english, "pathpiece", vocab_size=500, initial_size=1000, schedule=[800, 900, 500])
    with pytest.raises(ValueError, match="end at vocab_size 500"):  # no round would reach 500
        tokfx.train(english, "pathpiece", vocab_size=500, initial_size=1000, schedule=[])
    with pytest.raises(ValueError, match="needs merges"):
        tokfx.train(english, "pathpiece", vocab_size=500, initial_size=600, segmenter="bpe")
    with pytest.raises(ValueError, match="unknown segmenter"):
        tokfx.train(english, "pathpiece", vocab_size=500, segmenter="shortest")
    with pytest.raises(ValueError, match="takes no parameter 'initial_size'"):
        tokfx.train(english, "bpe", vocab_size=500, initial_size=600)
    with pytest.raises(ValueError, match="unknown tie_break 'shortest'"):
        tokfx.train(english, "pathpiece", vocab_size=500, tie_break="shortest")
    with pytest.raises(ValueError, match="seed applies only with tie_break 'random'"):
        tokfx.train(english, "pathpiece", vocab_size=500, seed=3)
    with pytest.raises(ValueError, match=r"seed must be in \[0, 2\*\*64\)"):
        tokfx.train(english, "pathpiece", vocab_size=500, tie_break="random", seed=-1)
    with pytest.raises(TypeError, match="tie_break must be a string"):
        tokfx.train(english, "pathpiece", vocab_size=500, tie_break=1)


def test_training_settings_route_options_to_the_trainer_and_the_segmenter():
    assert training_settings("pathpiece", None, initial_vocab="ngram", initial_size=None,
                             max_width=8, seed=None) == {"initial_vocab": "ngram", "max_width": 8}
    assert training_settings("pathpiece", "pathpiece-r", max_width=8, seed=3) == {
        "max_width": 8, "segmenter": "pathpiece-r", "segmenter_params": {"max_width": 8, "seed": 3}}
    # BPE takes no max_width; the segmenter over its vocabulary does.
    assert training_settings("bpe", "greedy", max_width=12, initial_size=None) == {
        "segmenter": "greedy", "segmenter_params": {"max_width": 12}}
    with pytest.raises(ValueError, match="initial_size does not apply to algorithm 'bpe'"):
        training_settings("bpe", None, initial_size=5000)
    with pytest.raises(ValueError, match="seed does not apply"):
        training_settings("pathpiece", "pathpiece-l", seed=3)
    # tie_break "random": the seed goes to the construction, and to pathpiece-r where given.
    assert training_settings("pathpiece", None, tie_break="random", seed=3) == {"tie_break": "random", "seed": 3}
    assert training_settings("pathpiece", "pathpiece-r", tie_break="random", seed=3) == {
        "tie_break": "random", "seed": 3, "segmenter": "pathpiece-r", "segmenter_params": {"seed": 3}}
    # With the longest rule the seed is the segmenter's alone (as before tie_break existed) ...
    assert training_settings("pathpiece", "pathpiece-r", seed=3) == {
        "segmenter": "pathpiece-r", "segmenter_params": {"seed": 3}}
    # ... and refused where nothing takes it.
    for segmenter in (None, "pathpiece-l"):
        with pytest.raises(ValueError, match=r"seed does not apply to algorithm 'pathpiece' \(it applies"
                                             r" only with tie_break 'random'\)"):
            training_settings("pathpiece", segmenter, tie_break="longest", seed=3)
    with pytest.raises(ValueError, match="tie_break does not apply to algorithm 'bpe'"):
        training_settings("bpe", None, tie_break="random")


def test_cjk_alphabet_vocabulary():
    from conftest import corpus_text
    text = corpus_text("chinese/hongloumeng.txt")[:40_000]
    tok = tokfx.train(text, "pathpiece", vocab_size=1200, pattern="firstspace", alphabet="cjk",
                      initial_size=2500)
    assert tok.vocab_size == 1200 and tok.alphabet.name == "cjk"
    assert tok.tokens[:tok.alphabet.size] == [(s,) for s in range(tok.alphabet.size)]
    assert tok.decode(tok.encode(text[:5000])) == text[:5000]
