"""The `huggingface` segmenter: a tokenizer.json's own model (WordPiece, WordLevel, Unigram),
which tokfx.formats.huggingface_models runs as `tokenizers` does, over the text of each
pre-token. The model comes with the tokenizer's Hugging Face text stages (its `pipeline`,
whose spec keeps the model's JSON, so tokfx.json rebuilds it); the tokens must be its pieces."""
from __future__ import annotations

from collections.abc import Sequence

from tokfx.alphabet import Alphabet


def tokenizer_json_model(tokens: Sequence, alphabet: Alphabet, pipeline=None, **_):
    model = getattr(pipeline, "model", None)
    if model is None:
        raise ValueError("segmenter 'huggingface' runs a tokenizer.json's own model (WordPiece, WordLevel,"
                         " Unigram): only a tokenizer loaded from one has it")
    if len(tokens) < len(model.pieces) or any(alphabet.token_of_text(piece) != tuple(token)
                                              for piece, token in zip(model.pieces, tokens)):
        raise ValueError("tokens: they are not the pieces of the tokenizer.json's model")
    return model
