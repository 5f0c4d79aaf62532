"""Whether a document is held out for evaluation: a hash of its id, so the same on every
machine, run and number of workers."""
from __future__ import annotations

import mmh3

# Fixed: another seed would hold out other documents than earlier versions did.
_HOLD_OUT_SEED = 1


def is_held_out(doc_id: str, fraction: float) -> bool:
    """Whether a document is held out from training for evaluation: about `fraction` of all
    documents, chosen by a hash of the id (the same on every machine and run)."""
    return mmh3.hash(doc_id.encode("utf-8"), _HOLD_OUT_SEED, signed=False) < fraction * 2 ** 32
