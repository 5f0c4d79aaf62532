"""Whether a document is held out for evaluation: a hash of its id, so the same on every
machine, run and number of workers."""
from __future__ import annotations

import mmh3


def document_hash(doc_id: str, seed: int = 0) -> int:
    """mmh3 (32 bits, unsigned) of a document id: the same on every machine and run."""
    return mmh3.hash(doc_id.encode("utf-8"), seed, signed=False)


# Fixed: another seed would hold out other documents than earlier versions did.
_HOLD_OUT_SEED = 1


def is_held_out(doc_id: str, fraction: float) -> bool:
    """Whether a document is held out from training for evaluation: about `fraction` of all
    documents, chosen by a hash of the id (the same on every machine and run)."""
    return document_hash(doc_id, _HOLD_OUT_SEED) < fraction * 2 ** 32
