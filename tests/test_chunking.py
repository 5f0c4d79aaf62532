import io
from collections import Counter

import pytest
import regex

from conftest import corpus_text, fixture_path
from tokfx import count_pretokens, count_pretokens_file
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


def test_invalid_utf8_names_the_file_and_offset(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine text\n\xff\xfe more")
    with pytest.raises(ValueError, match=r"bad.txt: invalid UTF-8 at byte 10"):
        count_pretokens_file(path, processes=1)


def test_counts_equal_regex_on_a_cjk_corpus(tmp_path):
    text = corpus_text("chinese/hongloumeng.txt")[:100_000]
    path = tmp_path / "zh.txt"
    path.write_text(text, encoding="utf-8")
    expected = Counter(p.encode() for p in regex.findall(GPT2, text))
    assert count_pretokens_file(path, "gpt2", (), 2) == expected
