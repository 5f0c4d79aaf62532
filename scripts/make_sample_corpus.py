"""Rebuild tokfx/data/sample/ (the corpus `tokfx train` uses with no input) from ../shared/corpora.

Public-domain or CC0 text only: Botchan (Project Gutenberg), 红楼梦, 吾輩は猫である (Aozora
Bunko), NSMC movie reviews (CC0). Deterministic: the same sources give the same bytes.
"""
import json
import sys
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
OUT = ROOT / "tokfx" / "data" / "sample"
SHARDS = 4


def text_of(relative: str) -> str:
    text = (CORPORA / relative).read_bytes().decode("utf-8")
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def take(paragraphs, budget: int) -> list[str]:
    out, size = [], 0
    for p in paragraphs:
        p = p.strip()
        if not p:
            continue
        out.append(p)
        size += len(p.encode("utf-8"))
        if size >= budget:
            break
    return out


def documents():
    botchan = text_of("sentencepiece/botchan.txt")
    botchan = botchan[botchan.index("CHAPTER I"):]
    # Botchan has no blank lines between paragraphs: 25 lines make one document.
    lines = botchan.split("\n")
    yield "botchan", take(("\n".join(lines[i:i + 25]) for i in range(0, len(lines), 25)), 240_000)
    yield "hongloumeng", take(text_of("chinese/hongloumeng.txt").split("\n"), 45_000)
    yield "wagahaiwa", take(text_of("sentencepiece/wagahaiwa_nekodearu.txt").split("\n"), 45_000)
    reviews = take(text_of("korean/nsmc_reviews_4M.txt").split("\n"), 30_000)
    yield "nsmc", ["\n".join(reviews[i:i + 20]) for i in range(0, len(reviews), 20)]


def main() -> None:
    shards = [[] for _ in range(SHARDS)]
    n = 0
    for source, docs in documents():
        for i, text in enumerate(docs):
            record = {"id": f"{source}-{i:05d}", "source": source, "text": text}
            shards[n % SHARDS].append(json.dumps(record, ensure_ascii=False))
            n += 1
    OUT.mkdir(parents=True, exist_ok=True)
    for k, lines in enumerate(shards):
        data = ("\n".join(lines) + "\n").encode("utf-8")
        path = OUT / f"sample-{k:05d}-of-{SHARDS:05d}.jsonl.zst"
        path.write_bytes(zstandard.ZstdCompressor(level=19).compress(data))
        print(path.relative_to(ROOT), len(lines), "documents", len(data), "bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
