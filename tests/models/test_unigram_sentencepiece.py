"""Unigram over characters against sentencepiece's own trainer (issue 26), the oracle: the seed
(the pieces its model keeps when it does not prune), and the trained vocabulary and held-out
token count (docs/algorithms.md, the "sentencepiece" recipe)."""
import random

import sentencepiece as spm

import pytest

import tokfx
from conftest import corpus_text, fixture_path
from tokfx.alphabet import Alphabet
from tokfx.models.bpe.merge_loop import packed_words
from tokfx.counting import count_lines
from tokfx.models.unigram import line_end_counts, piece_line_ends, seed_classes, seed_vocabulary
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.unicode_scripts import HAN, INHERITED, SCRIPTS, script

COVERAGE = 0.9995
SETTINGS = dict(model_type="unigram", normalization_rule_name="identity", remove_extra_whitespaces=False,
                num_threads=1, minloglevel=2, max_sentence_length=1 << 30, input_sentence_size=0)


def lines_of(text):
    return [line for line in text.replace("\r\n", "\n").split("\n") if line]


def spm_model(tmp_path, lines, **options):
    path = tmp_path / "train.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(path), model_prefix=str(tmp_path / "m"), **SETTINGS, **options)
    return spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))


def spm_pieces(sp):
    return {sp.id_to_piece(i) for i in range(sp.get_piece_size())
            if not (sp.is_byte(i) or sp.is_control(i) or sp.is_unknown(i))}


def tokfx_pieces(tok):
    chars, base = tok.alphabet.characters, tok.alphabet.char_base
    return {"".join(chars[s - base] for s in t) for t in tok.tokens if t[0] >= base}


def test_scripts_as_sentencepiece_groups_them():
    assert script("\u2581") is None
    assert script("a") == script("Z") == SCRIPTS.index("Latin")
    assert script(",") == script("1") == script("\u3002") == SCRIPTS.index("Common")
    assert script("中") == script("あ") == script("ア") == script("\u30fc") == HAN
    assert script("\u0301") == INHERITED and script("ж") == SCRIPTS.index("Cyrillic")


def test_seed_holds_every_piece_sentencepiece_seeds(tmp_path):
    # With 1 EM step and a vocabulary that sentencepiece never prunes (1.1 x vocab_size above
    # its seed), its model is its seed less the pieces EM drops: each of them must be in ours.
    lines = lines_of(fixture_path("corpus.en").read_text(encoding="utf-8"))
    chars = sorted({c for line in lines for c in "\u2581" + line.replace(" ", "\u2581")})
    size = 300
    sp = spm_model(tmp_path, lines, vocab_size=int((3 + len(chars) + size) / 1.1), character_coverage=1.0,
                   num_sub_iterations=1, seed_sentencepiece_size=size)
    theirs = {p for p in spm_pieces(sp) if len(p) > 1}
    alphabet = Alphabet.named("chars", characters="".join(chars))
    packed = packed_words(dict(sorted(tokfx.count_pretokens(lines, "sentencepiece", []).items())), alphabet)
    tokens, _ = seed_vocabulary(*packed, alphabet.size, alphabet.size + size, 16, seed_classes(alphabet))
    ours = {"".join(chars[s - alphabet.char_base] for s in t) for t in list(tokens)[alphabet.size:]}
    assert len(ours) == size and len(theirs) > size * 0.8
    assert theirs <= ours
    # ... which the most frequent n-grams (the "ngrams" recipe) miss, and whole pre-tokens always
    # followed by a space (no line ends with " and") it leaves out, as sentencepiece.
    assert "\u2581and" not in ours and "\u2581the" in ours


def test_seed_with_line_ends_holds_every_piece_sentencepiece_seeds(tmp_path):
    # sentencepiece's seed runs over lines: a word inside a line is followed by its space, at
    # the line's end by the line's end, so a word seen in both places is a seed piece, whatever
    # its letters. With context="line" ours tells the two apart as well; without, a pre-token's
    # end is one follower, and the whole words never followed by a letter are missed.
    rng = random.Random(0)
    words = "the cat sat on a mat and then ran off to see his dog cats catalog".split()
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 6))) for _ in range(200)]
    chars = "".join(sorted({c for line in lines for c in "\u2581" + line.replace(" ", "\u2581")}))
    # As large as sentencepiece allows (it says so): its seed less what one EM step drops.
    sp = spm_model(tmp_path, lines, vocab_size=35, character_coverage=1.0, num_sub_iterations=1,
                   seed_sentencepiece_size=10_000)
    with pytest.raises(RuntimeError, match="Please set it to a value <= 35"):
        spm_model(tmp_path, lines, vocab_size=36, character_coverage=1.0, num_sub_iterations=1,
                  seed_sentencepiece_size=10_000)
    theirs = {p for p in spm_pieces(sp) if len(p) > 1}
    alphabet = Alphabet.named("chars", characters=chars)
    ordered = dict(sorted(tokfx.count_pretokens(lines, "sentencepiece", []).items()))
    packed = packed_words(ordered, alphabet)
    at_line_end = line_end_counts(count_lines(lines), PreTokenizer("sentencepiece"))
    seeds = {}
    for context, line_ends in (("pretoken", None), ("line", piece_line_ends(ordered, at_line_end, alphabet, packed[1]))):
        tokens, _ = seed_vocabulary(*packed, alphabet.size, 10_000, 16, seed_classes(alphabet), line_ends)
        seeds[context] = {"".join(chars[s - alphabet.char_base] for s in t) for t in list(tokens)[alphabet.size:]}
    assert len(theirs) > 10 and theirs <= seeds["line"]
    assert {"\u2581dog", "\u2581mat"} <= theirs - seeds["pretoken"]


def test_line_end_counts_name_the_pre_tokens_that_end_lines_in_the_counts():
    texts = ["a b\nc d", "c d", "x \n", "\n\ne f\n"]
    lines = count_lines(texts)
    # sentencepiece's pattern keeps a "\n" inside a piece ("\u2581b\nc"): only a text's last
    # line ends in a pre-token of the counts.
    assert tokfx.count_pretokens(texts, "sentencepiece", [])[" b\nc".replace(" ", "\u2581").encode()] == 1
    assert line_end_counts(lines, PreTokenizer("sentencepiece")) == {"\u2581d".encode(): 2}
    # gpt2's splits the "\n" (and the spaces before it) off: the piece before it ends the line.
    assert line_end_counts(lines, PreTokenizer("gpt2")) == {b" b": 1, b" d": 2, b"x": 1, b" f": 1}


def test_context_line_needs_lines_and_the_sentencepiece_recipe():
    lines = lines_of(fixture_path("corpus.en").read_text(encoding="utf-8"))[:300]
    options = dict(vocab_size=600, alphabet="chars", pattern="sentencepiece", special_tokens=[])
    counts = tokfx.count_pretokens(lines, "sentencepiece", [])
    with pytest.raises(ValueError, match="context='line' needs running text"):
        tokfx.train(counts, "unigram", context="line", **options)
    with pytest.raises(ValueError, match="context='line' applies only to recipe 'sentencepiece'"):
        tokfx.train(lines, "unigram", context="line", recipe="ngrams", **options)
    with pytest.raises(ValueError, match="context must be 'pretoken' or 'line', got 'word'"):
        tokfx.train(counts, "unigram", context="word", **options)
    # From texts the lines are counted alongside; from counts, given: the same tokenizer.
    from_texts = tokfx.train(lines, "unigram", context="line", **options)
    assert from_texts.params["context"] == "line"
    assert from_texts.tokens == tokfx.train(counts, "unigram", context="line", lines=count_lines(lines), **options).tokens


@pytest.mark.parametrize("vocab_size", [500, 1000, 2000])
def test_english_vocabulary_and_held_out_tokens_match_sentencepiece(tmp_path, vocab_size):
    lines = lines_of(fixture_path("corpus.en").read_text(encoding="utf-8"))
    train, held = lines[:len(lines) * 3 // 4], lines[len(lines) * 3 // 4:]
    sp = spm_model(tmp_path, train, vocab_size=vocab_size, byte_fallback=True, character_coverage=COVERAGE)
    tok = tokfx.train(train, "unigram", vocab_size=vocab_size - 3, alphabet="chars", pattern="sentencepiece",
                      character_coverage=COVERAGE, special_tokens=[])
    assert tok.params["recipe"] == "sentencepiece"
    ours, theirs = tokfx_pieces(tok), spm_pieces(sp)
    assert len(ours) == len(theirs)
    assert len(ours & theirs) / len(ours | theirs) >= 0.9  # measured 0.91-0.98
    ratio = sum(len(tok.encode(line)) for line in held) / sum(map(len, sp.encode(held)))
    assert abs(ratio - 1) <= 0.01  # measured within 0.5 %


@pytest.mark.parametrize("vocab_size", [4000, 6000])
def test_chinese_vocabulary_and_held_out_tokens_match_sentencepiece(tmp_path, vocab_size):
    lines = lines_of(corpus_text("chinese/hongloumeng.txt"))
    train, held = lines[:300], lines[300:400]
    sp = spm_model(tmp_path, train, vocab_size=vocab_size, byte_fallback=True, character_coverage=COVERAGE)
    tok = tokfx.train(train, "unigram", vocab_size=vocab_size - 3, alphabet="chars", pattern="sentencepiece",
                      character_coverage=COVERAGE, special_tokens=[])
    ours, theirs = tokfx_pieces(tok), spm_pieces(sp)
    assert len(ours & theirs) / len(ours | theirs) >= 0.88  # measured 0.91-0.93
    ratio = sum(len(tok.encode(line)) for line in held) / sum(map(len, sp.encode(held)))
    assert abs(ratio - 1) <= 0.01  # measured within 0.2 %


def test_recipes_over_either_alphabet_and_a_bad_one_refused():
    text = fixture_path("corpus.en").read_text(encoding="utf-8")[:20_000]
    for alphabet in ("bytes", "chars"):
        assert tokfx.train(text, "unigram", vocab_size=600, alphabet=alphabet).params["recipe"] == "sentencepiece"
    with pytest.raises(ValueError, match="unknown recipe 'spm'; known: sentencepiece, ngrams"):
        tokfx.train(text, "unigram", vocab_size=600, recipe="spm")
    # Both recipes train over either alphabet to exactly vocab_size.
    for alphabet in ("bytes", "chars"):
        for recipe in ("sentencepiece", "ngrams"):
            tok = tokfx.train(text, "unigram", vocab_size=600, alphabet=alphabet, recipe=recipe)
            assert tok.vocab_size == 600 and tok.decode(tok.encode(text)) == text
