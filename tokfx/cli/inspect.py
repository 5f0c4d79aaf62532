"""`tokfx inspect`: a summary of a tokenizer directory."""
from __future__ import annotations

import json

from tokfx.tokenizer import Tokenizer

NAME = "inspect"
HELP = "summarise a tokenizer directory"


def run(args) -> None:
    tok = Tokenizer.load(args.tokenizer)
    alphabet = tok.alphabet
    lengths = [len(t) for t in tok.tokens]
    longest = sorted(range(tok.vocab_size), key=lambda i: (-lengths[i], i))[:5]
    merges = tok.merges
    unit = "bytes" if alphabet.name == "bytes" else "base symbols"
    # Learned tokens are merges when each has one: not in PathPiece (no merges), nor in
    # Scaffold-BPE (some normal tokens are merges of a scaffold part).
    learned = tok.vocab_size - alphabet.size - len(tok.special_tokens) - len(tok.control_tokens)
    learned = f"{learned:,} {'merges' if merges and len(merges) == learned else 'learned tokens'}"
    groups = f" groups {','.join(f'{p:02x}' for p in alphabet.groups)}" if alphabet.groups else ""
    if alphabet.characters:
        groups += f", {len(alphabet.characters):,} characters"
    lines = [
        f"tokenizer:      {args.tokenizer}",
        f"algorithm:      {tok.algorithm} {json.dumps(tok.params)}",
        f"alphabet:       {alphabet.name}{groups} ({alphabet.size} base symbols)",
        f"vocab size:     {tok.vocab_size:,} ({alphabet.size} {unit} + {learned}"
        f" + {len(tok.special_tokens)} special"
        + (f" + {len(tok.control_tokens)} control)" if tok.control_tokens else ")"),
        *([f"normalizer:     sentencepiece (rules: {tok.normalizer.name})"] if tok.normalizer else []),
        f"pattern:        {tok.pattern}",
        f"segmenter:      {tok.segmenter} {json.dumps(tok.segmenter_params)}",
        f"special tokens: {', '.join(f'{s}={i}' for s, i in tok.special_tokens.items()) or '-'}",
        f"mean token length: {sum(lengths) / len(lengths):.2f} {unit}",
        "first merges:   " + "  ".join(f"{alphabet.show(a)}+{alphabet.show(b)}" for a, b in merges[:5]),
        "last merges:    " + "  ".join(f"{alphabet.show(a)}+{alphabet.show(b)}" for a, b in merges[-5:]),
        "longest tokens: " + "  ".join(f"{i}:{tok.show_token(i)}" for i in longest),
    ]
    if tok.scaffold is not None:
        lines.append(f"scaffold:       {len(tok.scaffold.scaffold):,} scaffold tokens of"
                     f" {tok.scaffold.expanded_size:,} expanded (merged, then demolished when encoding)")
    print("\n".join(line for line in lines if merges or "merges:" not in line))
