"""Counting the pre-tokens of many texts, a batch at a time."""
from __future__ import annotations

from array import array

from tokfx._count_table import CountTable, count_pieces
from tokfx.normalizers.surrogates import replace_lone_surrogates
from tokfx.pre_tokenizers import PreTokenizer

BATCH_BYTES = 1 << 20


class PretokenCounter:
    """Adds the pre-tokens of texts (special tokens left out) into `counts`: a CountTable
    (tokfx._count_table), or a dict of bytes -> int, whose keys then come in order of first
    occurrence.

    Per text, only normalization, the special-token split and UTF-8 encoding run in Python. The
    chunks of about BATCH_BYTES of text are then split and counted by one native call each: a
    call per short text cost more than its work (en_10M's 128,050 lines: 0.29 s with two calls
    a line, 0.16 s by batches). A built-in pattern's pieces go into a CountTable as the
    splitter finds them (CountTable.add_pretokens: bench/README.md, "Counting in one native
    pass"). `counts` holds every text added once `flush` has run.
    """

    def __init__(self, pretokenizer: PreTokenizer, counts, batch_bytes: int | None = None):
        self.pretokenizer = pretokenizer
        self.counts = counts
        self._batch_bytes = BATCH_BYTES if batch_bytes is None else batch_bytes
        self._chunks: list[bytes] = []  # the batch's data, to be joined
        self._ends = array("q")  # where each text's chunk ends in the joined data
        self._size = 0

    def add(self, text: str) -> None:
        """Count `text` with the batch; any str, a lone surrogate as `Tokenizer.encode` has it
        (U+FFFD), paid for only by a text that fails to encode."""
        queued, ended, size = len(self._chunks), len(self._ends), self._size
        try:
            self._queue(text)
        except UnicodeEncodeError:
            del self._chunks[queued:]
            del self._ends[ended:]
            self._size = size
            self._queue(replace_lone_surrogates(text))
        if self._size >= self._batch_bytes:
            self.flush()

    @property
    def takes_utf8(self) -> bool:
        """Whether `add_texts` counts texts given as UTF-8: the pre-tokenizer normalizes none."""
        return self.pretokenizer.normalizer is None

    def add_texts(self, data: bytes, ends) -> None:
        """`add` of each text of `data`, the UTF-8 of texts concatenated, the i-th ending at
        ends[i] (Texts, as a reader's `read_texts` gives them: valid UTF-8), where `takes_utf8`.
        Without special tokens the data joins the batch whole; with them each text is cut at
        its special tokens apart: UTF-8 being self-synchronizing, their UTF-8 is found where
        the text holds them."""
        if not self.takes_utf8:
            raise ValueError("a pre-tokenizer with a normalizer counts texts, not UTF-8")
        if self.pretokenizer.specials:
            start = 0
            for end in ends:
                self._add_cut(data[start:end])
                start = end
        else:
            self._chunks.append(data)
            self._ends.extend(map(self._size.__add__, ends))
            self._size += len(data)
        if self._size >= self._batch_bytes:
            self.flush()

    def _add_cut(self, text: bytes) -> None:
        start = 0
        for begin, end in self.pretokenizer.specials.spans_in_bytes(text):
            self._append(text[start:begin])
            start = end
        self._append(text[start:] if start else text)

    def _queue(self, text: str) -> None:
        for chunk, special in self.pretokenizer.chunks(text):
            if not special:
                self._append(chunk.encode("utf-8"))

    def _append(self, data: bytes) -> None:
        if data:  # as SpecialTokens.split leaves empty chunks out
            self._chunks.append(data)
            self._size += len(data)
            self._ends.append(self._size)

    def flush(self):
        """Count the texts added since the last flush; returns `counts`."""
        if self._chunks:
            data, chunk_ends = b"".join(self._chunks), self._ends
            matcher = self.pretokenizer.matcher if isinstance(self.counts, CountTable) else None
            if matcher is not None:  # split and counted in one pass, without the array of piece ends
                self.counts.add_pretokens(data, matcher, chunk_ends)
            else:
                count_pieces(self.counts, data, self.pretokenizer.piece_ends(data, chunk_ends))
            self._chunks.clear()
            self._ends = array("q")
            self._size = 0
        return self.counts
