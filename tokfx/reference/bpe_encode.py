"""Pure-Python twin of ext/_bpe_encode.pyx: BPE encoding of one pre-token.

Start from the byte ids; while some adjacent pair has a merge, take the lowest-rank one and
replace its occurrences left to right without overlap (`a a a` -> `aa a`).
"""
from tokfx.reference.alphabet import cjk_symbols


def merge_ranks(merges: list[tuple[int, int, int]]) -> dict[tuple[int, int], tuple[int, int]]:
    """(left, right) -> (rank, merged id); a pair listed twice keeps its first (lowest) rank."""
    ranks = {}
    for rank, (left, right, merged) in enumerate(merges):
        ranks.setdefault((left, right), (rank, merged))
    return ranks


def apply_merges(ids: list[int], ranks: dict[tuple[int, int], tuple[int, int]]) -> list[int]:
    while len(ids) > 1:
        candidates = [ranks[pair] for pair in zip(ids, ids[1:]) if pair in ranks]
        if not candidates:
            break
        best_rank, merged = min(candidates)
        rewritten, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and ranks.get((ids[i], ids[i + 1]), (None,))[0] == best_rank:
                rewritten.append(merged)
                i += 2
            else:
                rewritten.append(ids[i])
                i += 1
        ids = rewritten
    return ids


def encode_piece(piece: bytes, merges: list[tuple[int, int, int]], symbol_ids,
                 cjk_groups: tuple[int, ...] | None = None) -> list[int]:
    """symbol_ids: the id of each base symbol; with cjk_groups the piece is remapped first."""
    symbols = piece if cjk_groups is None else cjk_symbols(piece, cjk_groups)
    return apply_merges([symbol_ids[s] for s in symbols], merge_ranks(merges))
