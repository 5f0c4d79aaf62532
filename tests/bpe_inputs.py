"""Inputs of the BPE merge loop shared by its tests (tests/models/test_bpe_train.py,
test_scaffold_bpe.py, tests/test_cjk_tokenizer.py): packed buffers, pre-token counts as training
sees them, and small random training inputs."""
from array import array
from collections import Counter

import regex
from hypothesis import strategies as st

from tokfx.pre_tokenizers.patterns import GPT2

SPECIAL = "<|endoftext|>"


def packed(word_counts: dict[tuple[int, ...], int]) -> tuple[array, array, array]:
    """The core's buffers: symbols concatenated, word offsets, word counts."""
    symbols, offsets, counts = array("i"), array("q", [0]), array("q")
    for word, count in word_counts.items():
        symbols.extend(word)
        offsets.append(len(symbols))
        counts.append(count)
    return symbols, offsets, counts


def pretoken_counts(text: str) -> Counter:
    """Pre-token counts as training sees them: special tokens split out, GPT-2 pattern."""
    return Counter(match.encode("utf-8") for chunk in text.split(SPECIAL)
                   for match in regex.findall(GPT2, chunk))


def byte_words(counts: Counter) -> dict[tuple[int, ...], int]:
    return {tuple(word): count for word, count in counts.items()}


# ---- random small inputs: tiny alphabets force ties and runs like `a a a a`

# Few distinct keys, so distinct symbols often share a key (ties fall to the ids) and keys
# are often prefixes of one another.
KEYS = st.sampled_from([b"a", b"b", b"ab", b"\x00", b"\xff", b"\x00a"])
# Counts around 2**31 too: the core keeps a word's count in its positions below that, and reads
# it from the words' table from there on.
COUNTS = st.one_of(st.integers(1, 4), st.integers(2**31 - 2, 2**31 + 1), st.integers(2**32 - 2, 2**40))


@st.composite
def training_inputs(draw):
    symbol_keys = draw(st.lists(KEYS, min_size=2, max_size=6))
    symbol = st.integers(0, len(symbol_keys) - 1)
    word_counts = draw(st.dictionaries(st.lists(symbol, max_size=14).map(tuple), COUNTS, max_size=8))
    return word_counts, symbol_keys, draw(st.integers(0, 40))
