"""The native class splits (tokfx._class_split, through HuggingFacePreTokenizer's native steps)
against their pure-Python twin (the same pre-tokenizer's Python steps: split_spans over the
class regex's matches) and against `tokenizers` itself, the oracle: BertPreTokenizer,
Punctuation, Digits, WhitespaceSplit, a Split of [0-9] written k times and Metaspace (its cut
at the replacement), alone, in sequences, and after a ByteLevel (each byte one spelled character: bytes such as B2, spelled "²", are
numbers then)."""
import json
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Regex
from tokenizers import pre_tokenizers as hf

from conftest import ASSIGNED, corpus_text
from tokfx._class_split import BEHAVIOURS, class_split
from tokfx.pre_tokenizers.byte_level import spell, unspell
from tokfx.pre_tokenizers.class_split import class_members
from tokfx.pre_tokenizers.huggingface import HuggingFacePreTokenizer


def _snake(behaviour: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in behaviour).lstrip("_")


def _byte_level(*steps):
    return hf.Sequence([*steps, hf.ByteLevel(add_prefix_space=False, use_regex=False)])


def _after_byte_level(*steps):
    return hf.Sequence([hf.ByteLevel(add_prefix_space=False, use_regex=True), *steps])


PRE_TOKENIZERS = {
    "bert": hf.BertPreTokenizer(),
    "whitespace-split": hf.WhitespaceSplit(),
    "digits": hf.Digits(individual_digits=False),
    "digits-individual": hf.Digits(individual_digits=True),
    **{f"punctuation-{_snake(b)}": hf.Punctuation(_snake(b)) for b in BEHAVIOURS},
    **{f"digit-3-{_snake(b)}": hf.Split(Regex("[0-9][0-9][0-9]"), _snake(b)) for b in BEHAVIOURS},
    "digit-2": hf.Split(Regex("[0-9]{2}"), "isolated"),
    "falcon": hf.Sequence([hf.Punctuation("contiguous"), hf.ByteLevel(add_prefix_space=False, use_regex=True),
                           hf.Digits(individual_digits=False), hf.Split(Regex("[0-9][0-9][0-9]"), "isolated")]),
    "bert-byte-level": _byte_level(hf.BertPreTokenizer()),
    "spelled-digits": _after_byte_level(hf.Digits(individual_digits=True)),
    "spelled-punctuation": _after_byte_level(hf.Punctuation("merged_with_next")),
    "spelled-whitespace": _after_byte_level(hf.WhitespaceSplit()),
    "metaspace": hf.Metaspace(replacement="\u2581", prepend_scheme="always"),
    "metaspace-never": hf.Metaspace(replacement="\u2581", prepend_scheme="never"),
    "metaspace-unsplit": hf.Metaspace(replacement="\u2581", prepend_scheme="always", split=False),
    "metaspace-underscore": hf.Metaspace(replacement="_", prepend_scheme="always"),
    "digits-metaspace": hf.Sequence([hf.Digits(individual_digits=True), hf.Metaspace(prepend_scheme="always")]),
}

_PIECES = ["12345", "1", "٣٤٥", "²³", "¼", "β", "Ѳ", "中文字，。", "...", "!?", "a,b", " ", "  ", "\t\n", "\u3000",
           "\u00a0", "\u2028", "don't", "$%^", "_", "«»", "¿¡", "§¶·", "e\u0301", "👩‍👩‍👧", "x", "\u2581", "\u2581\u2581"]
TEXTS = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(ASSIGNED, max_size=5)), max_size=12).map("".join)


@pytest.fixture(scope="module", params=sorted(PRE_TOKENIZERS))
def loaded(request):
    """(the `tokenizers` pre-tokenizer, tokfx's read from its JSON)."""
    reference = PRE_TOKENIZERS[request.param]
    ours = HuggingFacePreTokenizer(json.loads(reference.__getstate__()))
    assert ours.native_steps is not None, "this pre-tokenizer must run natively"
    return reference, ours


def native_pieces(ours: HuggingFacePreTokenizer, text: str) -> list[bytes]:
    data, ends = ours.encoder_input(text, True)
    return [data[a:b] for a, b in zip([0, *ends], ends)]


def twin_pieces(ours: HuggingFacePreTokenizer, text: str) -> list[bytes]:
    return [unspell(p) if ours.byte_level else p.encode("utf-8") for p in ours.pieces(text, True)]


def reference_pieces(reference, ours: HuggingFacePreTokenizer, text: str) -> list[bytes]:
    return [unspell(p) if ours.byte_level else p.encode("utf-8") for p, _ in reference.pre_tokenize_str(text)]


@settings(max_examples=200, deadline=None)
@given(text=TEXTS)
def test_native_twin_and_tokenizers_cut_alike(loaded, text):
    reference, ours = loaded
    expected = reference_pieces(reference, ours, text)
    assert native_pieces(ours, text) == expected
    assert twin_pieces(ours, text) == expected


@pytest.mark.parametrize("relative", ["english/pg2701_moby_dick.txt", "chinese/hongloumeng.txt"])
def test_native_twin_and_tokenizers_cut_corpora_alike(loaded, relative):
    reference, ours = loaded
    text = corpus_text(relative)[:300_000]
    expected = reference_pieces(reference, ours, text)
    assert native_pieces(ours, text) == expected
    assert twin_pieces(ours, text) == expected


def test_the_byte_classes_are_the_spelled_characters_classes():
    numbers = class_members(r"\p{N}", True)
    assert [b for b in range(256) if numbers[b >> 3] >> (b & 7) & 1] == [*range(0x30, 0x3A), 0xB2, 0xB3, 0xB9,
                                                                         0xBC, 0xBD, 0xBE]
    assert spell(bytes([0xB2])) == "²"


def test_removed_joins_the_kept_pieces_and_each_piece_is_cut_alone():
    spaces = class_members(r"\s", False)
    data = "a b  c d".encode()
    assert class_split(data, array("q", [3, len(data)]), spaces, False, 1, "Removed") == (
        b"abcd", array("q", [1, 2, 3, 4]))
    assert class_split(data, array("q", [3, len(data)]), spaces, False, 1, "Isolated")[1] == array(
        "q", [1, 2, 3, 4, 5, 6, 7, 8])


@pytest.mark.parametrize("ends, group, behaviour, message", [
    ([2], 1, "Isolated", "ends must end at len"),
    ([3, 2, 4], 1, "Isolated", "must not decrease"),
    ([4], 0, "Isolated", "group"),
    ([4], 1, "Merged", "behaviour"),
])
def test_bad_arguments_are_refused(ends, group, behaviour, message):
    with pytest.raises(ValueError, match=message):
        class_split(b"abcd", array("q", ends), class_members(r"\s", False), False, group, behaviour)


def test_a_piece_that_is_not_utf8_is_never_read_past():
    # Text stages always give UTF-8; a cut lead byte must still stay inside its piece.
    ends = class_split(b"a\xe4\xb8", array("q", [2, 3]), class_members(r"\s", False), False, 1, "Isolated")[1]
    assert list(ends) == [2, 3]
