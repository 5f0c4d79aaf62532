"""Bring your own tokenizer: single-thread encode throughput of a tokenizer file loaded into tokfx
against the file's own library, side by side in one run.

    PYTHONPATH=.:bench:tests python bench/bench_byo.py [--sections tiktoken-ranks user-patterns huggingface sentencepiece]
        [--corpora en_10M zh_5M] [--runs 3] [--shapes falcon bert-wordpiece ...]

MB/s are UTF-8 megabytes (2**20 bytes) per second, median of --runs runs; the ratio is tokfx's
speed over the peer's. Rank files: encode_ordinary over the whole corpus in one call (tokfx's
piece cache is warm after the first run, as in any long job). tokenizer.json and sentencepiece:
the corpus as documents of about 4 KB (whole lines), each encoded by one call, as a pipeline
encodes (tokenizers' `encode(doc, add_special_tokens=False)` on one thread,
TOKENIZERS_PARALLELISM=false; sentencepiece's `encode`). Every row first checks that both give
the same ids. A section is a function (corpora, runs) -> rows, registered in SECTIONS: one per
kind of file. The tokenizer.json files are tests/huggingface_files.py's shapes, built with
`tokenizers` (GPT-2's vocabulary behind each model family's pre-tokenizer); the sentencepiece
models are trained here on en_10M's first 2 MB.
"""
import os

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # one thread, before tokenizers loads
import argparse
import sys
import tempfile
from pathlib import Path

import tiktoken

from corpora import load
from timing import median_seconds
from tokfx import Tokenizer
from tokfx.formats.gpt2 import read_gpt2_files
from tokfx.formats.tiktoken_ranks import write_tiktoken_ranks
from tokfx.pre_tokenizers.patterns import PATTERNS

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
CORPORA = ["en_10M", "zh_5M"]


def side_by_side(label: str, ours, peer, corpora: dict[str, str], runs: int):
    """Rows (label, corpus, MB, tokfx MB/s, peer MB/s, ratio) for two `text -> ids` callables."""
    for corpus, text in corpora.items():
        if ours(text) != list(peer(text)):
            sys.exit(f"{label} {corpus}: tokfx and the peer give different ids")
        megabytes = len(text.encode("utf-8")) / 2**20
        ours_s, peer_s = median_seconds(lambda: ours(text), runs), median_seconds(lambda: peer(text), runs)
        yield label, corpus, megabytes, megabytes / ours_s, megabytes / peer_s, peer_s / ours_s


# Patterns outside tokfx's named set (a user regex: tokfx.pre_tokenizers.user_pattern): Qwen's
# and o200k's with one class respelled (`\p{N}` as `[\p{N}]`, the same set) so that they are not
# read back as their names, and Llama 3's with numbers of one or two digits; then shapes beyond
# GPT's: word boundaries, lazy runs, the start of the text with `\B`.
USER_PATTERNS = {
    "qwen2": PATTERNS["qwen2"].replace(r"|\p{N}|", r"|[\p{N}]|"),
    "o200k": PATTERNS["o200k"].replace(r"\p{N}{1,3}", r"[\p{N}]{1,3}"),
    "llama3 digits 1-2": PATTERNS["llama3"].replace(r"\p{N}{1,3}", r"\p{N}{1,2}"),
    "word boundaries": r"""\b\p{L}+\b|'[a-z]+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+(?!\S)|\s+|[\s\S]""",
    "lazy": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+?(?!\p{L})| ?\p{N}+?| ?[^\s\p{L}\p{N}]+?|\s+?(?!\s)|\s+""",
    "start and \\B": r"""^\s+|\B'\p{L}+|\p{Lu}?\p{Ll}+|\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    # Groups of sequences, repeated: letters with their combining marks, numbers with thousands
    # separators, runs of blank lines; an English word with its apostrophe suffix; DeepSeek's
    # pattern (a repeated group of a class and a lookahead) respelled so it is not its name.
    "groups": r"""'(?:[sdmt]|ll|ve|re)| ?(?:\p{L}\p{M}*)+| ?\p{N}{1,3}(?:,\p{N}{3})*| ?[^\s\p{L}\p{N}]+|(?:[^\S\n]*\n)+|\s+(?!\S)|\s+""",
    "word and suffix": r"""[A-Za-z]+(?:'[a-z]+)?| ?\p{L}+| ?\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "deepseek": PATTERNS["deepseek"].replace("[A-Za-z]+", "[a-zA-Z]+"),
    # Lookbehinds: of classes (native since d7d950f), of runs and groups (a sub-program); a
    # lookahead of runs (numbers cut in threes from the right, spaces before a line end); atomic
    # and named groups; flags for the whole pattern. tiktoken's engine (fancy-regex) takes only
    # lookbehinds of one width.
    "lookbehind": r"""'(?:[sdmt]|ll|ve|re)|(?<=\p{N})\p{L}+| ?\p{L}+| ?\p{N}{1,3}|(?<![\s\p{L}\p{N}])[^\s\p{L}\p{N}]+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "lookbehind of runs": r"""'(?:[sdmt]|ll|ve|re)|(?<=\p{N}{2})\p{L}+|(?<=(?:\p{L}|\p{N})[.,])\p{N}+| ?\p{L}+| ?\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "lookahead of runs": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))| ?[^\s\p{L}\p{N}]+|\s+(?=\s*\n)|\s+(?!\S)|\s+""",
    "atomic and named": r"""'(?:[sdmt]|ll|ve|re)|(?P<word> ?\p{L}+)|(?> ?\p{N}{1,3})|(?> ?[^\s\p{L}\p{N}]+)|\s+(?!\S)|\s+""",
    "flags": r"""(?i)'(?:s|t|re|ve|m|ll|d)| ?\p{L}+| ?\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    # Kimi K2's (tokenization_kimi.py): classes intersected with a nested negated set (`&&`).
    "kimi k2": "|".join([
        r"[\p{Han}]+",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"]),
}


def gpt2_ranks_rows(patterns: dict[str, str], corpora: dict[str, str], runs: int):
    """A tiktoken rank file made of GPT-2's tokens (the fixtures), with each pattern: tokfx's
    Tokenizer.from_tiktoken against tiktoken.Encoding over the same ranks."""
    vocab, _ = read_gpt2_files(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    ranks = {token: i for i, token in vocab.items() if i != 50256}
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "gpt2.tiktoken"
        write_tiktoken_ranks(path, ranks)
        for label, pattern in patterns.items():
            ours = Tokenizer.from_tiktoken(path, pattern)
            peer = tiktoken.Encoding(f"gpt2-{label}", pat_str=PATTERNS.get(pattern, pattern), mergeable_ranks=ranks,
                                     special_tokens={})
            yield from side_by_side(f"gpt2 ranks, {label}", ours.encode_ordinary, peer.encode_ordinary,
                                    corpora, runs)


def tiktoken_ranks_section(corpora: dict[str, str], runs: int):
    """GPT-2's ranks with three named patterns."""
    yield from gpt2_ranks_rows({name: name for name in ("gpt2", "cl100k", "llama3")}, corpora, runs)


def user_patterns_section(corpora: dict[str, str], runs: int, labels=tuple(USER_PATTERNS)):
    """GPT-2's ranks with the user patterns (USER_PATTERNS, those of `labels`)."""
    for label, pattern in USER_PATTERNS.items():
        assert pattern not in PATTERNS.values(), f"{label} must not be a named pattern"
    yield from gpt2_ranks_rows({f"user {label}": USER_PATTERNS[label] for label in labels}, corpora, runs)


def documents(text: str, size: int = 4096) -> list[str]:
    """`text` cut into documents of about `size` characters at line ends."""
    docs, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        docs.append(text[start:end])
        start = end
    return docs


def per_document(label: str, ours, peer, corpora: dict[str, str], runs: int):
    """side_by_side over the corpora cut into documents, one call per document, each
    document's ids kept as its call returns them (flattening them into one list, as this did
    until 2026-11-27, cost both sides alike and more than tokfx's whole encode of zh_5M with a
    byte-fallback Unigram: it pulled every ratio towards 1)."""
    for corpus, text in corpora.items():
        docs = documents(text)  # the same text: the MB/s count the same bytes
        yield from side_by_side(label, lambda _: [ours(doc) for doc in docs],
                                lambda _: [peer(doc) for doc in docs], {corpus: text}, runs)


HUGGINGFACE_SHAPES = ("gpt-neox", "llama3", "qwen2", "deepseek", "starcoder", "falcon", "llama2", "mistral",
                      "bert-wordpiece", "t5-unigram")


def huggingface_section(corpora: dict[str, str], runs: int, shapes=HUGGINGFACE_SHAPES):
    """tokenizer.json shapes of the open models (tests/huggingface_files.py): Tokenizer.load
    against tokenizers.Tokenizer.from_file."""
    import tokenizers
    from huggingface_files import write_shape

    with tempfile.TemporaryDirectory() as directory:
        for shape in shapes:
            path = write_shape(shape, Path(directory))
            ours, peer = Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path))
            yield from per_document(f"tokenizer.json {shape}", ours.encode,
                                    lambda doc: peer.encode(doc, add_special_tokens=False).ids, corpora, runs)


def sentencepiece_section(corpora: dict[str, str], runs: int):
    """sentencepiece models (BPE and Unigram, with and without byte_fallback, 8,000 pieces) trained
    on en_10M's first 2 MB: Tokenizer.load against SentencePieceProcessor.encode."""
    import sentencepiece

    lines = load("en_10M")[:2_000_000].splitlines()
    with tempfile.TemporaryDirectory() as directory:
        for model_type in ("bpe", "unigram"):
            for fallback in (True, False):
                prefix = f"{directory}/{model_type}-{fallback}"
                sentencepiece.SentencePieceTrainer.train(
                    sentence_iterator=iter(lines), model_prefix=prefix, model_type=model_type, vocab_size=8000,
                    byte_fallback=fallback, character_coverage=0.9995, num_threads=2, minloglevel=2)
                ours = Tokenizer.load(f"{prefix}.model")
                peer = sentencepiece.SentencePieceProcessor(model_file=f"{prefix}.model")
                name = f"spm {model_type}{' bytes' if fallback else ' unk'}"
                yield from per_document(name, ours.encode, peer.encode, corpora, runs)


SECTIONS = {"tiktoken-ranks": tiktoken_ranks_section, "user-patterns": user_patterns_section,
            "huggingface": huggingface_section,
            "sentencepiece": sentencepiece_section}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", nargs="+", default=list(SECTIONS), choices=list(SECTIONS))
    parser.add_argument("--corpora", nargs="+", default=CORPORA)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shapes", nargs="+", default=list(HUGGINGFACE_SHAPES), choices=HUGGINGFACE_SHAPES,
                        help="the tokenizer.json shapes of the huggingface section")
    parser.add_argument("--user-patterns", nargs="+", default=list(USER_PATTERNS), choices=USER_PATTERNS,
                        help="the patterns of the user-patterns section")
    args = parser.parse_args()
    corpora = {name: load(name) for name in args.corpora}
    print(f"{'file':28} {'corpus':8} {'MB':>6} {'tokfx MB/s':>11} {'peer MB/s':>10} {'tokfx/peer':>11}")
    for section in args.sections:
        if section == "huggingface":
            rows = huggingface_section(corpora, args.runs, args.shapes)
        elif section == "user-patterns":
            rows = user_patterns_section(corpora, args.runs, args.user_patterns)
        else:
            rows = SECTIONS[section](corpora, args.runs)
        for label, corpus, megabytes, ours, peer, ratio in rows:
            print(f"{label:28} {corpus:8} {megabytes:6.1f} {ours:11.1f} {peer:10.1f} {ratio:11.2f}", flush=True)


if __name__ == "__main__":
    main()
