"""Trainers by name: `tokfx.train(..., algorithm=NAME)`, `tokfx train --algorithm NAME`, and
`tokfx.json`'s "algorithm" name one of these (the interface: tokfx.models.base.Trainer)."""
from __future__ import annotations

from tokfx.formats.tokfx_json import register_algorithm
from tokfx.models.base import Trainer
from tokfx.models.bpe.trainer import BpeTrainer
from tokfx.models.pathpiece import PathPieceTrainer
from tokfx.models.sage.trainer import SageTrainer
from tokfx.models.scaffold_bpe.trainer import ScaffoldBpeTrainer
from tokfx.models.unigram import UnigramTrainer
from tokfx.models.wordpiece import WordPieceTrainer

TRAINERS: dict[str, type[Trainer]] = {
    trainer.name: trainer for trainer in (BpeTrainer, ScaffoldBpeTrainer, PathPieceTrainer, SageTrainer,
                                         UnigramTrainer, WordPieceTrainer)
}

for _trainer in TRAINERS.values():
    register_algorithm(_trainer.name, _trainer.param_names())


def get_trainer(name: str) -> type[Trainer]:
    try:
        return TRAINERS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; known: {', '.join(sorted(TRAINERS))}") from None
