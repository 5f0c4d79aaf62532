"""The working corpora of ../shared/corpora/README.md, rebuilt in memory and checked by sha256."""
import hashlib
import os
from pathlib import Path

CORPORA = Path(os.environ.get("TOKFX_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "corpora"

SEPARATOR = "\n<|endoftext|>\n"

_SOURCES = {
    "en_10M": ["english/pg2600_war_and_peace.txt", "english/pg135_les_miserables.txt",
               "english/pg2701_moby_dick.txt", "english/wikitext2_valid.txt",
               "english/wikitext2_test.txt"],
    "zh_5M": ["chinese/hongloumeng.txt", "chinese/shuihu.txt"],
    "ja_1M": ["sentencepiece/wagahaiwa_nekodearu.txt"],
    "ko_4M": ["korean/nsmc_reviews_4M.txt"],
    "corpus_en": ["cs336/corpus.en"],
}

SHA256 = {
    "en_10M": "3bc62277c3c987b08ed5e1eb2ca6cd35f854f3b7121cb6ee8a1dc9a501366354",
    "en_5M": "6eca588ee93f1f8b9a309c9c1f4b4942fd0b139d8ea0992a1da76cb693b58ab5",
    "zh_5M": "ab5009845e2d220d8a405592d9d2558e600b86804b68cf4cabf09bdd0d454ff9",
    "ja_1M": "2a603ef355bb648df62f8b5deafa478dffa9ea1f50e3bfd84528b83922378903",
    "ko_4M": "ffe608fb7685d916adedba6094b04a48c27ac6626fb5f1fdfcb4d755f70893b4",
    "corpus_en": "617f603a49eeb8a20de9d922d11a5d70e1d362327b9e91718bea2cdcdf9816ff",
}


def _normalised(relative: str) -> str:
    text = (CORPORA / relative).read_bytes().decode("utf-8")
    return text.removeprefix("\ufeff").replace("\r\n", "\n").rstrip("\n")


def load(name: str) -> str:
    """The named working corpus as text, exactly as the corpora README defines it."""
    if name == "en_5M":
        text = load("en_10M")
        raw = text.encode("utf-8")[: 5 * 1024 * 1024]
        text = raw[: raw.rindex(b"\n") + 1].decode("utf-8")
    elif name in ("ko_4M", "corpus_en"):
        # Single-file corpora are used byte for byte.
        text = (CORPORA / _SOURCES[name][0]).read_bytes().decode("utf-8")
    else:
        text = SEPARATOR.join(_normalised(s) for s in _SOURCES[name]) + "\n"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest != SHA256[name]:
        raise RuntimeError(f"{name}: sha256 {digest} differs from the corpora README's {SHA256[name]}")
    return text


# Held-out text for the trainers' benchmarks: wikitext-2's test split (not in en_5M).
HELD_OUT = "english/wikitext2_test.txt"


def training_and_held_out(name: str, vocab_size: int) -> tuple[str, list[str], str]:
    """The named corpus as text and as documents (split at SEPARATOR), and the held-out text;
    prints a line with their sizes."""
    text = load(name)
    held = (CORPORA / HELD_OUT).read_text(encoding="utf-8")
    print(f"corpus {name}: {len(text.encode()):,} bytes; held-out wikitext2_test {len(held.encode()):,} bytes;"
          f" vocab_size {vocab_size:,}")
    return text, text.split(SEPARATOR), held


if __name__ == "__main__":
    for name in SHA256:
        print(name, len(load(name).encode("utf-8")), "bytes, sha256 ok")
