"""Scaffold-BPE's expanded vocabulary: every merge in rank order with its token's final scaffold
flag, the map to model ids, and the demolition table encoding uses.

Expanded ids: the alphabet's base symbols, then one per merge in rank order. Model ids (what
encode returns and decode takes): the base symbols, then the normal learned tokens in expanded
order; a Tokenizer appends the special tokens. A scaffold token never gets a model id: encoding
applies every merge (scaffolding), then replaces each scaffold token by its demolition,
`demolish(t) = [t]` for a normal token, else `demolish(left) + demolish(right)`.
"""
from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from functools import cached_property
from itertools import compress, count

from tokfx._bpe_encode import BPEEncoder
from tokfx.alphabet import Alphabet
from tokfx.segmenters.bpe import token_bytes


class ScaffoldVocab:
    """The expanded vocabulary of a Scaffold-BPE tokenizer (`Tokenizer.scaffold`)."""

    def __init__(self, alphabet: Alphabet, merges: Sequence[tuple[int, int]], scaffold: Iterable[int]):
        """merges: (left, right) in expanded ids, merge i creating id alphabet.size + i;
        scaffold: the expanded ids flagged scaffold at the end of training."""
        self.alphabet = alphabet
        self.merges = [tuple(m) for m in merges]
        self.scaffold = frozenset(scaffold)
        for rank, (left, right) in enumerate(self.merges):
            if not (0 <= left < alphabet.size + rank and 0 <= right < alphabet.size + rank):
                raise ValueError(f"scaffold merge {rank} ({left}, {right}) uses an id not made before it")
        outside = [t for t in self.scaffold if not alphabet.size <= t < self.expanded_size]
        if outside:
            raise ValueError(f"scaffold token {min(outside)} is not a learned token"
                             f" ({alphabet.size}..{self.expanded_size - 1}): base symbols are never scaffold")
        self.model_ids = self._model_ids()

    @property
    def expanded_size(self) -> int:
        return self.alphabet.size + len(self.merges)

    def _model_ids(self) -> list[int | None]:
        """Per expanded id, its model id, or None for a scaffold token."""
        model_id = count()
        return [None if token in self.scaffold else next(model_id) for token in range(self.expanded_size)]

    @cached_property
    def demolition_table(self) -> tuple[array, array]:
        """(starts, ids): expanded id t is emitted as ids[starts[t]:starts[t + 1]], its model id
        if it is normal, else its merge parts' demolitions joined (parts come before a merge)."""
        size = self.alphabet.size
        ids = array("i", range(size))  # base symbols are normal and keep their ids
        starts = array("q", range(size + 1))
        for (left, right), model_id in zip(self.merges, self.model_ids[size:]):
            if model_id is None:
                ids += ids[starts[left]:starts[left + 1]]
                ids += ids[starts[right]:starts[right + 1]]
            else:
                ids.append(model_id)
            starts.append(len(ids))
        return starts, ids

    def demolition(self, token: int) -> list[int]:
        """The model ids encoding emits for expanded id `token`."""
        starts, ids = self.demolition_table
        return ids[starts[token]:starts[token + 1]].tolist()

    @cached_property
    def expanded_tokens(self) -> list:
        """Every expanded token by expanded id, as the alphabet holds tokens."""
        return token_bytes(self.merges, self.alphabet)

    @property
    def normal_tokens(self) -> list:
        """The tokens of model ids 0.. (no special tokens)."""
        return list(compress(self.expanded_tokens, (m is not None for m in self.model_ids)))

    @cached_property
    def normal_merges(self) -> list[tuple[int, int, int]]:
        """The merges whose parts and result are all normal, in model ids: all of them (then
        plain BPE files express the tokenizer exactly) only when nothing is scaffold."""
        ids = self.model_ids
        return [(ids[left], ids[right], merged)
                for (left, right), merged in zip(self.merges, ids[self.alphabet.size:])
                if merged is not None and ids[left] is not None and ids[right] is not None]

    def check_model(self, tokens: Sequence, special_ids: Iterable[int]) -> None:
        """A Tokenizer's tokens must be the normal tokens, then special tokens only."""
        normal = self.normal_tokens
        if list(tokens[:len(normal)]) != normal:
            raise ValueError("the tokens are not the scaffold vocabulary's normal tokens in order")
        extra = set(range(len(normal), len(tokens))) - set(special_ids)
        if extra:
            raise ValueError(f"token {min(extra)} is neither a normal token nor a special token")

    def encoder(self) -> BPEEncoder:
        """Every merge by rank over expanded ids, then demolition into model ids."""
        triples = [(left, right, token) for token, (left, right) in enumerate(self.merges, self.alphabet.size)]
        return BPEEncoder(triples, range(self.alphabet.size), **self.alphabet.symbol_map,
                          demolition=self.demolition_table)

    # --- tokfx.json ------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"merges": [list(m) for m in self.merges],
                "is_scaffold": [token in self.scaffold for token in range(self.alphabet.size, self.expanded_size)],
                "model_ids": self.model_ids}

    @classmethod
    def from_dict(cls, doc: dict, alphabet: Alphabet) -> "ScaffoldVocab":
        if len(doc["is_scaffold"]) != len(doc["merges"]):
            raise ValueError(f"scaffold: {len(doc['is_scaffold'])} flags for {len(doc['merges'])} merges")
        flagged = [alphabet.size + i for i, flag in enumerate(doc["is_scaffold"]) if flag]
        vocab = cls(alphabet, doc["merges"], flagged)
        if doc["model_ids"] != vocab.model_ids:
            raise ValueError("scaffold: model_ids do not number the normal tokens in expanded order")
        return vocab
