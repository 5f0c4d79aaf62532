"""SaGe vocabulary construction: schedules, round invariants and drops against the pure-Python
loss, the trained tokenizer, CLI and pipeline routing."""
import json
from array import array
from itertools import accumulate

import pytest

import tokfx
from conftest import fixture_path
from tokfx import Tokenizer
from tokfx.cli.main import main
from tokfx.reference import sage_loss as ref
from tokfx.alphabet import BYTES
from tokfx.formats.counts import read_counts
from tokfx.counting import count_lines, count_lines_file
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.progress import QUIET
from tokfx.reference.path_segment import segment
from tokfx.models.sage.pieces import greedy_pieces, line_pieces
from tokfx.models.base import Target
from tokfx.models.sage.trainer import SageTrainer, default_embeddings_schedule, default_schedule, prune_rounds
from tokfx.special_tokens import SpecialTokens
from tokfx.formats.tokfx_json import tokenizer_json_bytes
from tokfx.models.training import training_settings

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
    tok = tokfx.train(counts, "sage", vocab_size=258, initial_size=259, schedule=[258], context="pretoken")
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
    # Counts (and lines) gathered in another order, as the pipeline's are, give the same tokenizer.
    counts = tokfx.count_pretokens(english, "gpt2", [EOT])
    shuffled = dict(reversed(list(counts.items())))
    lines = dict(reversed(list(count_lines(english, [EOT]).items())))
    assert tokfx.train(shuffled, "sage", vocab_size=500, initial_size=1000, schedule=[800, 600, 500],
                       embeddings_schedule=[1000, 600], lines=lines).tokens == tok.tokens
    by_pretoken = tokfx.train(english, "sage", vocab_size=500, initial_size=1000, schedule=[800, 600, 500],
                              embeddings_schedule=[1000, 600], context="pretoken")
    assert tokfx.train(shuffled, "sage", vocab_size=500, initial_size=1000, schedule=[800, 600, 500],
                       embeddings_schedule=[1000, 600], context="pretoken").tokens == by_pretoken.tokens


def test_unigram_initial_vocabulary(english):
    settings = dict(vocab_size=500, initial_size=1000, schedule=[800, 600, 500], embeddings_schedule=[1000, 600],
                    context="pretoken")
    tok = tokfx.train(english, "sage", initial_vocab="unigram", **settings)
    assert tok.vocab_size == 500 and tok.params["initial_vocab"] == "unigram"
    unigram = tokfx.train(english, "unigram", vocab_size=1000)
    assert set(tok.tokens[:-1]) <= set(unigram.tokens[:-1])
    assert tok.decode(tok.encode(english)) == english
    # SaGe's own initial vocabulary is not recorded, as before.
    assert "initial_vocab" not in tokfx.train(english, "sage", **settings).params
    with pytest.raises(ValueError, match="unknown initial vocabulary"):
        tokfx.train(english, "sage", initial_vocab="wordpiece", **settings)


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
                          "embeddings_schedule": [400, 350], "seed": 3, "context": "line"}
    assert max(len(t) for t in tok.tokens[:-1]) <= 8


def test_cli_trains_sage_over_lines_from_corpus_files(tmp_path, english, capsys):
    # A .txt file (read in ranges, cut at special tokens or newlines) and a .jsonl file: the
    # CLI counts their lines beside the pre-tokens, as tokfx.train does over the texts.
    txt, jsonl = tmp_path / "a.txt", tmp_path / "b.jsonl"
    txt.write_text(english[:20_000] + EOT + english[20_000:30_000], encoding="utf-8")
    jsonl.write_text("".join(json.dumps({"text": english[i:i + 4000]}) + "\n" for i in range(30_000, 50_000, 4000)),
                     encoding="utf-8")
    texts = [txt.read_text(encoding="utf-8")] + [english[i:i + 4000] for i in range(30_000, 50_000, 4000)]
    assert count_lines_file(txt, [EOT], range_bytes=3000) == count_lines(texts[0], [EOT])
    options = ["--algorithm", "sage", "--vocab-size", "500", "--initial-size", "800", "--schedule", "650,500",
               "--embeddings-schedule", "800,650", "--context", "line"]
    assert main(["train", str(txt), str(jsonl), "-o", str(tmp_path / "tok"), "-q", *options]) == 0
    expected = tokfx.train(texts, "sage", vocab_size=500, initial_size=800, schedule=[650, 500],
                           embeddings_schedule=[800, 650], context="line", special_tokens=[EOT])
    assert (tmp_path / "tok" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    # Or from counts files: tokfx count writes the line counts beside the pre-token counts.
    from beam_jobs.pipelines import run
    counts, lines = tmp_path / "c.parquet", tmp_path / "l.parquet"
    run("count", ["--input", str(txt), "--input", str(jsonl), "--output", str(counts), "--lines-output", str(lines),
                  "-q"])
    assert read_counts(lines, "line") == count_lines(texts, [EOT])
    assert main(["train", "--counts", str(counts), "--lines", str(lines), "-o", str(tmp_path / "from-counts"),
                 "-q", *options]) == 0
    assert (tmp_path / "from-counts" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    for argv, message in [
            (["--counts", str(counts)], "needs the corpus's line counts beside --counts: --lines FILE"),
            (["--counts", str(counts), "--lines", str(counts)], "a line counts file has columns line: binary"),
            ([str(txt), "--lines", str(lines)], "--lines goes with --counts"),
            (["--counts", str(counts), "--lines", str(lines), "--context", "pretoken"], "--lines is only read")]:
        assert main(["train", *options, *argv, "-o", str(tmp_path / "x"), "-q"]) == 2
        assert message in capsys.readouterr().err


def test_lines_are_counted_between_special_tokens_up_to_each_newline():
    # "ab\n" | "cd" (cut by the special token) | "ab\n" | "\n" | "x" (no newline at the end).
    assert count_lines(f"ab\ncd{EOT}ab\n\nx", [EOT]) == {b"ab\n": 2, b"cd": 1, b"\n": 1, b"x": 1}
    assert count_lines(["a\r\nb", "b"]) == {b"a\r\n": 1, b"b": 2}  # only "\n" ends a line


def test_line_pieces_flag_each_pretoken_start():
    # GPT-2 pre-tokens: "hi", " you", "\n" | "ok". Sorted lines: b"hi you\n" < b"ok".
    symbols, offsets, counts, cuts = line_pieces({b"ok": 1, b"hi you\n": 3}, PreTokenizer("gpt2"), BYTES)
    assert list(symbols) == list(b"hi you\nok") and list(offsets) == [0, 7, 9] and list(counts) == [3, 1]
    assert cuts.tolist() == [1, 0, 1, 0, 0, 0, 1, 1, 0]


def test_rounds_over_lines_equal_the_reference_with_cuts(english):
    # The same check as over pre-tokens, the pieces being lines cut into their pre-tokens.
    text = english[:6_000]
    initial = tokfx.train(text, "bpe", vocab_size=700, special_tokens=())
    tokens = [tuple(t) for t in initial.tokens]
    symbols, offsets, counts, cuts = line_pieces(count_lines(text), PreTokenizer("gpt2"), BYTES)
    pieces = [list(symbols[offsets[k]:offsets[k + 1]]) for k in range(len(counts))]
    piece_cuts = [cuts[offsets[k]:offsets[k + 1]].tolist() for k in range(len(counts))]
    # Word2vec's sentences: the greedy segmentation of each pre-token, concatenated per line.
    expected = []
    for piece, cut in zip(pieces, piece_cuts):
        ends = ref.pretoken_ends(cut, len(piece))
        expected.append([t for b, e in zip([0] + ends, ends) for _, _, t in segment(piece[b:e], tokens, 16, "greedy")])
    assert greedy_pieces(symbols, offsets, tokens, 16, cuts) == expected
    done, = prune_rounds(symbols, offsets, counts, tokens, [400], [True], 256, 16, 0, cuts)
    losses, occurrences, corpus_tokens = ref.sage_losses(pieces, list(counts), tokens, done.embeddings.tolist(),
                                                         cuts=piece_cuts)
    assert done.corpus_tokens == corpus_tokens == sum(c * len(ids) for c, ids in zip(counts, expected))
    in_use = [i for i in range(256, len(tokens)) if occurrences[i]]
    dropped = set(sorted(in_use, key=lambda i: (losses[i], i))[:256 + len(in_use) - 400])
    assert done.dropped and done.active == [tokens[i] for i in in_use if i not in dropped]


def test_context_line_trains_from_texts_or_lines(english, tmp_path):
    settings = dict(vocab_size=500, initial_size=1000, schedule=[800, 600, 500], embeddings_schedule=[1000, 600])
    tok = tokfx.train(english, "sage", context="line", **settings)
    assert (tok.vocab_size, tok.segmenter, tok.params["context"]) == (500, "greedy", "line")
    assert tok.decode(tok.encode(english)) == english
    assert tokfx.train(english, "sage", **settings).tokens == tok.tokens  # the default
    # The same initial BPE as over pre-tokens (from the pre-token counts); another result.
    by_pretoken = tokfx.train(english, "sage", context="pretoken", **settings)
    assert by_pretoken.params["context"] == "pretoken" and by_pretoken.tokens != tok.tokens
    # Deterministic, and a generator of texts is read twice (pre-tokens and lines).
    tok.save(tmp_path / "a")
    tokfx.train((text for text in [english]), "sage", context="line", **settings).save(tmp_path / "b")
    assert (tmp_path / "a" / "tokfx.json").read_bytes() == (tmp_path / "b" / "tokfx.json").read_bytes()
    counts = tokfx.count_pretokens(english, "gpt2", [EOT])
    with pytest.raises(ValueError, match="needs running text"):
        tokfx.train(counts, "sage", context="line", **settings)
    with pytest.raises(ValueError, match="or context='pretoken'"):
        tokfx.train(counts, "sage", **settings)
    # Counts with their line counts (what the CLI and the pipeline count) give the same tokenizer.
    with_lines = tokfx.train(counts, "sage", context="line", lines=count_lines(english, [EOT]), **settings)
    assert tokenizer_json_bytes(with_lines) == tokenizer_json_bytes(tok)
    with pytest.raises(ValueError, match="lines are only read with context='line'"):
        tokfx.train(counts, "sage", context="pretoken", lines=count_lines(english, [EOT]), **settings)
    assert training_settings("sage", None, context="line") == {"context": "line"}
    with pytest.raises(ValueError, match="context must be"):
        tokfx.train(english, "sage", context="document", **settings)
    with pytest.raises(ValueError, match="needs the texts' lines"):
        own = {k: v for k, v in settings.items() if k != "vocab_size"}
        SageTrainer({"context": "line", **own}).train(
            counts, Target(settings["vocab_size"], SpecialTokens(()), BYTES, "gpt2"), QUIET)
    with pytest.raises(ValueError, match="takes no parameter .context."):
        tokfx.train(english, "bpe", context="line")


def test_cjk_alphabet():
    from conftest import corpus_text
    text = corpus_text("chinese/hongloumeng.txt")[:20_000]
    tok = tokfx.train(text, "sage", vocab_size=700, initial_size=1400, alphabet="cjk")
    assert (tok.vocab_size, tok.alphabet.name, tok.segmenter) == (700, "cjk", "greedy")
    assert tok.tokens[:tok.alphabet.size] == [(s,) for s in range(tok.alphabet.size)]
    assert tok.decode(tok.encode(text)) == text
