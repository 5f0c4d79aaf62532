"""Each Hugging Face normalizer tokfx reads, alone, against `tokenizers`' own on every kind of
assigned character: the Unicode tables that decide (Unicode 9.0 normalization, the Unicode 8.0
categories of its crates) are where Python's newer ones differ."""
import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import normalizers

from conftest import ASSIGNED
from tokfx.normalizers import tokenizers_categories as crates
from tokfx.normalizers.huggingface import huggingface_normalizer



def _newer_than_the_crates() -> list[str]:
    """Characters whose class in Python's Unicode differs from the crates' tables (marks,
    "other" and punctuation assigned after Unicode 8.0 / 9.0, and characters only a newer
    Unicode normalizes), so that the fuzz meets them."""
    def members(ranges):
        return {c for a, b in ranges for c in range(a, b + 1)}
    classes = [("M", members(crates.MARK)), ("Mn", members(crates.NONSPACING_MARK)),
               (("Cc", "Cf", "Co"), members(crates.OTHER)), ("P", members(crates.PUNCTUATION))]
    normalizing = members(crates.NORMALIZING)
    out = []
    for code in range(0x110000):
        category = unicodedata.category(chr(code))
        if category in ("Cn", "Cs"):
            continue
        if any(category.startswith(prefix) != (code in table) for prefix, table in classes) or (
                (unicodedata.combining(chr(code)) or unicodedata.decomposition(chr(code))) and code not in normalizing):
            out.append(chr(code))
    return out


# Marks, Hangul jamo and compatibility characters, which the normal forms combine and reorder,
# the characters where the tables differ, and characters of every kind.
TEXTS = st.lists(st.one_of(st.sampled_from(list("ae\u0301\u0308\u0327\u0323 \uac00\u1100\u1161\u11a8\u212b"
                                                "\ufb01\u2460\uff21\u03a3\u0130")),
                           st.sampled_from(_newer_than_the_crates()),
                           st.text(ASSIGNED, max_size=3)), max_size=10).map("".join)

SPECS = {
    "NFC": normalizers.NFC(), "NFD": normalizers.NFD(), "NFKC": normalizers.NFKC(), "NFKD": normalizers.NFKD(),
    "Lowercase": normalizers.Lowercase(), "StripAccents": normalizers.StripAccents(),
    "Strip": normalizers.Strip(left=True, right=True),
    "BertNormalizer": normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, lowercase=True),
}


@pytest.mark.parametrize("kind", sorted(SPECS))
@settings(max_examples=400, deadline=None)
@given(text=TEXTS)
def test_each_normalizer_rewrites_text_as_tokenizers_does(kind, text):
    reference = SPECS[kind]
    ours = huggingface_normalizer(json.loads(normalizers.Sequence([reference]).__getstate__())["normalizers"][0])
    assert ours.normalize(text) == reference.normalize_str(text)
