"""Pure-Python twin of tokfx._bpe_encode: BPE encoding of one pre-token, and Scaffold-BPE's
(BPEEncoder with a demolition table).

Start from the byte ids; while some adjacent pair has a merge, take the lowest-rank one and
replace its occurrences left to right without overlap (`a a a` -> `aa a`); with rank_by_id a
merge ranks by its merged id and only the leftmost occurrence is replaced before the pairs are
ranked again (tiktoken's rule), and with whole_tokens a piece that is a token is not merged at
all. Scaffold-BPE then splits each scaffold token into its merge's parts, recursively, until only normal tokens are
left.
"""
from tokfx.reference.alphabet import cjk_symbols


def merge_ranks(merges: list[tuple[int, int, int]], rank_by_id: bool = False) -> dict[tuple[int, int], tuple[int, int]]:
    """(left, right) -> (rank, merged id); a pair listed twice keeps its first rank. The rank is
    the merge's place in the list, or with rank_by_id its merged id."""
    ranks = {}
    for rank, (left, right, merged) in enumerate(merges):
        ranks.setdefault((left, right), (merged if rank_by_id else rank, merged))
    return ranks


def apply_merges(ids: list[int], ranks: dict[tuple[int, int], tuple[int, int]],
                 one_at_a_time: bool = False) -> list[int]:
    while len(ids) > 1:
        candidates = [ranks[pair] for pair in zip(ids, ids[1:]) if pair in ranks]
        if not candidates:
            break
        best_rank = min(rank for rank, _ in candidates)
        rewritten, i, merged_once = [], 0, False
        while i < len(ids):
            pair = ranks.get((ids[i], ids[i + 1])) if i + 1 < len(ids) else None
            if pair is not None and pair[0] == best_rank and not (one_at_a_time and merged_once):
                rewritten.append(pair[1])
                merged_once = True
                i += 2
            else:
                rewritten.append(ids[i])
                i += 1
        ids = rewritten
    return ids


def encode_piece(piece: bytes, merges: list[tuple[int, int, int]], symbol_ids,
                 cjk_groups: tuple[int, ...] | None = None, rank_by_id: bool = False,
                 whole_tokens: dict[tuple[int, ...], int] | None = None) -> list[int]:
    """symbol_ids: the id of each base symbol; with cjk_groups the piece is remapped first.
    whole_tokens: {base symbols: id} of the tokens a piece is emitted as whole."""
    symbols = tuple(piece if cjk_groups is None else cjk_symbols(piece, cjk_groups))
    if whole_tokens is not None and symbols in whole_tokens:
        return [whole_tokens[symbols]]
    return apply_merges([symbol_ids[s] for s in symbols], merge_ranks(merges, rank_by_id), rank_by_id)


def demolish(token: int, parts: dict[int, tuple[int, int]], scaffold: set[int]) -> list[int]:
    """The normal expanded ids a token stands for: itself, or its parts' demolitions."""
    if token not in scaffold:
        return [token]
    left, right = parts[token]
    return demolish(left, parts, scaffold) + demolish(right, parts, scaffold)


def encode_piece_with_demolition(piece: bytes, merges: list[tuple[int, int, int]], symbol_ids,
                                 scaffold: set[int], model_ids: dict[int, int],
                                 cjk_groups: tuple[int, ...] | None = None) -> list[int]:
    """merges: expanded (left, right, merged) triples by rank; model_ids: normal expanded id ->
    model id."""
    parts = {merged: (left, right) for left, right, merged in merges}
    expanded = encode_piece(piece, merges, symbol_ids, cjk_groups)
    return [model_ids[t] for token in expanded for t in demolish(token, parts, scaffold)]


def every_split_merges(tokens, merged_in_order, max_merges=None) -> list[tuple[int, int, int]]:
    """Every split of each token of merged_in_order into two tokens (None tokens are never
    parts; of two tokens with the same symbols the lower id): (left, right, merged), in order,
    leftmost split first."""
    ids = {}
    for token_id, token in enumerate(tokens):
        if token is not None:
            ids.setdefault(tuple(token), token_id)
    merges = []
    for merged in merged_in_order:
        token = tuple(tokens[merged])
        for k in range(1, len(token)):
            if token[:k] in ids and token[k:] in ids:
                merges.append((ids[token[:k]], ids[token[k:]], merged))
        if max_merges is not None and len(merges) > max_merges:
            raise ValueError(f"the tokens split into more than {max_merges:,} pairs of tokens (merges)")
    return merges
