"""Trainers by name: `tokfx.train(..., algorithm=NAME)` dispatches here.

A trainer is `fn(counts, *, vocab_size, special_tokens, pattern, alphabet, progress, **params)
-> Tokenizer` over `{pre-token bytes: count}`, training over the `tokfx.alphabet.Alphabet`'s
base symbols; each algorithm module registers its own.
"""
from __future__ import annotations

from collections.abc import Callable

TRAINERS: dict[str, Callable] = {}


def register_trainer(name: str) -> Callable[[Callable], Callable]:
    def register(fn: Callable) -> Callable:
        if name in TRAINERS:
            raise ValueError(f"trainer {name!r} is registered twice")
        TRAINERS[name] = fn
        return fn
    return register


def get_trainer(name: str) -> Callable:
    try:
        return TRAINERS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; known: {', '.join(sorted(TRAINERS))}") from None
