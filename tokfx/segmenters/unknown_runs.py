"""Runs of the unknown token joined into one, as sentencepiece writes them: over an alphabet with
an unknown symbol (tokfx.alphabet; a model without byte fallback), each character not covered
is one unknown token to the segmenter (one node of the Unigram lattice, one symbol that no BPE
merge takes), and sentencepiece then writes consecutive unknown pieces as one
(PopulateSentencePieceText: "Merges continuous run of unknown pieces"). A special token between
two of them keeps them apart, as it does there: the Tokenizer encodes the chunks between special
tokens one call at a time.

The encode cores join the runs themselves, in C (their `join_runs_of`; id_list.pxd's join_runs);
UnknownRuns does it in Python around any other encoder (a tokenizer.json's own model), and is
the cores' twin in the tests."""
from __future__ import annotations

from array import array


class UnknownRuns:
    """An encoder (tokfx.segmenters) whose encode_pieces writes each run of `unknown_id` as one;
    everything else is the wrapped encoder's (its last_score, after_special, ...)."""

    def __init__(self, encoder, unknown_id: int):
        self._encoder = encoder
        self._unknown = unknown_id

    def encode_pieces(self, data: bytes, ends, as_array: bool = False, *score_from):
        ids = self._encoder.encode_pieces(data, ends, as_array, *score_from)
        unknown = self._unknown
        if unknown not in ids:  # the common case, at C speed
            return ids
        kept = [i for k, i in enumerate(ids) if i != unknown or k == 0 or ids[k - 1] != unknown]
        return array("i", kept) if as_array else kept

    def __getattr__(self, name):
        return getattr(self._encoder, name)


def joining_unknown_runs(build):
    """A registry entry's `build` whose encoder joins runs of the unknown token, where the
    alphabet has an unknown symbol (its token's id: the symbol's in `symbol_ids`)."""

    def joining(**kwargs):
        encoder = build(**kwargs)
        symbol = kwargs["alphabet"].unknown_symbol
        if symbol is None:
            return encoder
        unknown_id = kwargs["symbol_ids"][symbol]
        if hasattr(encoder, "join_runs_of"):
            encoder.join_runs_of(unknown_id)
            return encoder
        return UnknownRuns(encoder, unknown_id)

    return joining
