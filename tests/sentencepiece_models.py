"""sentencepiece models trained by the `sentencepiece` package at test time, the oracle of
tests/formats/test_sentencepiece_model.py and tests/normalizers/, and fuzzed text for them.
Models on the fixtures' text run in any clone; the `shared-*` ones need ../shared/corpora."""
from __future__ import annotations

from pathlib import Path

import sentencepiece
from hypothesis import strategies as st

from conftest import CORPUS_FILES, corpus_path, fixture_path

FIXTURE_TEXTS = ["corpus.en", "german.txt", "tinystories_sample.txt", "address.txt"]
SHARED_BYTES_PER_FILE = 100_000

# name: (the text it is trained on, sentencepiece trainer arguments beyond byte_fallback=True)
MODELS = {
    "unigram-nmt_nfkc": ("fixtures", dict(
        model_type="unigram", vocab_size=1000, normalization_rule_name="nmt_nfkc",
        user_defined_symbols=["<sep>", "<cls>"], control_symbols=["<ctl>"])),
    "bpe-identity-keep-spaces": ("fixtures", dict(
        model_type="bpe", vocab_size=1000, normalization_rule_name="identity",
        remove_extra_whitespaces=False)),
    # User symbols that the rules would change ("\t" is a space to nmt_nfkc_cf), that hold a
    # run of spaces, or a combining mark that the rules would compose.
    "unigram-suffix-nmt_nfkc_cf": ("fixtures", dict(
        model_type="unigram", vocab_size=1000, normalization_rule_name="nmt_nfkc_cf",
        treat_whitespace_as_suffix=True, user_defined_symbols=["\t", "a  b", "e\u0301x"], pad_id=3)),
    "bpe-no-prefix-nfkc": ("fixtures", dict(
        model_type="bpe", vocab_size=1000, normalization_rule_name="nfkc", add_dummy_prefix=False)),
    # Chinese, Japanese and Korean need more than 4,000 characters for sentencepiece's default
    # coverage: with less, the rarer ones fall back to bytes, as in Llama 2.
    "shared-unigram-nmt_nfkc": ("shared", dict(
        model_type="unigram", vocab_size=4000, character_coverage=0.995, normalization_rule_name="nmt_nfkc",
        user_defined_symbols=["<sep>"])),
    "shared-bpe-identity": ("shared", dict(
        model_type="bpe", vocab_size=4000, character_coverage=0.995, normalization_rule_name="identity",
        remove_extra_whitespaces=False)),
}
FIXTURE_MODELS = [name for name, (text, _) in MODELS.items() if text == "fixtures"]


class TrainedModels:
    """Each model of MODELS trained into `directory` the first time it is asked for."""

    def __init__(self, directory: Path):
        self.directory = directory

    def path(self, name: str) -> Path:
        path = self.directory / f"{name}.model"
        if not path.exists():
            text, arguments = MODELS[name]
            lines = fixture_lines() if text == "fixtures" else shared_lines()
            sentencepiece.SentencePieceTrainer.train(
                sentence_iterator=iter(lines), model_prefix=str(path.with_suffix("")), byte_fallback=True,
                num_threads=2, minloglevel=2, **arguments)
        return path

    def processor(self, name: str) -> sentencepiece.SentencePieceProcessor:
        return sentencepiece.SentencePieceProcessor(model_file=str(self.path(name)))


def fixture_lines() -> list[str]:
    return [line for name in FIXTURE_TEXTS
            for line in fixture_path(name).read_text(encoding="utf-8").splitlines()]


def shared_lines() -> list[str]:
    """The first SHARED_BYTES_PER_FILE bytes (whole lines) of every corpus file."""
    lines = []
    for relative in CORPUS_FILES:
        head = corpus_path(relative).read_bytes()[:SHARED_BYTES_PER_FILE]
        lines += head[:head.rindex(b"\n")].decode("utf-8").splitlines()
    return lines


# Text that finds the edges: whitespace of every kind and in runs, characters the rules delete
# or rewrite (controls, fullwidth and halfwidth forms, compatibility characters, sequences
# that compose), emoji, the symbols the models define, and lone surrogates.
TRICKY = [" ", "  ", "   ", "\t", "\n", "\r\n", "\x0b", "\u3000", "\u00a0", "\u2009", "\u200b", "\ufeff",
          "\u2581", "\u2581\u2581", "\ufffd", "\x00", "\x01", "\x7f", "\x9f", "e\u0301", "\u0301",
          "\u0323\u0301", "ｓ", "Ａ", "ｶﾞ", "ﾞ", "カ\u3099", "ㄱㅏ", "ㅠㅠ", "\u1100\u1161\u11a8", "<\u0338",
          "¨", "ﷺ", "½", "ℌ", "𝐀", "😀", "👍🏽", "🇯🇵", "<sep>", "<cls>", "<ctl>", "<s>", "</s>",
          "<unk>", "e\u0301x", "a  b", "中文，", "한국어", "日本語。", "\ud800", "\udfff"]
CHARACTERS = st.characters(codec="utf-8", exclude_categories=("Cs",))
TEXT = st.lists(st.one_of(st.sampled_from(TRICKY), st.text(CHARACTERS, max_size=6)), max_size=16).map("".join)
