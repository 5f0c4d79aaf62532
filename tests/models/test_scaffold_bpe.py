"""Scaffold-BPE: the merge loop's scaffold mode against its pure-Python twin, hand-worked
examples, invariants on real text, encoding with demolition, files, CLI."""
import json
from array import array
from collections import Counter
from pathlib import Path

import fastjsonschema
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import tokfx
from conftest import corpus_text, fixture_path
from bpe_inputs import byte_words, packed, pretoken_counts, training_inputs
from tokfx._bpe_encode import BPEEncoder
from tokfx._bpe_train import ScaffoldEvent, train_scaffold_merges
from tokfx.alphabet import Alphabet
from tokfx.models.bpe.merge_loop import BYTE_KEYS, packed_words, symbol_keys
from tokfx.cli.main import main
from tokfx.pre_tokenizers.patterns import GPT2
from tokfx.reference.bpe_encode import encode_piece_with_demolition as reference_encode_piece
from tokfx.reference.bpe_train import train_merges as reference_bpe_merges
from tokfx.reference.bpe_train import train_scaffold_merges as reference_scaffold_merges
from tokfx.models.scaffold_bpe.trainer import train_scaffold_vocab
from tokfx.progress import Progress
from tokfx.segmenters.scaffold_bpe import ScaffoldVocab
from tokfx.formats.tokfx_json import TOKFX_JSON, tokenizer_json_bytes

MERGED, FLAGGED, UNFLAGGED = ScaffoldEvent.MERGED, ScaffoldEvent.FLAGGED, ScaffoldEvent.UNFLAGGED
SCHEMA = Path(__file__).parents[2] / "schemas" / "tokfx.schema.json"
x, y, z, a, b, c, d, q = b"xyzabcdq"


def events(flat_log) -> list[tuple[int, int, int, int]]:
    return [tuple(flat_log[i:i + 4]) for i in range(0, len(flat_log), 4)]


def core_log(word_counts, symbol_keys, num_normal):
    merges, scaffold, flat_log = train_scaffold_merges(*packed(word_counts), list(symbol_keys), num_normal)
    log = events(flat_log)
    assert merges == merges_of(log) and scaffold == sorted(final_scaffold(log))
    return log


def merges_of(log):
    return [(left, right) for kind, left, right, _ in log if kind == MERGED]


def final_scaffold(log) -> set[int]:
    flagged = set()
    for kind, token, *_ in log:
        if kind == FLAGGED:
            flagged.add(token)
        elif kind == UNFLAGGED:
            flagged.remove(token)
    return flagged


# ---- hand-worked examples (the paper's "zona" inside "Arizona", in miniature: "yz" is made
# first, then used almost only inside "xyz")

def test_a_part_left_rare_is_flagged_and_never_emitted():
    # {xyz: 10, yz: 2, ab: 5, zq: 2}, 3 normal tokens to learn.
    # 1. pairs xy 10, yz 10+2 = 12, ab 5, zq 2: merge (y, z) -> 256 "yz", standalone 12.
    # 2. pairs (x, yz) 10, ab 5, zq 2: merge (x, 256) -> 257 "xyz". "yz" loses the 10 merged
    #    occurrences: 2 left, strictly below the new head (ab, 5): flagged. Normal: 1.
    # 3. best of pairs ab 5, zq 2 and the flagged "yz" 2: merge (a, b) -> 258. Normal: 2.
    # 4. zq 2 ties with "yz" 2; as BPE, compare keys, the token standing for ("yz", ""):
    #    "z" > "yz", so the pair wins: merge (z, q) -> 259. Normal: 3, done.
    counts = {b"xyz": 10, b"yz": 2, b"ab": 5, b"zq": 2}
    expected = [(MERGED, y, z, 12), (MERGED, x, 256, 10), (FLAGGED, 256, 2, 5),
                (MERGED, a, b, 5), (MERGED, z, q, 2)]
    words = byte_words(Counter(counts))
    assert core_log(words, BYTE_KEYS, 3) == expected
    assert reference_scaffold_merges(words, BYTE_KEYS, 3) == expected

    tok = tokfx.train(counts, "scaffold-bpe", 256 + 3, special_tokens=())
    assert tok.vocab_size == 259
    # Model ids skip the scaffold token: "xyz" 256, "ab" 257, "zq" 258.
    assert tok.tokens[256:] == [tuple(b"xyz"), tuple(b"ab"), tuple(b"zq")]
    assert tok.scaffold.scaffold == {256}
    assert tok.encode("xyz") == [256]
    assert tok.encode("yz") == [y, z]  # merged into the scaffold "yz", then demolished
    assert tok.encode("zq") == [258]
    assert tok.decode(tok.encode("yz xyz zq ab")) == "yz xyz zq ab"


def test_an_unflagged_token_rejoins_and_then_equals_bpe():
    # {xyz: 10, yz: 2, ab: 5, cd: 2}, 4 normal tokens. Steps 1-3 as above (cd for zq), then
    # 4. cd 2 ties with the flagged "yz" 2; "yz" > "c", so the token wins: unflagged. Normal 3.
    # 5. merge (c, d) -> 259. Normal 4. Nothing is scaffold at the end: plain BPE's merges.
    counts = {b"xyz": 10, b"yz": 2, b"ab": 5, b"cd": 2}
    expected = [(MERGED, y, z, 12), (MERGED, x, 256, 10), (FLAGGED, 256, 2, 5),
                (MERGED, a, b, 5), (UNFLAGGED, 256, 2, 0), (MERGED, c, d, 2)]
    words = byte_words(Counter(counts))
    assert core_log(words, BYTE_KEYS, 4) == expected
    assert reference_scaffold_merges(words, BYTE_KEYS, 4) == expected
    assert merges_of(expected) == reference_bpe_merges(words, BYTE_KEYS, 4)
    tok = tokfx.train(counts, "scaffold-bpe", 256 + 4, special_tokens=())
    bpe = tokfx.train(counts, "bpe", 256 + 4, special_tokens=())
    assert tok.scaffold.scaffold == set() and tok.merge_ids == bpe.merge_ids
    assert tok.encode("yz xyz cd") == bpe.encode("yz xyz cd")


def test_a_pair_of_a_token_with_itself_takes_two_occurrences():
    # {aaaa: 3, aaaab: 1, bc: 1} with 2 normal tokens:
    # 1. pairs aa 3*3 + 3 = 12, ab 1, bc 1: merge (a, a) -> 256: "aa aa" twice each; "aa aa b".
    #    256 standalone 3*2 + 2 = 8.
    # 2. pairs (256, 256) 3 + 1 = 4, (256, b) 1, bc 1: merge -> 257 "aaaa"; 256 loses two per
    #    merged occurrence: 8 - 2*4 = 0 < head 1 (bc and (257, b)): flagged. Normal: 1.
    # 3. pairs (257, b) 1 and bc 1, token 256 at 0: keys "aaaa" < "b": merge (b, c) -> 258.
    counts = {b"aaaa": 3, b"aaaab": 1, b"bc": 1}
    expected = [(MERGED, a, a, 12), (MERGED, 256, 256, 4), (FLAGGED, 256, 0, 1), (MERGED, b, c, 1)]
    words = byte_words(Counter(counts))
    assert core_log(words, BYTE_KEYS, 2) == expected
    assert reference_scaffold_merges(words, BYTE_KEYS, 2) == expected


# ---- the core against its twin

@settings(max_examples=400, deadline=None)
@given(training_inputs())
def test_core_equals_reference_on_random_inputs(case):
    word_counts, symbol_keys, num_normal = case
    assert core_log(word_counts, symbol_keys, num_normal) == \
        reference_scaffold_merges(word_counts, symbol_keys, num_normal)


@settings(max_examples=50, deadline=None)
@given(training_inputs(), st.randoms(use_true_random=False))
def test_word_order_does_not_matter(case, rng):
    word_counts, symbol_keys, num_normal = case
    shuffled = list(word_counts.items())
    rng.shuffle(shuffled)
    assert core_log(dict(shuffled), symbol_keys, num_normal) == core_log(word_counts, symbol_keys, num_normal)


@settings(max_examples=300, deadline=None)
@given(training_inputs())
def test_never_flagged_means_plain_bpe(case):
    word_counts, symbol_keys, num_normal = case
    log = core_log(word_counts, symbol_keys, num_normal)
    if all(kind == MERGED for kind, *_ in log):
        assert merges_of(log) == reference_bpe_merges(word_counts, symbol_keys, num_normal)


def cjk_words(text: str, alphabet: Alphabet) -> dict[tuple[int, ...], int]:
    symbols, offsets, counts = packed_words(pretoken_counts(text), alphabet)
    return {tuple(symbols[offsets[i]:offsets[i + 1]]): counts[i] for i in range(len(counts))}


@pytest.mark.parametrize("language, alphabet, chars", [
    ("english/pg2701_moby_dick.txt", "bytes", 30_000),
    ("korean/nsmc_reviews_4M.txt", "bytes", 8_000),
    ("chinese/hongloumeng.txt", "cjk", 6_000),
])
def test_core_equals_reference_on_real_text(language, alphabet, chars):
    base = Alphabet.named(alphabet)
    words = cjk_words(corpus_text(language)[:chars], base)
    keys = symbol_keys(base)
    log = core_log(words, keys, 150)
    assert any(kind == FLAGGED for kind, *_ in log)
    assert log == reference_scaffold_merges(words, keys, 150)


# ---- invariants on real text

@pytest.fixture(scope="module", params=[
    ("english/pg2600_war_and_peace.txt", "bytes", 4000),
    ("chinese/hongloumeng.txt", "cjk", 3000),
])
def trained(request):
    relative, alphabet, vocab_size = request.param
    text = corpus_text(relative)
    counts = pretoken_counts(text)
    base = Alphabet.named(alphabet)
    log = events(train_scaffold_merges(*packed_words(counts, base), symbol_keys(base), vocab_size - base.size - 1)[2])
    tok = tokfx.train(counts, "scaffold-bpe", vocab_size, alphabet=alphabet)
    return text, log, tok


def test_log_invariants(trained):
    _, log, tok = trained
    size = tok.alphabet.size
    flagged, normal = set(), 0
    for i, (kind, first, second, third) in enumerate(log):
        if kind == MERGED:
            normal += 1
        elif kind == FLAGGED:
            # Only right after a merge (other flags of the same merge may come between), only
            # one of its parts, learned and normal, strictly below the queue head.
            merge = i - 1
            while log[merge][0] == FLAGGED:
                merge -= 1
            assert log[merge][0] == MERGED and first in log[merge][1:3]
            assert first >= size and first not in flagged and 0 <= second < third
            flagged.add(first)
            normal -= 1
        else:
            assert first in flagged
            flagged.remove(first)
            normal += 1
        # The queue head after a merge is the count of whatever the next step takes.
        if kind == FLAGGED and i + 1 < len(log) and log[i + 1][0] != FLAGGED:
            following = log[i + 1]
            assert (following[3] if following[0] == MERGED else following[2]) == third
    assert flagged and normal == tok.vocab_size - size - 1
    assert flagged == tok.scaffold.scaffold and merges_of(log) == tok.scaffold.merges
    assert len(tok.tokens) == tok.vocab_size and len(tok.scaffold.normal_tokens) == tok.vocab_size - 1


def test_demolitions_are_normal_and_spell_the_token(trained):
    _, _, tok = trained
    vocab = tok.scaffold
    expanded = vocab.expanded_tokens
    for token in vocab.scaffold:
        parts = vocab.demolition(token)
        assert len(parts) >= 2
        assert all(0 <= p < tok.vocab_size - 1 for p in parts)  # model ids of normal tokens
        assert sum((tok.tokens[p] for p in parts), ()) == tuple(expanded[token])


def test_round_trip_and_no_scaffold_id(trained):
    text, _, tok = trained
    sample = text[:200_000]
    ids = tok.encode(sample)
    assert tok.decode(ids) == sample
    eot = tok.special_tokens["<|endoftext|>"]
    assert all(0 <= i < tok.vocab_size for i in ids)
    expanded_ids = {model_id: e for e, model_id in enumerate(tok.scaffold.model_ids) if model_id is not None}
    assert not {expanded_ids[i] for i in ids if i != eot} & tok.scaffold.scaffold
    # Some scaffold token was demolished in this text: the table is exercised.
    assert any(len(tok.scaffold.demolition(t)) > 1 for t in tok.scaffold.scaffold)


def test_encoding_equals_reference(trained):
    text, _, tok = trained
    vocab = tok.scaffold
    triples = [(left, right, t) for t, (left, right) in enumerate(vocab.merges, tok.alphabet.size)]
    model_ids = {e: m for e, m in enumerate(vocab.model_ids) if m is not None}
    groups = tok.alphabet.groups or None
    sample = text[:20_000].replace("<|endoftext|>", "")
    pieces = [m.encode("utf-8") for m in regex.findall(GPT2, sample)]
    expected = {p: reference_encode_piece(p, triples, range(tok.alphabet.size), set(vocab.scaffold),
                                          model_ids, groups) for p in set(pieces)}
    assert tok.encode_ordinary(sample) == [i for p in pieces for i in expected[p]]


def test_flags_appear_on_real_text_and_bytes_per_token_stays_close_to_bpe():
    text = corpus_text("english/pg2701_moby_dick.txt")
    counts = pretoken_counts(text)
    tok = tokfx.train(counts, "scaffold-bpe", 3000)
    bpe = tokfx.train(counts, "bpe", 3000)
    # Scaffold-BPE keeps more useful tokens, so on its training text it needs at most a few
    # percent more tokens than BPE (and usually fewer).
    assert 0.9 < len(tok.encode(text)) / len(bpe.encode(text)) < 1.05
    assert 0 < len(tok.scaffold.scaffold) < 0.2 * tok.vocab_size


def test_until_the_first_flag_merges_and_encodings_equal_bpe():
    text = corpus_text("english/pg2701_moby_dick.txt")[:300_000]
    counts = pretoken_counts(text)
    log = events(train_scaffold_merges(*packed_words(counts, Alphabet.named("bytes")), BYTE_KEYS, 1000)[2])
    first_flag = next(i for i, event in enumerate(log) if event[0] == FLAGGED)
    # Every event before the first flag is a merge, so up to it nothing was ever flagged.
    # The flag belongs to merge first_flag - 1's step: stop one merge before it (+1 special).
    vocab_size = 256 + (first_flag - 1) + 1
    tok = tokfx.train(counts, "scaffold-bpe", vocab_size)
    bpe = tokfx.train(counts, "bpe", vocab_size)
    assert first_flag > 3 and tok.scaffold.scaffold == set()
    assert tok.merge_ids == bpe.merge_ids and tok.tokens == bpe.tokens
    assert tok.encode(text[:50_000]) == bpe.encode(text[:50_000])


def test_a_corpus_built_never_to_flag_equals_bpe():
    # Words a, ab, abc, ... (k letters, count 2**(20 - k)). Merges grow the chain: "ab", "abc",
    # ... When the prefix of k letters is merged into k + 1 it keeps its own word's 2**(20 - k)
    # standalone occurrences, and the head, the next chain pair, counts the longer words:
    # 2**(20 - k - 2) + ... + 1 < 2**(20 - k). So nothing is ever flagged.
    letters = b"abcdefghijklmnopqrst"
    counts = {letters[:k]: 2 ** (20 - k) for k in range(1, 21)}
    words = byte_words(Counter(counts))
    log = core_log(words, BYTE_KEYS, 19)
    assert [kind for kind, *_ in log] == [MERGED] * 19
    assert merges_of(log) == reference_bpe_merges(words, BYTE_KEYS, 19)
    tok = tokfx.train(counts, "scaffold-bpe", 256 + 19, special_tokens=())
    bpe = tokfx.train(counts, "bpe", 256 + 19, special_tokens=())
    text = " ".join(letters[:k].decode() for k in range(20, 0, -3))
    assert tok.encode(text) == bpe.encode(text) and tok.tokens == bpe.tokens


# ---- the encoder's demolition table on random vocabularies

@st.composite
def scaffold_vocabularies(draw):
    """A ScaffoldVocab over bytes with merges of a, b, c and earlier tokens, and a random
    scaffold set."""
    merges = []
    for rank in range(draw(st.integers(0, 30))):
        parts = list(b"abc") + list(range(256, 256 + rank))
        merges.append((draw(st.sampled_from(parts)), draw(st.sampled_from(parts))))
    scaffold = draw(st.sets(st.integers(256, 256 + len(merges) - 1))) if merges else set()
    return ScaffoldVocab(Alphabet.named("bytes"), merges, scaffold)


@settings(max_examples=300, deadline=None)
@given(scaffold_vocabularies(), st.lists(st.lists(st.sampled_from(b"abc"), max_size=40).map(bytes), max_size=8),
       st.sampled_from([0, 2, 1 << 18]))
def test_demolishing_encoder_equals_reference(vocab, pieces, cache_size):
    triples = [(left, right, t) for t, (left, right) in enumerate(vocab.merges, 256)]
    model_ids = {e: m for e, m in enumerate(vocab.model_ids) if m is not None}
    encoder = BPEEncoder(triples, range(256), cache_size=cache_size, demolition=vocab.demolition_table)
    for _ in range(2):  # the second pass reads the cache
        for piece in pieces:
            assert encoder.encode_piece(piece) == reference_encode_piece(
                piece, triples, range(256), set(vocab.scaffold), model_ids)


def demolition_table(lists):
    """(starts, ids) buffers of a demolition table given as one list of ids per token."""
    starts, ids = array("q", [0]), array("i")
    for parts in lists:
        ids.extend(parts)
        starts.append(len(ids))
    return starts, ids


def test_encoder_refuses_a_bad_demolition_table():
    identity = [[i] for i in range(256)]
    with pytest.raises(ValueError, match="empty"):
        BPEEncoder([], range(256), demolition=demolition_table(identity[:255] + [[]]))
    with pytest.raises(ValueError, match="covers"):
        BPEEncoder([(97, 98, 256)], range(256), demolition=demolition_table(identity))
    with pytest.raises(ValueError, match="base symbol 7"):
        BPEEncoder([], range(256), demolition=demolition_table(identity[:7] + [[7, 7]] + identity[8:]))
    with pytest.raises(ValueError, match="from 0"):
        BPEEncoder([], range(256), demolition=(array("q", range(1, 258)), array("i", range(257))))
    # A valid table: token 256 ("ab") is emitted as a then b.
    encoder = BPEEncoder([(97, 98, 256)], range(256), demolition=demolition_table(identity + [[97, 98]]))
    assert encoder.encode_piece(b"abc") == [97, 98, 99]


# ---- files

@pytest.fixture(scope="module")
def small():
    text = fixture_path("tinystories_sample.txt").read_text(encoding="utf-8")
    tok = tokfx.train(text, "scaffold-bpe", 700)
    assert tok.scaffold.scaffold
    return text, tok


def test_save_load_round_trip_writes_tokfx_json_only(small, tmp_path, caplog):
    text, tok = small
    with caplog.at_level("INFO"):
        tok.save(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [TOKFX_JSON]
    assert "scaffold" in caplog.text and "cannot express" in caplog.text
    doc = json.loads((tmp_path / TOKFX_JSON).read_text())
    fastjsonschema.compile(json.loads(SCHEMA.read_text()))(doc)
    assert doc["algorithm"] == "scaffold-bpe"
    assert sum(doc["scaffold"]["is_scaffold"]) == len(tok.scaffold.scaffold)
    loaded = tokfx.Tokenizer.load(tmp_path)
    assert loaded.encode(text) == tok.encode(text) and loaded.vocab_size == 700
    assert loaded.scaffold.demolition_table == tok.scaffold.demolition_table


def test_cjk_tokenizer_round_trips_through_tokfx_json(tmp_path):
    text = corpus_text("chinese/hongloumeng.txt")[:100_000]
    tok = tokfx.train(text, "scaffold-bpe", 1500, alphabet="cjk")
    assert tok.scaffold.scaffold
    tok.save(tmp_path)
    loaded = tokfx.Tokenizer.load(tmp_path)
    assert (tmp_path / TOKFX_JSON).read_bytes() == tokenizer_json_bytes(loaded)
    assert loaded.encode(text) == tok.encode(text) and loaded.decode(tok.encode(text)) == text


def test_same_input_same_file():
    text = fixture_path("tinystories_sample.txt").read_text(encoding="utf-8")
    counts = pretoken_counts(text)
    reordered = dict(sorted(counts.items(), key=lambda item: item[0][::-1]))
    assert tokenizer_json_bytes(tokfx.train(counts, "scaffold-bpe", 700)) == \
        tokenizer_json_bytes(tokfx.train(reordered, "scaffold-bpe", 700))


def test_without_scaffold_tokens_gpt2_files_are_written(tmp_path):
    tok = tokfx.train({b"xyz": 10, b"yz": 2, b"ab": 5, b"cd": 2}, "scaffold-bpe", 260, special_tokens=())
    tok.save(tmp_path)
    assert {p.name for p in tmp_path.iterdir()} == {TOKFX_JSON, "vocab.json", "merges.txt", "tokenizer.json"}
    assert tokfx.Tokenizer.from_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt").encode(
        "yz xyz cd") == tok.encode("yz xyz cd")


@pytest.mark.parametrize("field, value, message", [
    ("model_ids", lambda ids: ids[:-1] + [len(ids) + 5], "model_ids"),
    ("is_scaffold", lambda flags: flags[:-1], "flags"),
    ("merges", lambda merges: [[9999, 97]] + merges[1:], r"scaffold\.merges\[0\]: uses an id not made"),
])
def test_tampered_scaffold_field_is_refused(small, tmp_path, field, value, message):
    _, tok = small
    tok.save(tmp_path)
    doc = json.loads((tmp_path / TOKFX_JSON).read_text())
    doc["scaffold"][field] = value(doc["scaffold"][field])
    (tmp_path / TOKFX_JSON).write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=message):
        tokfx.Tokenizer.load(tmp_path)


def test_tokens_must_match_the_scaffold_vocabulary(small):
    _, tok = small
    tokens = tok.tokens
    tokens[300], tokens[301] = tokens[301], tokens[300]
    with pytest.raises(ValueError):
        tokfx.Tokenizer(tokens, tok.merge_ids, tok.special_tokens, scaffold=tok.scaffold)


# ---- progress, CLI

def test_progress_goes_to_stderr(capsys):
    counts = pretoken_counts(fixture_path("corpus.en").read_text(encoding="utf-8"))
    train_scaffold_vocab(counts, 2000, progress=Progress())
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0].startswith("scaffold-bpe: 1,000/2,000 normal tokens")
    assert lines[1].startswith("scaffold-bpe: 2,000/2,000 normal tokens")
    assert "scaffold tokens in" in lines[2]


def test_cli_train_and_encode(tmp_path, capsys):
    out = tmp_path / "tok"
    corpus = fixture_path("tinystories_sample.txt")
    assert main(["train", str(corpus), "-o", str(out), "--vocab-size", "700",
                 "--algorithm", "scaffold-bpe", "-q"]) == 0
    tok = tokfx.Tokenizer.load(out)
    assert tok.algorithm == "scaffold-bpe" and tok.vocab_size == 700 and tok.scaffold.scaffold
    capsys.readouterr()
    assert main(["encode", str(out), "--text", "Once upon a time"]) == 0
    assert json.loads(capsys.readouterr().out) == tok.encode("Once upon a time")
    assert main(["inspect", str(out)]) == 0
    shown = capsys.readouterr().out
    learned = 700 - 256 - 1
    assert f"700 (256 bytes + {learned} learned tokens + 1 special)" in shown
    assert f"scaffold:       {len(tok.scaffold.scaffold)} scaffold tokens of {256 + len(tok.scaffold.merges)}" in shown


def test_pipeline_run_with_scaffold_bpe(tmp_path):
    from beam_jobs.pipelines import run
    from megatron_reader import read_megatron
    from pipeline_corpus import EOT, SOURCES, paragraphs, read_shards, write_zst_shards

    docs = [p for source in SOURCES for p in paragraphs(source, 12_000)]
    expected_docs = write_zst_shards(tmp_path, docs, shards=2)
    out = tmp_path / "out"
    run("run", ["--input", str(tmp_path / "*.jsonl.zst"), "--output", str(out), "--vocab-size", "600",
                "--algorithm", "scaffold-bpe", "-q"])
    expected = tokfx.train(list(expected_docs.values()), "scaffold-bpe", 600, special_tokens=[EOT])
    assert expected.scaffold.scaffold
    assert (out / "tokenizer" / TOKFX_JSON).read_bytes() == tokenizer_json_bytes(expected)
    assert [p.name for p in (out / "tokenizer").iterdir()] == [TOKFX_JSON]
    rows = read_shards(out)
    assert sorted(r["id"] for r in rows) == sorted(expected_docs)
    for row in rows:
        assert row["input_ids"] == expected.encode(expected_docs[row["id"]])
        assert max(row["input_ids"], default=0) < 600
    megatron = [ids for path in sorted((out / "shards").glob("*.idx"))
                for ids in read_megatron(path.with_suffix(""))[0]]
    assert sorted(map(tuple, megatron)) == sorted(tuple(r["input_ids"]) for r in rows)
