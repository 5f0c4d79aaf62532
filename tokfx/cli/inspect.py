"""`tokfx inspect`: a summary of a tokenizer: what was loaded (the file, its format), the
model, how text reaches it (normalizer, pre-tokenizer), its special tokens and the BOS / EOS
its own tokenizer puts around a document."""
from __future__ import annotations

import json

from tokfx.tokenizer import Tokenizer

NAME = "inspect"
HELP = "summarise a tokenizer (directory or file: tokfx.json, tokenizer.json, sentencepiece .model, tekken.json, tiktoken's own rank files)"


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
        *([f"loaded from:    {tok.source['file']} ({tok.source['format']}, sha256 {tok.source['sha256']})"]
          if tok.source else []),
        f"algorithm:      {tok.algorithm} {json.dumps(tok.params)}",
        f"alphabet:       {alphabet.name}{groups} ({alphabet.size} base symbols)",
        f"vocab size:     {tok.vocab_size:,} ({alphabet.size} {unit} + {learned}"
        f" + {len(tok.special_tokens)} special"
        + (f" + {len(tok.control_tokens)} control)" if tok.control_tokens else ")"),
        *_text_stages(tok),
        f"segmenter:      {tok.segmenter} {json.dumps(tok.segmenter_params)}",
        *_reserved_tokens(tok),
        _framing(tok),
        f"mean token length: {sum(lengths) / len(lengths):.2f} {unit}",
        "first merges:   " + "  ".join(f"{alphabet.show(a)}+{alphabet.show(b)}" for a, b in merges[:5]),
        "last merges:    " + "  ".join(f"{alphabet.show(a)}+{alphabet.show(b)}" for a, b in merges[-5:]),
        "longest tokens: " + "  ".join(f"{i}:{tok.show_token(i)}" for i in longest),
    ]
    if tok.scaffold is not None:
        lines.append(f"scaffold:       {len(tok.scaffold.scaffold):,} scaffold tokens of"
                     f" {tok.scaffold.expanded_size:,} expanded (merged, then demolished when encoding)")
    print("\n".join(line for line in lines if merges or "merges:" not in line))


def _text_stages(tok: Tokenizer) -> list[str]:
    """The normalizer and pre-tokenizer: a Hugging Face tokenizer's own stages, else tokfx's
    sentencepiece normalizer (if any) and pattern."""
    if tok.pipeline is not None:
        normalizer = tok.pipeline.normalizer
        return [f"normalizer:     {normalizer.description if normalizer is not None else 'none'}",
                f"pre-tokenizer:  {tok.pipeline.pre_tokenizer.description}"]
    return [*([f"normalizer:     sentencepiece (rules: {tok.normalizer.name})"] if tok.normalizer else []),
            f"pattern:        {tok.pattern}"]


def _listed(tokens: dict[str, int]) -> str:
    return ", ".join(f"{s}={i}" for s, i in tokens.items()) or "-"


def _reserved_tokens(tok: Tokenizer) -> list[str]:
    """The special tokens; a Hugging Face tokenizer's added tokens that are not special (matched
    in text all the same) apart; control tokens (sentencepiece's <s>, </s>, <unk>) if any."""
    special = tok.special_tokens
    lines = []
    if tok.pipeline is not None:
        plain = {t.content for t in tok.pipeline.added.tokens if not t.special}
        if plain:
            lines.append(f"added tokens:   {_listed({s: i for s, i in special.items() if s in plain})} (not special)")
        special = {s: i for s, i in special.items() if s not in plain}
    lines.insert(0, f"special tokens: {_listed(special)}")
    if tok.control_tokens:
        lines.append(f"control tokens: {_listed(tok.control_tokens)}")
    return lines


def _framing(tok: Tokenizer) -> str:
    """The BOS and EOS the model's own tokenizer names, and whether it adds them to a document
    by default (what tokfx encode --output-dir then does unless told otherwise)."""
    framing = tok.framing
    parts = [f"{which} {name}={token_id} ({'added' if added else 'not added'} by default)"
             if name is not None else f"{which} none"
             for which, name, token_id, added in (("BOS", framing.bos, tok.bos_id, framing.add_bos),
                                                  ("EOS", framing.eos, tok.eos_id, framing.add_eos))]
    return f"framing:        {', '.join(parts)}"
