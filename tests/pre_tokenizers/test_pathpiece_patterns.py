"""The PathPiece paper's pre-tokenization variants: each regex against a rule-by-rule reference,
and each variant's defining property on trained vocabularies."""
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import tokfx
from tokfx.pre_tokenizers import PreTokenizer

# Spaces, other whitespace (tab, newline, ideographic space), digits, letters, a 2-byte letter.
texts = st.text(alphabet=" \t\n\u30001209abé", max_size=40)


def firstspace_rule(text: str) -> list[str]:
    """Maximal whitespace / non-whitespace runs; a single U+0020 ending a whitespace run moves to
    the front of the non-whitespace run after it."""
    runs = regex.findall(r"\s+|\S+", text)
    out = []
    for i, run in enumerate(runs):
        if i + 1 < len(runs) and run[-1] == " " and regex.match(r"\s", run):
            run = run[:-1]
            runs[i + 1] = " " + runs[i + 1]
        if run:
            out.append(run)
    return out


def split_keeping(text: str, separator_chars: str) -> list[str]:
    """Every character of separator_chars its own piece; the text between them whole."""
    out, current = [], ""
    for char in text:
        if char in separator_chars:
            out += [current] if current else []
            out.append(char)
            current = ""
        else:
            current += char
    return out + ([current] if current else [])


DIGITS = "0123456789"
RULES = {
    "firstspace": firstspace_rule,
    "space": lambda t: split_keeping(t, " "),
    "digit": lambda t: split_keeping(t, DIGITS),
    "firstspace-digit": lambda t: [p for piece in firstspace_rule(t) for p in split_keeping(piece, DIGITS)],
    "space-digit": lambda t: split_keeping(t, " " + DIGITS),
    "none": lambda t: [t] if t else [],
}


@pytest.mark.parametrize("name", sorted(RULES))
@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_variant_pattern_equals_its_rule(name, text):
    assert PreTokenizer(name).pieces(text) == [p.encode() for p in RULES[name](text)]


def test_variants_on_hand_worked_text():
    text = "a  b\t c 12x\n"
    # Runs: "a" "  " "b" "\t " "c" " " "12x" "\n"; the last space of "  ", "\t " and " " moves.
    assert PreTokenizer("firstspace").pieces(text) == [b"a", b" ", b" b", b"\t", b" c", b" 12x", b"\n"]
    assert PreTokenizer("firstspace-digit").pieces(text) == [
        b"a", b" ", b" b", b"\t", b" c", b" ", b"1", b"2", b"x", b"\n"]
    assert PreTokenizer("space").pieces(text) == [b"a", b" ", b" ", b"b\t", b" ", b"c", b" ", b"12x\n"]
    assert PreTokenizer("digit").pieces(text) == [b"a  b\t c ", b"1", b"2", b"x\n"]
    assert PreTokenizer("space-digit").pieces(text) == [
        b"a", b" ", b" ", b"b\t", b" ", b"c", b" ", b"1", b"2", b"x\n"]
    assert PreTokenizer("none").pieces(text) == [text.encode()]


def test_none_keeps_special_tokens_apart():
    eot = "<|endoftext|>"
    assert PreTokenizer("none", [eot]).pieces(f"one doc\n{eot}two\n") == [b"one doc\n", b"two\n"]


def test_no_newline_cut_for_patterns_that_keep_newlines_inside_pieces():
    # "a\nb" is one piece with `space`: cutting after the newline would change the encoding.
    assert PreTokenizer("space").safe_cut("a\nb c") == 0
    assert PreTokenizer("firstspace").safe_cut("a\nb c") == 2


@pytest.fixture(scope="module")
def small_text():
    return ("The year 1984 began on a Sunday; 2024 on a Monday.  Tabs\tand  double  spaces"
            " 3.14159 and 2718 digits. ") * 40


@pytest.mark.parametrize("name, forbidden", [("space", b" "), ("space-digit", b" "),
                                             ("digit", b"0123456789"),
                                             ("firstspace-digit", b"0123456789")])
def test_bpe_tokens_keep_the_variant_property(small_text, name, forbidden):
    tok = tokfx.train(small_text, "bpe", vocab_size=400, pattern=name)
    long_tokens = [t for t in tok.vocab.values() if len(t) > 1 and t != b"<|endoftext|>"]
    assert len(long_tokens) > 20  # enough learned tokens for the check to mean something
    assert not [t for t in long_tokens if any(c in forbidden for c in t)]


def test_bpe_tokens_with_firstspace_hold_a_space_only_at_the_front(small_text):
    tok = tokfx.train(small_text, "bpe", vocab_size=400, pattern="firstspace")
    for t in tok.vocab.values():
        text = t.decode("utf-8", "replace")
        if len(t) > 1 and not text.isspace():
            assert not regex.search(r"\s", text[1:]), t


def test_parallel_count_of_a_file_without_special_tokens_keeps_whole_pieces(tmp_path):
    # With `space`, "b\nc" is one piece: cutting the file at a newline would split it.
    text = "a b\nc d\n" * 5000
    path = tmp_path / "lines.txt"
    path.write_text(text)
    assert tokfx.count_pretokens_file(path, "space", processes=2) == tokfx.count_pretokens(text, "space")
