"""sentencepiece Unigram models whose pieces nearly tie (scores a few 2^-19 apart, under a float32
ulp of the running sums of long texts), written by hand and encoded by sentencepiece itself: the
float32 running sum's rounding decides between segmentations, so tokfx's cached segments
(viterbi32_segments.pxd) must fall back to the Viterbi wherever the bound does not hold."""
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokfx
from tokfx.formats.sentencepiece_model import NormalizerSpec, Piece, SentencePieceModel, write_sentencepiece_model

spm = pytest.importorskip("sentencepiece")

# No piece holds ▁ after its first character: every path crosses before each ▁.
PIECES = ["▁", "a", "b", "c", "ab", "ba", "aab", "abb", "bc", "cab", "abc", "aa", "bb", "▁a", "▁ab", "▁ba", "▁c"]
NEAR = 2.0 ** -19
SCORE = st.builds(lambda base, k: base + k * NEAR, st.sampled_from([-1.0, -2.5, -3.5, -6.0, -7.0]),
                  st.integers(-3, 3))
WORDS = st.lists(st.text("abc", min_size=1, max_size=7), min_size=1, max_size=300).map(" ".join)


def _model(directory: Path, scores: list[float], byte_fallback: bool) -> Path:
    pieces = [Piece("<unk>", 0.0, "unknown"),
              *(Piece(f"<0x{b:02X}>", 0.0, "byte") for b in range(256 * byte_fallback)),
              *(Piece(text, score, "normal") for text, score in zip(PIECES, scores))]
    path = directory / "near-ties.model"
    write_sentencepiece_model(path, SentencePieceModel(tuple(pieces), "unigram", byte_fallback,
                                                       normalizer=NormalizerSpec("identity", b"")))
    return path


@settings(max_examples=150, deadline=None)
@given(st.lists(SCORE, min_size=len(PIECES), max_size=len(PIECES)), WORDS, st.booleans())
def test_near_ties_encode_as_sentencepiece(scores, text, byte_fallback):
    with tempfile.TemporaryDirectory() as directory:
        path = _model(Path(directory), scores, byte_fallback)
        processor = spm.SentencePieceProcessor(model_file=str(path))
        tokenizer = tokfx.Tokenizer.load(path)
    texts = [text, text + " " + text, "x " + text]  # the same words again, from other running sums
    assert [tokenizer.encode(t) for t in texts] == processor.encode(texts)
