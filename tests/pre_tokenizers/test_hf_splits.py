"""The named patterns of open models' tokenizer files: their regexes as the files spell them, the
Isolated Splits with their gaps kept equal to Hugging Face's Isolated behaviour, and sequences of
named patterns (`sequence_piece_ends`) equal to applying `regex` stage by stage. (The native
splitter equals `regex` on every named pattern: test_native_splitter.py.)"""
import array
import itertools
import json

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ASSIGNED, corpus_text
from tokfx.pre_tokenizers import sequence_piece_ends
from tokfx.pre_tokenizers.patterns import DEEPSEEK_V3_SPLITS, ISOLATED_SPLITS, PATTERNS, pattern_for_isolated_split

# The pre-tokenizers as the published files spell them (JSON, copied by hand from quotations of
# the files in public code): DeepSeek V3's tokenizer.json, Qwen 2's tokenizer.json, Mistral's
# tekken.json config.pattern.
DEEPSEEK_V3_PRE_TOKENIZER = r'''{"type": "Sequence", "pretokenizers": [
  {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": false},
  {"type": "Split", "pattern": {"Regex": "[一-龥\u3040-ゟ゠-ヿ]+"}, "behavior": "Isolated", "invert": false},
  {"type": "Split", "pattern": {"Regex": "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false},
  {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]}'''
QWEN2_PRE_TOKENIZER = r'''{"type": "Sequence", "pretokenizers": [
  {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false},
  {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]}'''
TEKKEN_CONFIG = r'''{"pattern": "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}'''

def split_regexes(pre_tokenizer: str) -> list[str]:
    return [step["pattern"]["Regex"] for step in json.loads(pre_tokenizer)["pretokenizers"]
            if step["type"] == "Split"]


def test_patterns_are_spelt_as_in_the_files():
    assert split_regexes(DEEPSEEK_V3_PRE_TOKENIZER) == [ISOLATED_SPLITS[name] for name in DEEPSEEK_V3_SPLITS]
    assert split_regexes(QWEN2_PRE_TOKENIZER) == [PATTERNS["qwen2"]]
    assert json.loads(TEKKEN_CONFIG)["pattern"] == PATTERNS["tekken"]


def isolated_pieces(split_regex: str, text: str) -> list[str]:
    """Hugging Face's Split with behaviour Isolated (tokenizers' `find_matches`): every match, and
    the text between two matches, before the first and after the last."""
    pieces, previous = [], 0
    for match in regex.finditer(split_regex, text):
        if match.start() > previous:
            pieces.append(text[previous:match.start()])
        pieces.append(match.group())
        previous = match.end()
    return pieces + ([text[previous:]] if previous < len(text) else [])


# Characters where DeepSeek's Split and the CJK range draw their lines: ASCII punctuation and
# symbols before ASCII and other letters, marks, other punctuation and symbols, numbers,
# characters no alternative matches (controls, format, unassigned), the CJK range's ends.
FRAGMENTS = [
    " ", "  ", "\t", "\n", "\r", "\r\n", "\u3000", "\xa0", "a", "Z", "é", "ß", "\u0301", "\u0903",
    "!", "'", "-", "/", "@", "[", "\\", "`", "{", "~", "$", "+", "^", "|", "'s", "!ab", "-Ab",
    "。", "、", "«", "€", "©", "😀", "0", "7", "123", "4567", "٣", "Ⅻ", "½", "²", "\x00", "\x1f",
    "\u200b", "\ufeff", "\U000e0001", "\u0378", "中", "文", "一", "\u9fa5", "\u9fa6", "\u3040",
    "ゟ", "゠", "ヿ", "\u3100", "\u4dff", "가", "ひ", "カ", "ー",
]
texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.characters(codec="utf-8")),
                 max_size=30).map("".join)


@pytest.mark.parametrize("name", sorted(ISOLATED_SPLITS))
@settings(max_examples=400, deadline=None)
@given(text=texts)
def test_isolated_split_with_gaps_is_the_named_pattern(name, text):
    assert regex.findall(PATTERNS[name], text) == isolated_pieces(ISOLATED_SPLITS[name], text)


@pytest.mark.parametrize("split_regex", sorted(set(PATTERNS.values()) | set(ISOLATED_SPLITS.values())))
@settings(max_examples=100, deadline=None)
@given(text=texts)
def test_pattern_for_isolated_split(split_regex, text):
    """The named pattern it gives for a Split's regex finds the Split's pieces, gaps included."""
    name = pattern_for_isolated_split(split_regex)
    assert name in PATTERNS
    assert regex.findall(PATTERNS[name], text) == isolated_pieces(split_regex, text)


def test_pattern_for_isolated_split_of_the_files():
    assert [pattern_for_isolated_split(r) for r in split_regexes(DEEPSEEK_V3_PRE_TOKENIZER)] == list(DEEPSEEK_V3_SPLITS)
    assert [pattern_for_isolated_split(r) for r in split_regexes(QWEN2_PRE_TOKENIZER)] == ["qwen2"]
    assert pattern_for_isolated_split(r"\p{N}") == "digits"
    assert pattern_for_isolated_split(r"\p{L}+") == r"\p{L}+"  # no named pattern: the regex itself


@pytest.mark.parametrize("name", sorted(ISOLATED_SPLITS))
def test_isolated_split_with_gaps_on_every_code_point(name):
    """Every character alone, and before and after a letter (the Split's word prefix)."""
    every = [chr(c) for c in itertools.chain(range(0xD800), range(0xE000, 0x110000))]
    for text in ("".join(every), "a".join(every), "1".join(every)):
        assert regex.findall(PATTERNS[name], text) == isolated_pieces(ISOLATED_SPLITS[name], text)


@pytest.mark.parametrize("relative", ["english/pg2701_moby_dick.txt", "chinese/hongloumeng.txt"])
@pytest.mark.parametrize("name", sorted(ISOLATED_SPLITS))
def test_isolated_split_with_gaps_on_corpus(name, relative):
    text = corpus_text(relative)
    assert regex.findall(PATTERNS[name], text) == isolated_pieces(ISOLATED_SPLITS[name], text)


def stagewise_pieces(names, text: str) -> list[str]:
    """Each named pattern's `regex.findall` over every piece of the one before."""
    pieces = [text] if text else []
    for name in names:
        pieces = [piece for previous in pieces for piece in regex.findall(PATTERNS[name], previous)]
    return pieces


def ends_of_texts(chunks) -> list[int]:
    return list(itertools.accumulate(len(chunk.encode("utf-8")) for chunk in chunks))


SEQUENCES = [DEEPSEEK_V3_SPLITS, ("digits", "qwen2"), ("cjk-runs", "tekken"), ("digits", "gpt2"),
             ("deepseek",), ("qwen2", "digits-1-3", "o200k"), ()]


@pytest.mark.parametrize("names", SEQUENCES, ids="+".join)
@settings(max_examples=200, deadline=None)
@given(chunks=st.lists(texts, max_size=4))
def test_sequence_is_regex_stage_by_stage(names, chunks):
    """Each chunk alone, each stage over the pieces of the one before."""
    data = "".join(chunks).encode("utf-8")
    chunk_ends = array.array("q", ends_of_texts(chunks))
    expected = [piece for chunk in chunks for piece in stagewise_pieces(names, chunk)]
    ends = sequence_piece_ends(data, names, chunk_ends)
    assert isinstance(ends, array.array) and ends.typecode == "q"
    assert list(ends) == ends_of_texts(expected)
    text = "".join(chunks)
    assert list(sequence_piece_ends(data, names)) == ends_of_texts(stagewise_pieces(names, text))


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_deepseek_v3_sequence_is_its_isolated_splits(text):
    """The three named patterns in turn give the pieces of DeepSeek V3's three Isolated Splits."""
    pieces = [text] if text else []
    for split_regex in split_regexes(DEEPSEEK_V3_PRE_TOKENIZER):
        pieces = [piece for previous in pieces for piece in isolated_pieces(split_regex, previous)]
    data = text.encode("utf-8")
    assert list(sequence_piece_ends(data, DEEPSEEK_V3_SPLITS)) == ends_of_texts(pieces)


@pytest.mark.parametrize("relative", ["english/pg2701_moby_dick.txt", "chinese/hongloumeng.txt"])
def test_deepseek_v3_sequence_on_corpus(relative):
    text = corpus_text(relative)
    ends = sequence_piece_ends(text.encode("utf-8"), DEEPSEEK_V3_SPLITS)
    assert list(ends) == ends_of_texts(stagewise_pieces(DEEPSEEK_V3_SPLITS, text))


def test_sequence_refuses_a_bare_name_and_unknown_names():
    with pytest.raises(TypeError):
        sequence_piece_ends(b"abc", "gpt2")
    with pytest.raises(ValueError, match="no-such-pattern"):
        sequence_piece_ends(b"abc", ["gpt2", "no-such-pattern"])


def hf_pieces(pre_tokenizer, text: str) -> list[str]:
    return [text[start:end] for _, (start, end) in pre_tokenizer.pre_tokenize_str(text)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(ASSIGNED, max_size=4)),
                     max_size=20).map("".join))
def test_tokenizers_splits_alike(text):
    """tokenizers itself (Oniguruma), given the files' pre-tokenizers without their ByteLevel step,
    on characters of the Unicode version its tables and `regex`'s share (conftest.ASSIGNED)."""
    tokenizers = pytest.importorskip("tokenizers")
    pre_tokenizers = tokenizers.pre_tokenizers

    def without_byte_level(pre_tokenizer: str):
        steps = [step for step in json.loads(pre_tokenizer)["pretokenizers"] if step["type"] != "ByteLevel"]
        return tokenizers.Tokenizer.from_str(json.dumps(
            {"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []},
             "pre_tokenizer": {"type": "Sequence", "pretokenizers": steps}})).pre_tokenizer

    data = text.encode("utf-8")
    deepseek = without_byte_level(DEEPSEEK_V3_PRE_TOKENIZER)
    assert ends_of_texts(hf_pieces(deepseek, text)) == list(sequence_piece_ends(data, DEEPSEEK_V3_SPLITS))
    qwen2 = without_byte_level(QWEN2_PRE_TOKENIZER)
    assert ends_of_texts(hf_pieces(qwen2, text)) == list(sequence_piece_ends(data, ["qwen2"]))
    digits = pre_tokenizers.Digits(individual_digits=True)
    assert ends_of_texts(hf_pieces(digits, text)) == list(sequence_piece_ends(data, ["digits"]))
