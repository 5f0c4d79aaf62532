"""WordPiece on en_5M (or --corpus), GPT-2 pre-tokenization: tokfx's (the PathPiece paper's PMI
score, no prefix, greedy) against Hugging Face tokenizers' WordPieceTrainer (BPE's count ranking,
`##` continuing-subword prefix) on the same pre-tokens (its ByteLevel pre-tokenizer splits with
the same GPT-2 regex), with tokfx's BPE beside them:

- training time (tokfx from the pre-token counts, and end to end from the text; HF from the
  text, its own counting included);
- tokens per byte on held-out text (wikitext2_test, not in en_5M) and on the training text,
  with HF's [UNK] count (its WordPiece turns a word it cannot spell into one [UNK]).

Run after installing (the installed tokfx, with its built extensions, is used):
    python bench/bench_wordpiece.py [--corpus en_5M] [--vocab-size 8000]
"""
import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from corpora import training_and_held_out  # noqa: E402

import tokfx  # noqa: E402

EOT = "<|endoftext|>"
UNK = "[UNK]"


def timed(run):
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def hf_wordpiece(docs, vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    # max_input_chars_per_word raised from 100, so long words are spelled, not [UNK].
    tok = Tokenizer(models.WordPiece(unk_token=UNK, max_input_chars_per_word=1 << 30))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=[EOT, UNK],
                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                        show_progress=False)
    tok.train_from_iterator(docs, trainer)
    return tok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="en_5M")
    parser.add_argument("--vocab-size", type=int, default=8000)
    args = parser.parse_args()
    text, docs, held = training_and_held_out(args.corpus, args.vocab_size)
    held_bytes, train_bytes = len(held.encode()), len(text.encode())

    count_s, counts = timed(lambda: tokfx.count_pretokens(docs, "gpt2", [EOT]))
    train_s, ours = timed(lambda: tokfx.train(counts, "wordpiece", vocab_size=args.vocab_size, pattern="gpt2"))
    bpe_s, bpe = timed(lambda: tokfx.train(counts, "bpe", vocab_size=args.vocab_size, pattern="gpt2"))
    hf_s, hf = timed(lambda: hf_wordpiece(docs, args.vocab_size))
    unk = hf.token_to_id(UNK)
    hf_held, hf_train = hf.encode(held).ids, hf.encode(text).ids
    rows = [("tokfx wordpiece", count_s + train_s, train_s, len(ours.encode(held)), len(ours.encode(text)), ""),
            ("HF WordPieceTrainer", hf_s, None, len(hf_held), len(hf_train),
             f"[UNK] {hf_held.count(unk):,} held-out, {hf_train.count(unk):,} training"),
            ("tokfx bpe", count_s + bpe_s, bpe_s, len(bpe.encode(held)), len(bpe.encode(text)), "")]
    base = rows[1]
    for name, seconds, training, held_tokens, train_tokens, note in rows:
        split = f" (training alone {training:.2f} s)" if training is not None else ""
        print(f"{name:20s} {seconds:6.2f} s{split:28s} held-out {held_tokens / held_bytes:.4f} tokens/byte"
              f" ({held_tokens / base[3]:.3f} x HF), training text {train_tokens / train_bytes:.4f}"
              f" ({train_tokens / base[4]:.3f} x HF) {note}")
    print(f"time: tokfx wordpiece end to end / HF = {rows[0][1] / hf_s:.2f}; training alone / HF ="
          f" {train_s / hf_s:.3f}; tokfx wordpiece training / tokfx bpe training = {train_s / bpe_s:.2f}")
    our_tokens = {bytes(t) for i, t in enumerate(ours.tokens) if i not in ours.special_tokens.values()}
    bpe_tokens = {bytes(t) for i, t in enumerate(bpe.tokens) if i not in bpe.special_tokens.values()}
    print(f"vocabulary overlap tokfx wordpiece / tokfx bpe: Jaccard"
          f" {len(our_tokens & bpe_tokens) / len(our_tokens | bpe_tokens):.3f}")
    print(f"tokfx wordpiece: first merges {[bytes(ours.tokens[256 + i]) for i in range(8)]}")
    print(f"tokfx wordpiece tokenizer.json export: {ours.save(Path('/tmp') / 'bench-wordpiece') or 'written'}")


if __name__ == "__main__":
    main()
