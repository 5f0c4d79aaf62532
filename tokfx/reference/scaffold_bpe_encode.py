"""Pure-Python twin of Scaffold-BPE encoding (BPEEncoder with a demolition table): apply every
expanded merge by rank, then split each scaffold token into its merge's parts, recursively,
until only normal tokens are left."""
from tokfx.reference.bpe_encode import encode_piece as bpe_encode_piece


def demolish(token: int, parts: dict[int, tuple[int, int]], scaffold: set[int]) -> list[int]:
    """The normal expanded ids a token stands for: itself, or its parts' demolitions."""
    if token not in scaffold:
        return [token]
    left, right = parts[token]
    return demolish(left, parts, scaffold) + demolish(right, parts, scaffold)


def encode_piece(piece: bytes, merges: list[tuple[int, int, int]], symbol_ids, scaffold: set[int],
                 model_ids: dict[int, int], cjk_groups: tuple[int, ...] | None = None) -> list[int]:
    """merges: expanded (left, right, merged) triples by rank; model_ids: normal expanded id ->
    model id."""
    parts = {merged: (left, right) for left, right, merged in merges}
    expanded = bpe_encode_piece(piece, merges, symbol_ids, cjk_groups)
    return [model_ids[t] for token in expanded for t in demolish(token, parts, scaffold)]
