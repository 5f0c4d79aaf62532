"""tokenizer.json files of the shapes open models ship, built with the `tokenizers` library itself
(never downloaded): byte-level BPE over GPT-2's vocabulary behind each model family's
pre-tokenizer, sentencepiece-style BPE with byte fallback trained on a small text, and the other
models: WordPiece (BERT), WordLevel, and sentencepiece Unigram models written as transformers'
T5 converter writes them. Shared by the tests and bench/bench_byo.py."""
from __future__ import annotations

import io
import json
from functools import lru_cache
from pathlib import Path

import sentencepiece

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from tokfx.formats.gpt2 import read_gpt2_files
from tokfx.pre_tokenizers.byte_level import spell
from tokfx.formats.sentencepiece_model import SentencePieceModel, parse_sentencepiece_model
from tokfx.pre_tokenizers.patterns import DEEPSEEK_V3_SPLITS, ISOLATED_SPLITS, PATTERNS

FIXTURES = Path(__file__).parent / "fixtures"
# The Split regexes of the models' own files.
QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
# DeepSeek V3's three Splits, spelled as its file spells them (CR and LF as characters).
DEEPSEEK_SPLITS = [ISOLATED_SPLITS[name] for name in DEEPSEEK_V3_SPLITS]


def _gpt2_bpe(**options) -> models.BPE:
    vocab, merges = read_gpt2_files(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    return models.BPE({spell(b): i for i, b in vocab.items()}, [(spell(a), spell(b)) for a, b in merges], **options)


def _byte_level(split: list | None = None, *, ignore_merges: bool = False, normalizer=None) -> Tokenizer:
    """GPT-2's vocabulary behind `split` (pre-tokenizers before a ByteLevel without its regex),
    or ByteLevel's own regex when None."""
    tokenizer = Tokenizer(_gpt2_bpe(ignore_merges=ignore_merges))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=split is None)
    tokenizer.pre_tokenizer = byte_level if split is None else pre_tokenizers.Sequence([*split, byte_level])
    tokenizer.decoder = decoders.ByteLevel()
    if normalizer is not None:
        tokenizer.normalizer = normalizer
    return tokenizer


def _isolated(regex: str):
    return pre_tokenizers.Split(Regex(regex), "isolated")


def gpt_neox() -> Tokenizer:
    """ByteLevel with its own regex; whitespace runs as non-special added tokens (NeoX has them)."""
    tokenizer = _byte_level()
    tokenizer.add_special_tokens(["<|endoftext|>", "<|padding|>"])
    tokenizer.add_tokens([AddedToken("   ", normalized=True), AddedToken("\t\t", normalized=False),
                          AddedToken("word", single_word=True, normalized=False),
                          AddedToken("<mask>", lstrip=True, rstrip=True, normalized=False)])
    return tokenizer


def llama3() -> Tokenizer:
    tokenizer = _byte_level([_isolated(PATTERNS["llama3"])], ignore_merges=True)
    tokenizer.add_special_tokens(["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"])
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", tokenizer.token_to_id("<|begin_of_text|>"))])
    return tokenizer


def qwen2() -> Tokenizer:
    tokenizer = _byte_level([_isolated(QWEN2)], normalizer=normalizers.NFC())
    tokenizer.add_special_tokens(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    tokenizer.add_tokens([AddedToken("<tool_call>", special=False, normalized=False),
                          AddedToken("</tool_call>", special=False, normalized=False)])
    return tokenizer


def deepseek() -> Tokenizer:
    tokenizer = _byte_level([_isolated(regex) for regex in DEEPSEEK_SPLITS])
    tokenizer.add_special_tokens(["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"])
    return tokenizer


def starcoder() -> Tokenizer:
    tokenizer = _byte_level()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tokenizer.add_special_tokens(["<|endoftext|>", "<fim_prefix>"])
    return tokenizer


def falcon() -> Tokenizer:
    tokenizer = _byte_level()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Punctuation("contiguous"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Split(Regex("[0-9][0-9][0-9]"), "isolated")])
    tokenizer.add_special_tokens([">>TITLE<<", "<|endoftext|>"])
    return tokenizer


def bert_like() -> Tokenizer:
    """BERT's normalizer and pre-tokenizer (over byte-level BPE, so that every text encodes)."""
    tokenizer = _byte_level([pre_tokenizers.BertPreTokenizer()],
                            normalizer=normalizers.BertNormalizer(lowercase=True))
    tokenizer.add_special_tokens(["[CLS]", "[SEP]", "[MASK]"])
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", tokenizer.token_to_id("[SEP]")),
                                                         ("[CLS]", tokenizer.token_to_id("[CLS]")))
    return tokenizer


def every_component() -> Tokenizer:
    """The normalizers and pre-tokenizers no model above uses, chained."""
    tokenizer = _byte_level([
        pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation("merged_with_previous"),
        pre_tokenizers.Split(" ?[a-z]+", "merged_with_next"), pre_tokenizers.Split(Regex(r"\d"), "removed"),
        pre_tokenizers.Split(Regex(r"[aeiou]+"), "contiguous", invert=True), pre_tokenizers.Whitespace()],
        normalizer=normalizers.Sequence([
            normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase(), normalizers.NFKC(),
            normalizers.Strip(left=True, right=True), normalizers.Replace("ß", "ss"), normalizers.NFD()]))
    tokenizer.add_tokens([AddedToken("Hello", normalized=True), AddedToken("ΣΑΣ", normalized=True)])
    return tokenizer


def _spm_bpe() -> tuple[dict, list]:
    """A sentencepiece-style vocabulary: <unk> <s> </s>, the 256 <0xXX> byte tokens, then a BPE
    over characters trained by tokenizers on WikiText-like lines."""
    lines = (FIXTURES / "corpus.en").read_text(encoding="utf-8").splitlines()
    trained = Tokenizer(models.BPE())
    trained.pre_tokenizer = pre_tokenizers.Metaspace()
    trained.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=2000, show_progress=False))
    model = json.loads(trained.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{f"<0x{b:02X}>": 3 + b for b in range(256)}}
    for piece in sorted(model["vocab"], key=model["vocab"].get):
        vocab.setdefault(piece, len(vocab))
    return vocab, [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]


def _byte_fallback() -> Tokenizer:
    vocab, merges = _spm_bpe()
    tokenizer = Tokenizer(models.BPE(vocab, merges, byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tokenizer.add_special_tokens([AddedToken(s, normalized=False, special=True) for s in ("<unk>", "<s>", "</s>")])
    tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                           decoders.Strip(" ", 1, 0)])
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    return tokenizer


def llama2() -> Tokenizer:
    """As transformers' converter writes Llama 2 (legacy): Prepend + Replace, no pre-tokenizer."""
    tokenizer = _byte_fallback()
    tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    return tokenizer


def mistral() -> Tokenizer:
    """As the converter writes Llama-family models without the legacy space: Metaspace "first"."""
    tokenizer = _byte_fallback()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    return tokenizer


def _corpus_lines() -> list[str]:
    return (FIXTURES / "corpus.en").read_text(encoding="utf-8").splitlines()


def bert_wordpiece() -> Tokenizer:
    """BERT: BertNormalizer (lowercase), BertPreTokenizer, a WordPiece vocabulary trained by
    tokenizers' WordPieceTrainer (its special tokens first), BertProcessing, WordPiece decoder."""
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=12))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokenizer.train_from_iterator(_corpus_lines(), trainers.WordPieceTrainer(
        vocab_size=2000, special_tokens=specials, show_progress=False))
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", tokenizer.token_to_id("[SEP]")),
                                                         ("[CLS]", tokenizer.token_to_id("[CLS]")))
    tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    return tokenizer


def word_level() -> Tokenizer:
    """A WordLevel vocabulary over Whitespace pieces (a word outside it is <unk>)."""
    tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(_corpus_lines(), trainers.WordLevelTrainer(
        vocab_size=3000, special_tokens=["<unk>", "<pad>"], show_progress=False))
    return tokenizer


def quicktour_bpe() -> Tokenizer:
    """BPE over characters with an unknown token behind Whitespace, as `tokenizers`' quick tour
    trains it (no decoder: tokens joined with spaces); a run of unknown characters is one."""
    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]", fuse_unk=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(_corpus_lines(), trainers.BpeTrainer(
        vocab_size=2000, special_tokens=["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"], show_progress=False))
    return tokenizer


def openai_gpt_like() -> Tokenizer:
    """OpenAI GPT's (and CLIP's) shape: BPE whose word-final tokens end in "</w>", lowercased
    BERT text and pieces, each unknown character its own <unk>, the BPEDecoder."""
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.train_from_iterator(_corpus_lines(), trainers.BpeTrainer(
        vocab_size=2000, special_tokens=["<unk>"], end_of_word_suffix="</w>", show_progress=False))
    tokenizer.decoder = decoders.BPEDecoder(suffix="</w>")
    return tokenizer


def subword_prefix_bpe() -> Tokenizer:
    """BPE whose tokens after a word's first carry "##" (continuing_subword_prefix), over
    WhitespaceSplit pieces, decoded as WordPiece."""
    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##", fuse_unk=False))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.train_from_iterator(_corpus_lines(), trainers.BpeTrainer(
        vocab_size=2000, special_tokens=["[UNK]"], continuing_subword_prefix="##", show_progress=False))
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    return tokenizer


@lru_cache(maxsize=None)
def sentencepiece_unigram(byte_fallback: bool) -> SentencePieceModel:
    """A sentencepiece Unigram model with T5's reserved ids (pad 0, eos 1, unk 2, no bos)."""
    written = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(_corpus_lines()), model_writer=written, model_type="unigram", vocab_size=1000,
        normalization_rule_name="nmt_nfkc", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
        byte_fallback=byte_fallback, num_threads=2, minloglevel=2)
    return parse_sentencepiece_model(written.getvalue(), "unigram model")


def _unigram(byte_fallback: bool) -> Tokenizer:
    """As transformers' T5 converter writes a sentencepiece Unigram model: every piece with its
    score, unk_id; Precompiled (the model's charsmap) then runs of spaces as one;
    Metaspace "always" before and after; "$A </s>"."""
    model = sentencepiece_unigram(byte_fallback)
    unknown = next(i for i, p in enumerate(model.pieces) if p.type == "unknown")
    tokenizer = Tokenizer(models.Unigram([(p.piece, p.score) for p in model.pieces], unknown, byte_fallback))
    tokenizer.normalizer = normalizers.Sequence([normalizers.Precompiled(model.normalizer.precompiled_charsmap),
                                                 normalizers.Replace(Regex(" {2,}"), " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.add_special_tokens([p.piece for p in model.pieces if p.type in ("control", "unknown")])
    tokenizer.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return tokenizer


def t5_unigram() -> Tokenizer:
    return _unigram(byte_fallback=False)


def unigram_byte_fallback() -> Tokenizer:
    return _unigram(byte_fallback=True)


SHAPES = {"gpt-neox": gpt_neox, "llama3": llama3, "qwen2": qwen2, "deepseek": deepseek,
          "starcoder": starcoder, "falcon": falcon, "bert-like": bert_like,
          "every-component": every_component, "llama2": llama2, "mistral": mistral,
          "bert-wordpiece": bert_wordpiece, "word-level": word_level, "t5-unigram": t5_unigram,
          "unigram-byte-fallback": unigram_byte_fallback, "quicktour-bpe": quicktour_bpe,
          "openai-gpt-like": openai_gpt_like, "subword-prefix-bpe": subword_prefix_bpe}


def write_shape(name: str, directory: Path) -> Path:
    path = directory / f"{name}.json"
    SHAPES[name]().save(str(path))
    return path
