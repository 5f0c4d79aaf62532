"""Unigram: the Cython passes (tokfx._unigram) against their pure-Python twin and against
brute-force enumeration of every segmentation; the EM steps, the prune rounds and the trained
tokenizer."""
import math
from array import array
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokfx
from conftest import fixture_path
from segmentation_cases import ALPHABET, all_segmentations, vocab_and_text
from tokfx import Tokenizer
from tokfx._packed_tokens import PackedTokens
from tokfx._unigram import digamma, digammas, e_step, piece_ranges, prune_keys, viterbi_counts
from tokfx.alphabet import BYTES
from tokfx.models.unigram import EXPECTED_THRESHOLD, UnigramTrainer, em_rounds, m_step, prune, prune_order, seed_vocabulary
from tokfx.reference import unigram as ref

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def english():
    return fixture_path("corpus.en").read_text(encoding="utf-8")[:50_000]


def packed(pieces, counts):
    offsets = array("q", [0, *accumulate(map(len, pieces))])
    return array("i", [s for p in pieces for s in p]), offsets, array("q", counts)


@st.composite
def corpus_case(draw, integer_scores=False):
    """Tokens (every single symbol first), a score per token, pieces with counts."""
    tokens, _, max_width = draw(vocab_and_text())
    if integer_scores:  # exact sums, so that ties happen and compare exactly
        scores = [float(draw(st.integers(-6, -1))) for _ in tokens]
    else:
        scores = [draw(st.floats(-12.0, -0.01)) for _ in tokens]
    pieces = draw(st.lists(st.lists(st.integers(0, ALPHABET - 1), max_size=8), max_size=6))
    counts = draw(st.lists(st.integers(1, 5), min_size=len(pieces), max_size=len(pieces)))
    return tokens, scores, max_width, pieces, counts


def ids_of(tokens):
    return ref.token_ids(tokens)


# Symbol ids the passes' trie (walk_trie.pxd) places apart: in the root's array (below its
# largest root symbol, at most 2**20) or in the hash table above, and ids a 32-bit filter folds.
SPREAD = [0, 1, 31, 32, 33, 1023, 1024, 4196, 65_537, 2**20 - 1, 2**20, 2**20 + 1, 2**31 - 1]


@st.composite
def spread_case(draw, repeats=True):
    """As corpus_case, over symbols anywhere in [0, 2**31), with longer tokens and pieces (the
    lattice's edge lists up to max_width 16), and ids left out (a repeated token: the first
    keeps its id) unless `repeats` is False."""
    symbols = draw(st.lists(st.sampled_from(SPREAD), min_size=1, max_size=6, unique=True))
    longer = draw(st.lists(st.lists(st.sampled_from(symbols), min_size=2, max_size=17), max_size=20))
    tokens = [[s] for s in symbols] + [draw(st.sampled_from([t, [symbols[0]]])) if repeats else t for t in longer]
    scores = [draw(st.floats(-12.0, -0.01)) for _ in tokens]
    pieces = draw(st.lists(st.lists(st.sampled_from(symbols), max_size=40), max_size=5))
    counts = draw(st.lists(st.integers(1, 5), min_size=len(pieces), max_size=len(pieces)))
    return tokens, scores, draw(st.integers(1, 16)), pieces, counts


@settings(max_examples=400, deadline=None)
@given(st.one_of(corpus_case(), spread_case()))
def test_e_step_equals_the_reference(case):
    tokens, scores, max_width, pieces, counts = case
    expected, likelihood = e_step(*packed(pieces, counts), PackedTokens.of(tokens), scores, max_width)
    ref_expected, ref_likelihood = ref.e_step(pieces, counts, tokens, scores, max_width)
    assert list(expected) == ref_expected
    assert likelihood == ref_likelihood


@settings(max_examples=400, deadline=None)
@given(st.one_of(corpus_case(), corpus_case(integer_scores=True), spread_case(), spread_case(repeats=False)))
def test_viterbi_counts_and_prune_keys_equal_the_reference(case):
    tokens, scores, max_width, pieces, counts = case
    freq, corpus_tokens = viterbi_counts(*packed(pieces, counts), PackedTokens.of(tokens), scores, max_width)
    assert (list(freq), corpus_tokens) == ref.viterbi_counts(pieces, counts, tokens, scores, max_width)
    kinds, values = prune_keys(PackedTokens.of(tokens), scores, freq, sum(counts), max_width)
    assert (list(kinds), list(values)) == ref.prune_keys(tokens, scores, list(freq), sum(counts), max_width)


def brute_force(symbols, tokens, scores, max_width):
    """Every segmentation with its score (summed left to right, as Viterbi does)."""
    ids = ids_of(tokens)
    found = []
    for segmentation in all_segmentations(symbols, set(ids), max_width):
        score = 0.0
        for b, e in segmentation:
            score += scores[ids[tuple(symbols[b:e])]]
        found.append((score, segmentation))
    return found


@settings(max_examples=400, deadline=None)
@given(st.one_of(corpus_case(), corpus_case(integer_scores=True)))
def test_viterbi_is_the_brute_force_best_with_the_longest_last_token_on_ties(case):
    tokens, scores, max_width, pieces, _ = case
    for symbols in pieces:
        if not symbols:
            continue
        found = brute_force(symbols, tokens, scores, max_width)
        top = max(score for score, _ in found)
        # Among the best, the greatest widths read from the last token back.
        want = max((s for score, s in found if score == top), key=lambda s: [e - b for b, e in reversed(s)])
        freq, _ = viterbi_counts(*packed([symbols], [1]), PackedTokens.of(tokens), scores, max_width)
        score, path = ref.viterbi(symbols, tokens, scores, max_width)
        chosen = [(b, e) for b, e, _ in path]
        assert score == top and dict((tuple(s), sc) for sc, s in found)[tuple(chosen)] == top
        # Float sums: two paths whose prefixes differ by an ulp may round to the same total, a
        # tie that Viterbi, keeping the better prefix at each position, never sees (nor does
        # sentencepiece's). The tie rule is checked where the sums are exact.
        if all(x.is_integer() for x in scores):
            assert chosen == want
        ids = ids_of(tokens)
        want_freq = [0] * len(tokens)
        for b, e in chosen:
            want_freq[ids[tuple(symbols[b:e])]] += 1
        assert list(freq) == want_freq


@settings(max_examples=300, deadline=None)
@given(corpus_case())
def test_expected_counts_and_likelihood_are_the_brute_force_sums(case):
    tokens, scores, max_width, pieces, counts = case
    ids = ids_of(tokens)
    want, want_likelihood = [0.0] * len(tokens), 0.0
    for symbols, count in zip(pieces, counts):
        if not symbols:
            continue
        found = brute_force(symbols, tokens, scores, max_width)
        z = sum(math.exp(score) for score, _ in found)
        want_likelihood += count * math.log(z)
        for score, segmentation in found:
            for b, e in segmentation:
                want[ids[tuple(symbols[b:e])]] += count * math.exp(score) / z
    expected, likelihood = e_step(*packed(pieces, counts), PackedTokens.of(tokens), scores, max_width)
    assert list(expected) == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert likelihood == pytest.approx(want_likelihood, rel=1e-9, abs=1e-12)


def test_alternatives_split_own_and_single_symbol_tokens():
    tokens = [(0,), (1,), (0, 1), (0, 1, 1), (1, 1)]
    # (0, 1): -1 beats 0 + 1 = -2 - 2: its own best, alternative [0, 1].
    # (0, 1, 1): -9 loses to (0, 1) + 1 = -3: split. (1, 1): -5 loses to 1 + 1 = -4: split.
    scores = [-2.0, -2.0, -1.0, -9.0, -5.0]
    assert ref.alternatives(tokens, scores, 16) == [[], [], [0, 1], None, None]
    # So the core's keys: single symbols kind 2, (0, 1) by its loss, the split ones by score.
    kinds, values = prune_keys(PackedTokens.of(tokens), scores, array("q", [5, 5, 5, 5, 5]), 10, 16)
    assert list(kinds) == [2, 2, 1, 0, 0] and values[3:] == array("d", [-9.0, -5.0])
    # A tie goes to the token itself.
    assert ref.alternatives(tokens, [-2.0, -2.0, -4.0, -9.0, -5.0], 16)[2] == [0, 1]
    assert prune_keys(PackedTokens.of(tokens), [-2.0, -2.0, -4.0, -9.0, -5.0], array("q", [5] * 5), 10, 16)[0][2] == 1


def test_digamma_is_sentencepieces():
    # digamma(1) = -Euler's gamma; digamma(x + 1) = digamma(x) + 1 / x.
    assert digamma(1.0) == pytest.approx(-0.5772156649015329, abs=1e-9)  # an asymptotic series
    assert digamma(10.5) == pytest.approx(digamma(9.5) + 1 / 9.5, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(0.5, 1e12), st.sampled_from([0.5, 1.0, 6.999999999999999, 7.0, 7.5])),
                max_size=20))
def test_digamma_equals_the_reference(values):
    assert list(digammas(array("d", values))) == [ref.digamma(v) for v in values]
    assert [digamma(v) for v in values] == [ref.digamma(v) for v in values]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 20), max_size=40), st.integers(1, 9))
def test_piece_ranges_equal_the_reference(lengths, ranges):
    pieces = [[0] * n for n in lengths]
    offsets = array("q", [0, *accumulate(lengths)])
    found = piece_ranges(offsets, ranges)
    assert found == ref.piece_ranges(pieces, ranges)
    # They cover the pieces in order, and a range's pieces start within one share of symbols.
    assert [first for first, _ in found[1:]] == [last for _, last in found[:-1]]
    assert found[0][0] == 0 and found[-1][1] == len(pieces)
    for first, last in found:
        assert last == first or (offsets[last - 1] - offsets[first]) * ranges <= offsets[-1]


def test_m_step_drops_below_the_threshold_but_never_base_symbols_or_below_the_floor():
    tokens = PackedTokens.of([(0,), (1,), (0, 1), (1, 0), (1, 1)])
    expected = [3.0, 0.1, 2.0, 0.4, 0.2]
    kept, scores = m_step(tokens, expected, 2, 2)
    assert list(kept) == [(0,), (1,), (0, 1)]
    total = digamma(5.0)
    assert scores[0] == digamma(3.0) - total and scores[2] == digamma(2.0) - total
    assert scores[1] == min(scores[0], scores[2]) - 10.0  # a base symbol below the threshold
    # Never below the floor: the fewest expected go first.
    kept, _ = m_step(tokens, expected, 2, 4)
    assert list(kept) == [(0,), (1,), (0, 1), (1, 0)]
    assert EXPECTED_THRESHOLD == 0.5


def test_prune_order_is_sentencepieces_loss():
    tokens = [(0,), (1,), (0, 1), (0, 0), (1, 1), (1, 0)]
    scores = [-1.0, -1.0, -2.0, -3.0, -4.0, -2.5]
    freq = [10, 6, 4, 0, 2, 1]
    alts = [[], [], [0, 1], [0, 0], None, [1, 0]]
    total = sum(freq)

    def loss(i):  # sentencepiece's PruneSentencePieces (with the token's own alternative count)
        alt_total = math.log(total + freq[i] * (len(alts[i]) - 1))
        return freq[i] / 8 * ((math.log(freq[i]) - math.log(total))
                              - sum(math.log(freq[n] + freq[i]) - alt_total for n in alts[i]))

    # (1, 1) is split, (0, 0) unused: dropped first, lowest score first; then by loss.
    by_loss = sorted([2, 5], key=loss)
    kinds, values = ref.prune_keys_of(alts, scores, freq, 8)
    assert values[2] == loss(2) and values[5] == loss(5)
    assert prune_order(PackedTokens.of(tokens), kinds, values, 2) == [4, 3, *by_loss]


def corpus_arrays(counts):
    words = list(counts)
    symbols, offsets = BYTES.map_pieces(b"".join(words), array("q", accumulate(map(len, words))))
    return symbols, offsets, array("q", counts.values())


def test_each_round_keeps_every_base_symbol_and_ends_at_the_scheduled_size(english):
    counts = tokfx.count_pretokens(english, "gpt2")
    data = corpus_arrays(dict(sorted(counts.items())))
    tokens, scores = seed_vocabulary(*data, 256, 1_000_000, 16)
    assert list(tokens)[:256] == [(b,) for b in range(256)] and len(set(tokens)) == len(tokens)
    params = UnigramTrainer.Params()
    rounds = list(em_rounds(data, tokens, scores, 600, 256, params))
    assert len(rounds) > 3
    for done in rounds[:-1]:
        assert len(done.tokens) == max(600, int(done.em_size * 0.75))
        assert list(done.tokens)[:256] == [(b,) for b in range(256)]
        assert all(math.isfinite(s) for s in done.scores)
    assert len(rounds[-1].tokens) == rounds[-1].em_size == 600
    # One prune recomputed from the twin's Viterbi counts and alternatives.
    before = rounds[0]
    expected, _ = e_step(*data, before.tokens, before.scores, 16)
    kept, kept_scores = m_step(before.tokens, expected, 256, 600)
    kept, kept_scores = m_step(kept, e_step(*data, kept, kept_scores, 16)[0], 256, 600)
    done = prune(*data, kept, kept_scores, max(600, int(len(kept) * 0.75)), 256, 16)
    words = [list(w) for w in counts_sorted(counts)]
    freq, _ = ref.viterbi_counts(words, list(data[2]), list(kept), kept_scores, 16)
    order = prune_order(kept, *ref.prune_keys(list(kept), kept_scores, freq, sum(data[2]), 16), 256)
    dropped = set(order[:len(kept) - done.size])
    assert list(done.tokens) == [t for i, t in enumerate(kept) if i not in dropped]


def counts_sorted(counts):
    return sorted(counts)


@pytest.mark.parametrize("vocab_size", [300, 700, 1500])
def test_final_vocabulary_has_exactly_vocab_size_ids(english, vocab_size):
    tok = tokfx.train(english, "unigram", vocab_size=vocab_size, pattern="gpt2")
    assert tok.vocab_size == vocab_size and len(set(tok.tokens)) == vocab_size
    assert tok.segmenter == "likelihood" and tok.merge_ids == []
    assert tok.tokens[:256] == [(b,) for b in range(256)]
    assert tok.special_tokens == {EOT: vocab_size - 1} and tok.scores[-1] is None
    learned = tok.scores[256:-1]
    assert learned == sorted(learned, reverse=True)  # learned tokens by score
    assert max(len(t) for t in tok.tokens[:-1]) <= 16
    assert tok.decode(tok.encode(english)) == english


def test_cjk_alphabet():
    text = fixture_path("corpus.en").read_text(encoding="utf-8")[:5000] + "天下大势，分久必合，合久必分。" * 30
    tok = tokfx.train(text, "unigram", vocab_size=800, alphabet="cjk", special_tokens=())
    assert tok.vocab_size == 800 and tok.alphabet.name == "cjk"
    assert tok.decode(tok.encode(text)) == text


def test_save_load_round_trip_and_determinism(english, tmp_path):
    tok = tokfx.train(english, "unigram", vocab_size=600, pattern="gpt2")
    tok.save(tmp_path / "a")
    again = Tokenizer.load(tmp_path / "a")
    assert again.scores == tok.scores and again.segmenter == "likelihood"
    assert again.encode(english) == tok.encode(english)
    # Same input, same file; the counts' order does not matter.
    counts = tokfx.count_pretokens(english, "gpt2")
    shuffled = dict(reversed(list(counts.items())))
    tokfx.train(shuffled, "unigram", vocab_size=600, pattern="gpt2").save(tmp_path / "b")
    assert (tmp_path / "b" / "tokfx.json").read_bytes() == (tmp_path / "a" / "tokfx.json").read_bytes()


def test_other_segmenters_run_over_a_unigram_vocabulary(english):
    tok = tokfx.train(english, "unigram", vocab_size=600, pattern="gpt2")
    likely = len(tok.encode(english))
    for name in ("greedy", "pathpiece-l", "pathpiece-r"):
        other = tok.with_segmenter(name)
        ids = other.encode(english)
        assert other.decode(ids) == english
        if name != "greedy":
            assert len(ids) <= likely  # the fewest tokens
    # And back: likelihood keeps the scores.
    assert tok.with_segmenter("greedy").with_segmenter("likelihood").encode(english) == tok.encode(english)


def test_likelihood_needs_scores_and_bad_params_are_refused(english):
    bpe = tokfx.train(english[:5000], "bpe", vocab_size=300)
    with pytest.raises(ValueError, match="log probability"):
        bpe.with_segmenter("likelihood")
    for bad in ({"shrinking_factor": 1.0}, {"em_iterations": 0}, {"max_width": 0}, {"seed_size": 100}):
        with pytest.raises(ValueError):
            tokfx.train(english[:5000], "unigram", vocab_size=300, **bad)


def test_encoding_maximises_the_likelihood_under_the_scores(english):
    tok = tokfx.train(english, "unigram", vocab_size=500, pattern="gpt2")
    tokens = [None if s is None else t for t, s in zip(tok.tokens, tok.scores)]
    pretokens = list(tokfx.count_pretokens(english[:3000], "gpt2"))
    data = b"".join(pretokens)
    ends = array("q", accumulate(map(len, pretokens)))
    want = []
    for piece in pretokens:
        want += [t for _, _, t in ref.viterbi(list(piece), tokens, tok.scores, 16)[1]]
    assert tok._encoder.encode_pieces(data, ends) == want


def test_command_line_trains_unigram_with_its_options(tmp_path):
    from tokfx.cli.main import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(fixture_path("corpus.en").read_text(encoding="utf-8")[:20_000], encoding="utf-8")
    main(["train", str(corpus), "-o", str(tmp_path / "tok"), "--algorithm", "unigram", "--vocab-size", "400",
          "--shrinking-factor", "0.5", "--em-iterations", "1", "-q"])
    tok = Tokenizer.load(tmp_path / "tok")
    assert tok.vocab_size == 400 and tok.segmenter == "likelihood"
    assert tok.params["shrinking_factor"] == 0.5 and tok.params["em_iterations"] == 1
    assert tok.params["recipe"] == "sentencepiece"
    main(["train", str(corpus), "-o", str(tmp_path / "ngrams"), "--algorithm", "unigram", "--vocab-size", "400",
          "--recipe", "ngrams", "-q"])
    assert Tokenizer.load(tmp_path / "ngrams").params["recipe"] == "ngrams"


def m_step_plain(tokens, expected, alphabet_size, floor):
    """m_step as first written (sorted low tokens, sets, generator sums): the vectorised one
    must return exactly this."""
    low = sorted((i for i in range(alphabet_size, len(tokens)) if expected[i] < EXPECTED_THRESHOLD),
                 key=lambda i: (expected[i], tokens[i]))
    dropped = set(low[:max(0, len(tokens) - floor)])
    kept = [i for i in range(len(tokens)) if i not in dropped]
    total = 0.0  # left to right (Python 3.11's sum; 3.12's compensates)
    for i in kept:
        if expected[i] >= EXPECTED_THRESHOLD:
            total += expected[i]
    log_total = ref.digamma(total) if total > 0 else 0.0
    scores = [ref.digamma(expected[i]) - log_total if expected[i] >= EXPECTED_THRESHOLD else None for i in kept]
    lowest = min((s for s in scores if s is not None), default=0.0)
    return [tokens[i] for i in kept], [lowest - 10.0 if s is None else s for s in scores]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_m_step_equals_the_plain_version(data):
    # Few distinct values, so that ties (broken by symbols) and the floor both come into play.
    size = data.draw(st.integers(1, 30))
    tokens = [(i,) for i in range(3)] + [tuple(data.draw(st.lists(st.integers(0, 2), min_size=2, max_size=3)))
                                         for _ in range(size)]
    expected = data.draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 3.0, 1e-9]) |
                                  st.floats(0.0, 50.0), min_size=len(tokens), max_size=len(tokens)))
    floor = data.draw(st.integers(3, len(tokens)))
    for values in (expected, array("d", expected)):
        kept, scores = m_step(PackedTokens.of(tokens), values, 3, floor)
        assert (list(kept), scores.tolist()) == m_step_plain(tokens, values, 3, floor)


@pytest.mark.parametrize("tokens, error, message", [
    (PackedTokens.of([(0,), (), (1,)]), ValueError, r"token 1 is empty"),
    (PackedTokens.of([(0,), (1, -1)]), ValueError, r"token 1: symbol -1 is not in \[0, 2\*\*31\)"),
    ([(0,), (1,)], TypeError, r"tokens must be a PackedTokens \(tokfx._packed_tokens\), not list"),
])
def test_passes_refuse_bad_tokens(tokens, error, message):
    scores = [-1.0] * len(tokens)
    data = packed([[0]], [1])
    for call in (lambda: e_step(*data, tokens, scores, 4), lambda: viterbi_counts(*data, tokens, scores, 4),
                 lambda: prune_keys(tokens, scores, array("q", [1] * len(tokens)), 1, 4)):
        with pytest.raises(error, match=message):
            call()


def test_passes_leave_out_repeated_tokens_as_the_twin():
    tokens = [(0,), (1,), (0,), (0, 1), (1,), (1, 0), (0, 1)]
    scores = [-2.0, -2.5, -0.1, -1.0, -0.2, -1.5, -0.5]
    pieces, counts = [[0, 1, 0, 1], [1, 0], [0]], [3, 1, 2]
    expected, likelihood = e_step(*packed(pieces, counts), PackedTokens.of(tokens), scores, 4)
    assert (list(expected), likelihood) == ref.e_step(pieces, counts, tokens, scores, 4)
    assert expected[2] == expected[4] == expected[6] == 0.0
    freq, corpus_tokens = viterbi_counts(*packed(pieces, counts), PackedTokens.of(tokens), scores, 4)
    assert (list(freq), corpus_tokens) == ref.viterbi_counts(pieces, counts, tokens, scores, 4)


def test_the_vocabulary_does_not_depend_on_the_number_of_threads(english, monkeypatch):
    """The passes sum per piece range, then the ranges in order: one thread or several (here
    more than PASS_RANGES would use), the same floats, so the same tokenizer."""
    import tokfx._unigram

    def trained(threads):
        monkeypatch.setattr(tokfx._unigram, "pass_threads", lambda: threads)
        tok = tokfx.train(english, "unigram", vocab_size=700, pattern="gpt2")
        return tok.tokens, tok.scores

    assert trained(1) == trained(3) == trained(8)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_prune_order_equals_the_plain_sort(data):
    # Few distinct keys, so that runs of equal keys (ordered by symbols) are common.
    size = data.draw(st.integers(0, 30))
    tokens = data.draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=size, max_size=size,
                                unique=True))
    kinds = array("b", data.draw(st.lists(st.integers(0, 2), min_size=size, max_size=size)))
    values = array("d", data.draw(st.lists(st.sampled_from([-1.5, 0.0, -0.0, 2.0, 1e-300]), min_size=size,
                                           max_size=size)))
    alphabet_size = data.draw(st.integers(0, size))
    plain = sorted(range(alphabet_size, size), key=lambda i: (kinds[i], values[i], tokens[i]))
    assert prune_order(PackedTokens.of(tokens), kinds, values, alphabet_size) == plain


def test_sentencepiece_prune_drops_unused_and_split_tokens_outright(english):
    counts = tokfx.count_pretokens(english, "gpt2")
    data = corpus_arrays(dict(sorted(counts.items())))
    tokens, scores = seed_vocabulary(*data, 256, 1_000_000, 16, array("i", bytes(4 * 256)))
    tokens, scores = m_step(tokens, e_step(*data, tokens, scores, 16)[0], 256, 600)
    size = max(660, int(len(tokens) * 0.75))
    done = prune(*data, tokens, scores, size, 256, 16, floor=600)
    # The twin's keys: kind 0 (unused or split), 1 (with its loss), 2 (no alternative).
    freq, _ = ref.viterbi_counts([list(w) for w in sorted(counts)], list(data[2]), list(tokens), scores, 16)
    kinds, values = ref.prune_keys(list(tokens), scores, freq, sum(data[2]), 16)
    kept = set(done.tokens)
    learned = range(256, len(tokens))
    assert list(tokens)[:256] == list(done.tokens)[:256]
    assert any(kinds[i] == 0 for i in learned) and not any(tokens[i] in kept for i in learned if kinds[i] == 0)
    assert all(tokens[i] in kept for i in learned if kinds[i] == 2)
    losses_kept = [values[i] for i in learned if kinds[i] == 1 and tokens[i] in kept]
    losses_dropped = [values[i] for i in learned if kinds[i] == 1 and tokens[i] not in kept]
    assert losses_dropped and min(losses_kept) >= max(losses_dropped)
    assert done.size == len(done.tokens) == max(size, 256 + sum(kinds[i] == 2 for i in learned))
    # Never below the floor, however many tokens are unused.
    assert prune(*data, tokens, scores, len(tokens) - 1, 256, 16, floor=len(tokens) - 1).size == len(tokens) - 1
