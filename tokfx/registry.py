"""Trainers by name: `tokfx.train(..., algorithm=NAME)` dispatches here.

A trainer is `fn(counts, *, vocab_size, special_tokens, pattern, alphabet, progress, **params)
-> Tokenizer` over `{pre-token bytes: count}`, training over the `tokfx.alphabet.Alphabet`'s
base symbols; each algorithm module registers its own. A trainer registered with
`takes_lines=True` also accepts `lines={line bytes: count}` (`tokfx.pretokenize.count_lines`)
and a `context` parameter; with `context="line"` (given or its default) `tokfx.train` passes the
lines of the running text, or those given with the counts (`tokfx.training.trains_on_lines`).
"""
from __future__ import annotations

from collections.abc import Callable

TRAINERS: dict[str, Callable] = {}
LINE_TRAINERS: set[str] = set()


def register_trainer(name: str, takes_lines: bool = False) -> Callable[[Callable], Callable]:
    def register(fn: Callable) -> Callable:
        if name in TRAINERS:
            raise ValueError(f"trainer {name!r} is registered twice")
        TRAINERS[name] = fn
        if takes_lines:
            LINE_TRAINERS.add(name)
        return fn
    return register


def get_trainer(name: str) -> Callable:
    try:
        return TRAINERS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; known: {', '.join(sorted(TRAINERS))}") from None
