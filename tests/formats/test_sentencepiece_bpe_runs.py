"""sentencepiece's BPE on long CJK-like pieces, the oracle of tokfx's BPE read run by run
(tests/segmenters/test_bpe_runs.py holds the core against its twin): hand-written BPE models whose
pieces are characters of a small CJK-like set and pieces joined from them, with byte fallback or
the unknown piece, and texts that are long runs of covered and uncovered characters with the odd
space, as a Chinese line is one piece under sentencepiece's whitespace split."""
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokfx
from test_sentencepiece_tokenizer import _model_file

spm = pytest.importorskip("sentencepiece")

CHARACTERS = "中文人天下，。“”▁"
TEXT_UNITS = list(CHARACTERS.replace("▁", "")) + ["众", "認識", "吾輩", "😀", "é", " ", "a"]


@st.composite
def vocabularies(draw):
    """Pieces in score order: some characters (▁ always, as sentencepiece's models hold it), and
    pieces joined from two earlier pieces, anywhere in the order after both."""
    characters = ["▁"] + sorted(draw(st.sets(st.sampled_from(CHARACTERS[:-1]), min_size=1)))
    pieces = list(characters)
    for _ in range(draw(st.integers(0, 25))):
        joined = draw(st.sampled_from(pieces)) + draw(st.sampled_from(pieces))
        if joined not in pieces:
            pieces.insert(draw(st.integers(len(characters), len(pieces))), joined)
    return pieces


@settings(max_examples=120, deadline=None)
@given(vocabularies(), st.booleans(), st.lists(st.lists(st.sampled_from(TEXT_UNITS), max_size=250).map("".join),
                                               min_size=1, max_size=4))
def test_long_cjk_pieces_encode_as_sentencepiece(pieces, byte_fallback, texts):
    with tempfile.TemporaryDirectory() as directory:
        path = _model_file(Path(directory), pieces, byte_fallback=byte_fallback)
        processor = spm.SentencePieceProcessor(model_file=str(path))
        tokenizer = tokfx.Tokenizer.from_sentencepiece(path)
        assert [tokenizer.encode(text) for text in texts] == processor.encode(texts)
