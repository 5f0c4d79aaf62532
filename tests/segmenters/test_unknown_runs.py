"""The encode cores' own joining of runs of one token (join_runs_of, in C) against
tokfx.segmenters.unknown_runs.UnknownRuns, the Python twin, around the same core without it."""
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from tokfx._bpe_encode import BPEEncoder
from tokfx._path_segment import PathSegmenter
from tokfx.segmenters.unknown_runs import UnknownRuns

BYTES = [(b,) for b in range(256)]
LEARNED = [(97, 97), (97, 98), (98, 97, 97)]  # "aa", "ab", "baa"
TEXT = st.lists(st.sampled_from([b"a", b"b", b"c", b"ab", b"aab"]), max_size=12)


def _encoders(kind: str):
    if kind == "bpe":
        merges = [(97, 97, 256), (97, 98, 257), (98, 256, 258)]
        return BPEEncoder(merges, range(256)), BPEEncoder(merges, range(256))
    if kind == "likelihood":
        scores = [-5.0] * 256 + [-1.0, -2.0, -1.5]
        return (PathSegmenter(BYTES + LEARNED, kind, scores=scores, float_bits=32),
                PathSegmenter(BYTES + LEARNED, kind, scores=scores, float_bits=32))
    return PathSegmenter(BYTES + LEARNED, kind), PathSegmenter(BYTES + LEARNED, kind)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["bpe", "pathpiece-l", "greedy", "likelihood"]), pieces=TEXT,
       joined=st.sampled_from([97, 98, 99, 256]), as_array=st.booleans())
def test_the_cores_join_runs_as_the_twin(kind, pieces, joined, as_array):
    core, plain = _encoders(kind)
    core.join_runs_of(joined)
    data = b"".join(pieces)
    ends = array("q", [])
    for piece in pieces:
        ends.append((ends[-1] if ends else 0) + len(piece))
    if not ends:
        ends.append(0)
    twin = UnknownRuns(plain, joined)
    assert core.encode_pieces(data, ends, as_array) == twin.encode_pieces(data, ends, as_array)
