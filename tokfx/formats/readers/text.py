"""Plain-text documents: a .txt file whose special tokens separate its documents (a file without
them is one document). A file can be read in byte ranges cut at special tokens
(tokfx.pre_tokenizers.boundaries), each range giving the same documents as the whole file.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from tokfx.formats.documents import CorpusError, Document, Rejection
from tokfx.special_tokens import SpecialTokens


def split_text_documents(data: bytes, start: int, name: str,
                         special_tokens: Sequence[str]) -> Iterator[Document | Rejection]:
    """The documents of bytes [start, start + len(data)) of a .txt file, cut at special tokens.

    The special tokens themselves are separators and belong to no document; empty pieces
    between two separators are not documents. A document's id is `name@offset` of its first
    byte, so a range read alone gives the same ids as the whole file read at once.
    """
    cuts = list(SpecialTokens(special_tokens).spans_in_bytes(data))
    begin = 0
    for piece_end, next_begin in cuts + [(len(data), len(data))]:
        if piece_end > begin:
            source = f"{name}@{start + begin}"
            try:
                yield Document(source, data[begin:piece_end].decode("utf-8"), source)
            except UnicodeDecodeError as exc:
                yield Rejection(name, None, f"not valid UTF-8 at byte {start + begin + exc.start}")
        begin = next_begin


def read_text_file(path: str | os.PathLike) -> str:
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CorpusError(f"{path}:{line}: not valid UTF-8 (byte {exc.start})") from None
