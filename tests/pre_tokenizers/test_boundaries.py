import io
from bisect import bisect_right
from collections import Counter

import pytest
import regex

from conftest import corpus_text, fixture_path
from tokfx import count_pretokens, count_pretokens_file
from tokfx.counting import count_lines, count_lines_file
from tokfx.counting.text_file import count_text_file
from tokfx.formats.documents import CorpusError, Rejection
from tokfx.formats.readers.policy import CollectingPolicy
from tokfx.pre_tokenizers.boundaries import find_chunk_boundaries
from tokfx.pre_tokenizers.patterns import GPT2

EOT = "<|endoftext|>"


def test_boundaries_sit_on_special_tokens():
    data = fixture_path("tinystories_sample.txt").read_bytes()
    bounds = find_chunk_boundaries(io.BytesIO(data), 8, [EOT])
    assert bounds[0] == 0 and bounds[-1] == len(data) and bounds == sorted(set(bounds))
    assert len(bounds) > 2
    for b in bounds[1:-1]:
        assert data[b:].startswith(EOT.encode())


def test_a_special_token_straddling_the_guess_is_not_cut():
    # A doubled token straddles the middle; cutting inside it would split it into two.
    data = ("x" * 95 + EOT + EOT + "y" * 100).encode()
    bounds = find_chunk_boundaries(io.BytesIO(data), 2, [EOT, EOT + EOT])
    assert bounds == [0, 95, len(data)]


def test_newline_boundaries_need_non_space_neighbours():
    data = ("word " * 30 + " \n\n  " + "more " * 30 + "\n" + "tail " * 10 + "x\ny").encode()
    for b in find_chunk_boundaries(io.BytesIO(data), 10)[1:-1]:
        assert data[b - 1:b] == b"\n"
        assert not data[b - 2:b - 1].isspace() and not data[b:b + 1].isspace()


def test_no_boundary_found_gives_one_range():
    data = b"     " * 100
    assert find_chunk_boundaries(io.BytesIO(data), 4) == [0, len(data)]


@pytest.mark.parametrize("processes", [1, 2])
def test_parallel_counts_equal_a_whole_file_count(tmp_path, processes):
    path = fixture_path("tinystories_sample.txt")
    text = path.read_text(encoding="utf-8")
    assert count_pretokens_file(path, "gpt2", [EOT], processes) == count_pretokens(text, "gpt2", [EOT])


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", "llama3"])
def test_parallel_counts_without_special_tokens_equal_a_whole_file_count(tmp_path, pattern):
    # Lines of WikiText end in " \n" (never a safe cut); the novel has plain line ends.
    text = corpus_text("english/pg2701_moby_dick.txt").replace("\r\n", "\n")[:400_000]
    text += "\n  trailing \n\n"
    path = tmp_path / "wiki.txt"
    path.write_text(text, encoding="utf-8")
    with open(path, "rb") as f:
        assert len(find_chunk_boundaries(f, 8)) == 9
    assert count_pretokens_file(path, pattern, (), 2) == count_pretokens(text, pattern)


def test_invalid_utf8_names_the_file_line_and_offset(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine text\n\xff\xfe more")
    with pytest.raises(CorpusError, match=rf"^{path}:2: not valid UTF-8 at byte 10$"):
        count_pretokens_file(path, processes=1)


def test_counts_equal_regex_on_a_cjk_corpus(tmp_path):
    text = corpus_text("chinese/hongloumeng.txt")[:100_000]
    path = tmp_path / "zh.txt"
    path.write_text(text, encoding="utf-8")
    expected = Counter(p.encode() for p in regex.findall(GPT2, text))
    assert count_pretokens_file(path, "gpt2", (), 2) == expected


BAD = (7, 150, 290)  # the documents with a byte that is not UTF-8


def _bad_corpus(tmp_path, separator=EOT):
    """300 two-line documents, three of them with a bad byte; (path, data, good documents)."""
    docs = [f"document {i}\nline two of {i} é".encode() for i in range(300)]
    for i in BAD:
        docs[i] = docs[i].replace(b"two", b"tw\xff")
    data = (separator + "\n").encode().join(docs)
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    good = [piece.decode() for piece in data.split(EOT.encode()) if b"\xff" not in piece]
    return path, data, good


def _rejections_by_hand(path, data):
    """Each bad byte's line (newlines before it, plus one) and offset, in file order."""
    offsets = [i for i in range(len(data)) if data[i] == 0xFF]
    return [Rejection(str(path), data.count(b"\n", 0, at) + 1, f"not valid UTF-8 at byte {at}")
            for at in offsets]


def test_a_bad_document_in_any_range_is_one_rejection_with_its_line_in_the_file(tmp_path):
    path, data, good = _bad_corpus(tmp_path)
    with open(path, "rb") as f:
        bounds = find_chunk_boundaries(f, 2 * 4, [EOT])
    # The bad documents lie in three ranges, two of which do not start the file.
    ranges = [bisect_right(bounds, i) for i in range(len(data)) if data[i] == 0xFF]
    assert len(set(ranges)) == 3 and sorted(ranges)[1] > 1
    errors = CollectingPolicy("skip")
    counted = count_text_file(path, "gpt2", [EOT], processes=2, lines=True, errors=errors)
    assert errors.rejected == _rejections_by_hand(path, data)
    assert counted.documents == len(good) == 300 - len(BAD)
    assert counted.pretokens == count_pretokens(good, "gpt2", [EOT])
    assert counted.lines == count_lines(good, [EOT])


def test_fail_stops_at_the_first_bad_document_of_the_file(tmp_path):
    path, data, _ = _bad_corpus(tmp_path)
    first = _rejections_by_hand(path, data)[0]
    with pytest.raises(CorpusError, match=rf"^{path}:{first.line}: {first.reason}$"):
        count_pretokens_file(path, "gpt2", [EOT], processes=2)


def test_without_special_tokens_a_bad_byte_rejects_the_whole_file_once(tmp_path):
    path, data, _ = _bad_corpus(tmp_path, separator="")
    with open(path, "rb") as f:
        assert len(find_chunk_boundaries(f, 8)) > 2  # counted in several ranges all the same
    errors = CollectingPolicy("skip")
    counted = count_text_file(path, "gpt2", (), processes=2, lines=True, errors=errors)
    assert counted == (({}, {}, 0))
    assert errors.rejected == _rejections_by_hand(path, data)[:1]


def test_count_lines_file_reads_through_the_same_policy(tmp_path):
    path, data, good = _bad_corpus(tmp_path)
    errors = CollectingPolicy("skip")
    assert count_lines_file(path, [EOT], range_bytes=1000, errors=errors) == count_lines(good, [EOT])
    assert errors.rejected == _rejections_by_hand(path, data)


def test_an_empty_text_file_is_rejected_whole(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    with pytest.raises(CorpusError, match=rf"^{path}: empty file$"):
        count_pretokens_file(path, processes=2)
    errors = CollectingPolicy("skip")
    assert count_text_file(path, special_tokens=[EOT], errors=errors) == ({}, None, 0)
    assert errors.rejected == [Rejection(str(path), None, "empty file", whole_file=True)]


@pytest.mark.parametrize("name", ["o200k", "tekken", "cl100k", "gpt2"])
def test_a_newline_before_a_slash_is_no_cut(name):
    # o200k's and tekken's punctuation piece takes "\n/" along ("!\n/" is one piece): cutting
    # after that newline would split a piece (found by the forced-cut fuzz with tekken).
    from tokfx.pre_tokenizers import PATTERNS, PreTokenizer

    text = "a!\n/b c"
    cut = PreTokenizer(name).safe_cut(text)
    pieces = regex.findall(PATTERNS[name], text)
    assert regex.findall(PATTERNS[name], text[:cut]) + regex.findall(PATTERNS[name], text[cut:]) == pieces
