"""Time BPE encoding of en_10M (or the corpus named on the command line) with GPT-2's vocabulary: our regex split and our encode core
separately, against tiktoken's encode_ordinary and Hugging Face tokenizers (our export).

Run from the repository root after building: python bench/bench_encode_core.py [zh_5M]
The native pre-tokenizer (`tokfx._pretokenize.piece_ends`) is timed as a second way to split;
its ends must equal those of the regex pieces.
The whole text is encoded as ordinary text by everyone (its `<|endoftext|>` separators
included), so no special-token handling is timed. Each of our runs starts with a fresh encoder,
so its piece cache starts cold.
"""
import json
import statistics
import sys
import time
from array import array
from itertools import accumulate
from pathlib import Path

import regex
import tiktoken
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from corpora import load  # noqa: E402

from tokfx._bpe_encode import BPEEncoder  # noqa: E402
from tokfx._pretokenize import piece_ends  # noqa: E402
from tokfx.formats.gpt2 import read_gpt2_files  # noqa: E402
from tokfx.formats.hf_json import hf_tokenizer_json  # noqa: E402
from tokfx.segmenters.bpe import byte_ids, merges_as_ids  # noqa: E402
from tokfx.pre_tokenizers.patterns import GPT2  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
REPEATS = 3


def median_seconds(run):
    """(median seconds, result of the last run) over REPEATS runs."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(corpus: str):
    text = load(corpus)
    size_mb = len(text.encode("utf-8")) / 1e6
    vocab, merges = read_gpt2_files(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    triples, ids_of_bytes = merges_as_ids(vocab, merges), byte_ids(vocab)
    pattern = regex.compile(GPT2)

    split_s, pieces = median_seconds(lambda: pattern.findall(text))
    encoded_pieces = [piece.encode("utf-8") for piece in pieces]
    data = b"".join(encoded_pieces)
    ends = array("q", accumulate(map(len, encoded_pieces)))
    native_split_s, native_ends = median_seconds(lambda: piece_ends(text.encode("utf-8"), "gpt2"))

    encoders = iter([BPEEncoder(triples, ids_of_bytes) for _ in range(REPEATS)])
    encode_s, ours = median_seconds(lambda: next(encoders).encode_pieces(data, ends))

    tk = tiktoken.Encoding(name="gpt2_bench", pat_str=GPT2, special_tokens={},
                           mergeable_ranks={token: token_id for token_id, token in vocab.items()
                                            if token_id != 50256})
    tiktoken_s, tiktoken_ids = median_seconds(lambda: tk.encode_ordinary(text))

    hf = Tokenizer.from_str(json.dumps(hf_tokenizer_json(vocab, merges, {}, GPT2)))
    hf_s, hf_encoding = median_seconds(lambda: hf.encode(text))

    print(f"{corpus}: {size_mb:.2f} MB, {len(pieces):,} pieces, {len(ours):,} tokens; median of {REPEATS}")
    ours_s = split_s + encode_s
    native_s = native_split_s + encode_s
    for name, seconds in [("tokfx regex.findall split", split_s), ("tokfx encode_pieces", encode_s),
                          ("tokfx split + encode", ours_s),
                          ("tokfx native split (piece_ends)", native_split_s),
                          ("tokfx native split + encode", native_s),
                          ("tiktoken encode_ordinary", tiktoken_s),
                          ("tokenizers encode (our export)", hf_s)]:
        print(f"  {name:32s} {seconds:7.3f} s  {size_mb / seconds:7.2f} MB/s")
    print(f"  tiktoken / tokfx split+encode:   {tiktoken_s / ours_s:.2f}x time "
          f"(native split: {tiktoken_s / native_s:.2f}x)")
    print(f"  tokenizers / tokfx split+encode: {hf_s / ours_s:.2f}x time")
    print(f"  encode_pieces share of tokfx:    {encode_s / ours_s:.0%}")
    identical = ours == tiktoken_ids == hf_encoding.ids and native_ends == ends
    print(f"  ids identical (tokfx, tiktoken, tokenizers) and native ends = regex ends: {identical}")
    if not identical:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "en_10M")
