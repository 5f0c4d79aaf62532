"""The plain script of issue 13: what a user writes without a pipeline. multiprocessing.Pool(N)
over the .jsonl.zst files; each worker streams its file, encodes each document's `text` and
appends the ids to OUT/<file>.bin (uint16), then writes the documents' token counts to
OUT/<file>.lengths.npy (int64).

    python bench/plain_encode.py TOKENIZER_DIR --output-dir OUT [--workers 2] [--tiktoken] FILES...

With --tiktoken, tiktoken's `encode_ordinary` with an Encoding built from the directory's GPT-2
vocab.json (`tiktoken.get_encoding("gpt2")` would download the same ranks; here is offline).
"""
import argparse
import io
import json
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import zstandard

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def load_encoder(tokenizer_dir: str, use_tiktoken: bool):
    global encode
    if use_tiktoken:
        import tiktoken
        from tokfx.pre_tokenizers.byte_level import unspell  # GPT-2's byte-to-character spelling, undone
        vocab = json.loads((Path(tokenizer_dir) / "vocab.json").read_text(encoding="utf-8"))
        ranks = {unspell(token): i for token, i in vocab.items() if token != "<|endoftext|>"}
        encode = tiktoken.Encoding("gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                                   special_tokens={"<|endoftext|>": vocab["<|endoftext|>"]}).encode_ordinary
    else:
        from tokfx import Tokenizer
        encode = Tokenizer.load(tokenizer_dir).encode


def encode_file(job: tuple[str, str]) -> tuple[int, int]:
    path, out_dir = job
    name = Path(out_dir) / Path(path).name.removesuffix(".jsonl.zst")
    lengths = []
    with open(path, "rb") as f, open(f"{name}.bin", "wb") as out:
        for line in io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(f), encoding="utf-8"):
            ids = np.array(encode(json.loads(line)["text"]), dtype=np.uint16)
            out.write(ids.tobytes())
            lengths.append(len(ids))
    np.save(f"{name}.lengths.npy", np.array(lengths, dtype=np.int64))
    return len(lengths), sum(lengths)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer_dir")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tiktoken", action="store_true")
    args = parser.parse_args()
    Path(args.output_dir).mkdir(parents=True, exist_ok=True)
    with Pool(args.workers, initializer=load_encoder, initargs=(args.tokenizer_dir, args.tiktoken)) as pool:
        counts = pool.map(encode_file, [(f, args.output_dir) for f in args.files], chunksize=1)
    print(json.dumps({"documents": sum(d for d, _ in counts), "tokens": sum(t for _, t in counts)}))


if __name__ == "__main__":
    main()
