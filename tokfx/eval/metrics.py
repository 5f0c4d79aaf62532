"""Intrinsic tokenization metrics, each a small function of counts, with its definition.

Rates of a corpus (tokens, bytes, characters, words), Rényi efficiency of the token unigram
distribution (Zouhar et al. 2023), token length and frequency-rank distributions, unused
vocabulary, decode errors, vocabulary overlap, and context diversity (SaGe, Yehezkel & Pinter
2023). `CorpusStats` gathers what they need from a corpus fed document by document; its memory
is bounded by the vocabulary (counts per id, distinct neighbour pairs), not by the corpus.
"""
from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import product

from tokfx._neighbours import NeighbourPairs

from tokfx.alphabet import Alphabet
from tokfx.formats.documents import utf8_length
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.tokenizer import Tokenizer


def base_symbols_per_char(text: str, alphabet: Alphabet | None = None, pattern: str = "gpt2", *,
                          tokenizer: Tokenizer | None = None) -> float:
    """Base symbols per character before any merge: over `alphabet`, pre-tokenized by `pattern`;
    or as `tokenizer` reads text, over its alphabet (its normalizer and pattern, or a Hugging
    Face tokenizer's own stages, special-token text as ordinary text). Pre-tokenized first: with
    cjk each pre-token restarts the prefix state, so the count depends on the split."""
    _check_not_empty(text)
    if tokenizer is None:
        symbols = _base_symbols(PreTokenizer(pattern), alphabet, text)
    elif tokenizer.pipeline is None:
        symbols = _base_symbols(tokenizer.pretokenizer, tokenizer.alphabet, text)
    else:
        # A Hugging Face pipeline hands the segmenter (None, bytes, piece ends), already
        # normalized and pre-tokenized, or a non-special added token, which the model never
        # merges: matched whole, one symbol.
        symbols = sum(1 if added is not None else len(tokenizer.alphabet.map_pieces(data, ends)[0])
                      for added, data, ends in tokenizer.pipeline.segments(text, ordinary=True))
    return symbols / len(text)


def _base_symbols(pretokenizer: PreTokenizer, alphabet: Alphabet, text: str) -> int:
    data = pretokenizer.normalized_utf8(text)  # spaces as U+2581 with `sentencepiece`
    return len(alphabet.map_pieces(data, pretokenizer.piece_ends(data))[0])


def tokens_per_char(tokenizer: Tokenizer, text: str) -> float:
    """Tokens per character, special-token text encoded as ordinary text."""
    _check_not_empty(text)
    return len(tokenizer.encode_ordinary(text)) / len(text)


def renyi_efficiency(counts: Mapping[int, int], vocab_size: int, alpha: float = 2.5) -> float:
    """H_alpha(p) / log(vocab_size) for the unigram distribution p of token counts; alpha = 1
    is Shannon entropy. 1 means every token of the vocabulary is used equally often."""
    if vocab_size < 2:
        raise ValueError(f"Rényi efficiency needs a vocabulary of at least 2 tokens, got {vocab_size}")
    total = sum(counts.values())
    if not total:
        raise ValueError("Rényi efficiency of no tokens is undefined")
    probabilities = [count / total for count in counts.values() if count]
    if alpha == 1:
        entropy = -sum(p * math.log(p) for p in probabilities)
    else:
        entropy = math.log(sum(p ** alpha for p in probabilities)) / (1 - alpha)
    return entropy / math.log(vocab_size)


def token_counts(outputs: Iterable[Sequence[int]]) -> Counter:
    """How often each id occurs over a set of id sequences."""
    counts: Counter = Counter()
    for ids in outputs:
        counts.update(ids)
    return counts


def decode_errors(tokenizer: Tokenizer, outputs: Iterable[Sequence[int]]) -> int:
    """Decode errors (each a U+FFFD that decode writes) summed over a set of id sequences, each
    decoded on its own, as a model's separate outputs would be."""
    return sum(tokenizer.decode_errors(ids) for ids in outputs)


def per_token(amount: int, tokens: int) -> float:
    """`amount` (bytes, characters) per token: amount / CTC; higher means better compression."""
    if not tokens:
        raise ValueError("a per-token rate over no tokens is undefined")
    return amount / tokens


def word_count(text: str) -> int:
    """Whitespace-separated words (str.split with no argument)."""
    return len(text.split())


def fertility(tokens: int, words: int) -> float:
    """Tokens per whitespace-separated word (Rust et al. 2021); 1 is a token per word."""
    if not words:
        raise ValueError("fertility of a text with no words is undefined")
    return tokens / words


def length_histogram(lengths: Sequence[int], counts: Mapping[int, int] | None = None,
                     ids: Iterable[int] | None = None) -> dict[int, int]:
    """{length: how many}: over the vocabulary (each id in `ids` once; default every id), or
    over a corpus when `counts` gives each id's occurrences. `lengths[id]` is the token's
    length in base symbols."""
    histogram: Counter = Counter()
    if counts is None:
        for i in range(len(lengths)) if ids is None else ids:
            histogram[lengths[i]] += 1
    else:
        for i, count in counts.items():
            histogram[lengths[i]] += count
    return dict(sorted(histogram.items()))


def frequency_rank(counts: Mapping[int, int]) -> list[int]:
    """Token counts in decreasing order: entry r-1 is the count of the r-th most frequent token
    (the frequency-rank curve; Zipf's law makes it a line on log-log axes). Unused ids are left
    out."""
    return sorted((c for c in counts.values() if c), reverse=True)


def unused_share(counts: Mapping[int, int], ids: Collection[int]) -> float:
    """Share of the ids in `ids` (a vocabulary, usually without its special tokens) that never
    occur in `counts`."""
    if not ids:
        raise ValueError("unused share of an empty vocabulary is undefined")
    return sum(1 for i in ids if not counts.get(i)) / len(ids)


def scaffold_share(scaffold_tokens: int, expanded_size: int) -> float:
    """Share of scaffold tokens in a Scaffold-BPE expanded vocabulary (base symbols and every
    merge, special tokens left out): scaffold tokens / expanded size. (The Scaffold-BPE paper:
    about 6 % of a 32K vocabulary trained on the Pile.)"""
    if not 0 <= scaffold_tokens <= expanded_size or expanded_size == 0:
        raise ValueError(f"{scaffold_tokens} scaffold tokens in an expanded vocabulary of"
                         f" {expanded_size}")
    return scaffold_tokens / expanded_size


def jaccard(a: Collection, b: Collection) -> float:
    """|A ∩ B| / |A ∪ B|; two empty sets are identical (1)."""
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a or b else 1.0


def vocabulary_overlap(vocabularies: Mapping[str, Collection]) -> dict:
    """Overlap of named vocabularies (sets of tokens, e.g. their base-symbol tuples):

    - jaccard: {a: {b: Jaccard(a, b)}} for every pair, 1 on the diagonal;
    - unique: {a: tokens of a in no other vocabulary};
    - regions (2 or 3 vocabularies, for a Venn diagram): {"10": n, "01": n, "11": n, ...},
      each key saying which vocabularies hold a token ("1") and which do not ("0"); every
      token is in exactly one region.
    """
    sets = {name: set(v) for name, v in vocabularies.items()}
    names = list(sets)
    result: dict = {
        "jaccard": {a: {b: jaccard(sets[a], sets[b]) for b in names} for a in names},
        "unique": {a: sets[a].difference(*(sets[b] for b in names if b != a)) for a in names},
    }
    if 2 <= len(names) <= 3:
        regions = {}
        for key in product("01", repeat=len(names)):
            if "1" in key:
                inside = set.intersection(*(sets[n] for n, k in zip(names, key) if k == "1"))
                regions["".join(key)] = len(inside.difference(*(sets[n] for n, k in zip(names, key)
                                                                if k == "0")))
        result["regions"] = regions
    return result


def context_diversity(distinct: Sequence[int], counts: Mapping[int, int]) -> float:
    """Context diversity after SaGe: a token's distinct neighbours within a window divided by
    its frequency, averaged over the corpus's token occurrences (frequency-weighted), which is
    sum(distinct) / sum(counts). Low: tokens recur in the same contexts. Depends on corpus size,
    so compare tokenizers on the same corpus only."""
    total = sum(counts.values())
    if not total:
        raise ValueError("context diversity of no tokens is undefined")
    return sum(distinct[i] for i, c in counts.items() if c) / total


class CorpusStats:
    """What the metrics need from one tokenizer's encoding of a corpus, fed document by
    document with `add`: totals, counts per id, distinct neighbour pairs, decode errors.

    Memory: O(vocab_size) counts plus at most vocab_size**2 neighbour pairs, independent of
    the corpus length. Text is encoded as ordinary text (special-token text is not special).
    """

    def __init__(self, tokenizer: Tokenizer, window: int = 2):
        self.tokenizer = tokenizer
        self.documents = self.characters = self.bytes = self.words = 0
        self.decode_errors = 0
        self.counts: Counter = Counter()
        self.neighbours = NeighbourPairs(window)

    def add(self, text: str) -> None:
        ids = self.tokenizer.encode_ordinary(text)
        self.documents += 1
        self.characters += len(text)
        self.bytes += utf8_length(text)
        self.words += word_count(text)
        self.counts.update(ids)
        self.neighbours.add(array("i", ids))
        self.decode_errors += decode_errors(self.tokenizer, [ids])

    @property
    def tokens(self) -> int:
        """The corpus token count (CTC)."""
        return sum(self.counts.values())


def _check_not_empty(text: str) -> None:
    if not text:
        raise ValueError("a per-character rate of an empty text is undefined")
