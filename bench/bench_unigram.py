"""Unigram on en_5M (or --corpus), GPT-2 pre-tokenization, against Hugging Face tokenizers'
UnigramTrainer on the same pre-tokens (its ByteLevel pre-tokenizer splits with the same GPT-2
regex) and, roughly, sentencepiece's Unigram (its own whitespace handling, identity
normalisation, byte fallback; not byte-level, so only a rough peer):

- training time (tokfx from the pre-token counts, and end to end from the text; HF and
  sentencepiece from the text, their own counting included);
- tokens per byte on held-out text (wikitext2_test, not in en_5M) and on the training text;
- tokfx's likelihood segmentation of the held-out pre-tokens against HF's encode: how many
  pre-tokens get the same number of tokens.

Run after installing (the installed tokfx, with its built extensions, is used; sentencepiece is
in the bench extra):
    python bench/bench_unigram.py [--corpus en_5M] [--vocab-size 8000]
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from corpora import training_and_held_out  # noqa: E402

import tokfx  # noqa: E402
from tokfx.formats.gpt2 import unspell  # noqa: E402

EOT = "<|endoftext|>"


def timed(run):
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def hf_unigram(docs, vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=[EOT],
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                      max_piece_length=16, shrinking_factor=0.75, n_sub_iterations=2,
                                      show_progress=False)
    tok.train_from_iterator(docs, trainer)
    return tok


def spm_unigram(text, vocab_size, directory):
    import sentencepiece as spm

    path = Path(directory) / "train.txt"
    path.write_text(text, encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(path), model_prefix=str(Path(directory) / "spm"), model_type="unigram",
        vocab_size=vocab_size, character_coverage=1.0, byte_fallback=True,
        normalization_rule_name="identity", max_sentencepiece_length=16, num_threads=1,
        max_sentence_length=1 << 20, train_extremely_large_corpus=False, minloglevel=2,
        user_defined_symbols=[EOT])
    return spm.SentencePieceProcessor(model_file=str(Path(directory) / "spm.model"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="en_5M")
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--no-spm", action="store_true")
    args = parser.parse_args()
    text, docs, held = training_and_held_out(args.corpus, args.vocab_size)
    held_bytes, train_bytes = len(held.encode()), len(text.encode())

    count_s, counts = timed(lambda: tokfx.count_pretokens(docs, "gpt2", [EOT]))
    train_s, ours = timed(lambda: tokfx.train(counts, "unigram", vocab_size=args.vocab_size, pattern="gpt2"))
    bpe_s, bpe = timed(lambda: tokfx.train(counts, "bpe", vocab_size=args.vocab_size, pattern="gpt2"))
    hf_s, hf = timed(lambda: hf_unigram(docs, args.vocab_size))
    rows = [("tokfx unigram", count_s + train_s, f"(counting {count_s:.2f} s + training {train_s:.2f} s)",
             len(ours.encode(held)), len(ours.encode(text))),
            ("HF UnigramTrainer", hf_s, "", len(hf.encode(held).ids), len(hf.encode(text).ids)),
            ("tokfx bpe", count_s + bpe_s, "", len(bpe.encode(held)), len(bpe.encode(text)))]
    if not args.no_spm:
        with tempfile.TemporaryDirectory() as directory:
            spm_s, sp = timed(lambda: spm_unigram(text, args.vocab_size, directory))
            rows.append(("sentencepiece unigram", spm_s, "(not byte-level; identity normalisation)",
                         len(sp.encode(held)), len(sp.encode(text))))
    for name, seconds, note, held_tokens, train_tokens in rows:
        print(f"{name:22s} {seconds:7.1f} s  held-out {held_tokens / held_bytes:.4f} tokens/byte,"
              f" training text {train_tokens / train_bytes:.4f} {note}")

    # HF's own vocabulary and scores, segmented by our likelihood segmenter: the same ids?
    model = json.loads(hf.to_str())["model"]
    pieces = [None if piece == EOT else unspell(piece) for piece, _ in model["vocab"]]
    scores = [None if piece is None else score for piece, (_, score) in zip(pieces, model["vocab"])]
    special = {EOT: pieces.index(None)}
    pieces[special[EOT]] = EOT.encode()
    twin = tokfx.Tokenizer(pieces, [], special, "gpt2", "unigram", segmenter="likelihood",
                           segmenter_params={"max_width": 64}, scores=scores)
    held_docs = held.split("\n")
    agree = sum(twin.encode(doc) == hf.encode(doc).ids for doc in held_docs)
    print(f"HF's vocabulary and scores under tokfx's likelihood segmenter: {agree:,} of"
          f" {len(held_docs):,} held-out lines encode to HF's ids")
    hf_tokens = {unspell(t) for t in hf.get_vocab() if t != EOT}
    our_tokens = {bytes(t) for i, t in enumerate(ours.tokens) if i not in ours.special_tokens.values()}
    print(f"vocabulary overlap with HF: {len(our_tokens & hf_tokens):,} tokens"
          f" (Jaccard {len(our_tokens & hf_tokens) / len(our_tokens | hf_tokens):.3f})")


if __name__ == "__main__":
    main()
