"""Pure-Python twin of tokfx._ngrams: the most frequent n-grams of a corpus's pieces."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def top_ngrams(pieces: Sequence[Sequence[int]], counts: Sequence[int], how_many: int,
               max_width: int) -> list[tuple[int, ...]]:
    """The `how_many` most frequent n-grams of 2..max_width symbols inside the pieces (each
    counted its piece's count times); most frequent first, ties by their symbols."""
    return [gram for gram, _ in top_ngram_counts(pieces, counts, how_many, max_width)]


def top_ngram_counts(pieces: Sequence[Sequence[int]], counts: Sequence[int], how_many: int,
                     max_width: int) -> list[tuple[tuple[int, ...], int]]:
    """As top_ngrams, each n-gram with its count."""
    grams: Counter = Counter()
    for piece, count in zip(pieces, counts):
        piece = tuple(piece)
        for n in range(2, min(max_width, len(piece)) + 1):
            for start in range(len(piece) - n + 1):
                grams[piece[start:start + n]] += count
    return [(g, grams[g]) for g in sorted(grams, key=lambda g: (-grams[g], g))[:how_many]]


# seed_substrings' classes, as tokfx._ngrams: INVALID, SPACE, INHERITED, and scripts >= 0.
INVALID, SPACE, INHERITED, ANY = -1, -2, -3, -4
END = -1  # the end of a piece inside its line, a follower of its own
LINE_END = -3  # the end of a line, another


def valid_substring(gram: Sequence[int], classes: Sequence[int]) -> bool:
    """sentencepiece's IsValidSentencePiece over symbol classes: no INVALID symbol, a SPACE
    only first, one script (an INHERITED symbol takes the one before it)."""
    script = ANY
    for position, symbol in enumerate(gram):
        kind = classes[symbol]
        if kind == INVALID or kind == SPACE and position > 0:
            return False
        if kind == SPACE:
            continue
        now = script if kind == INHERITED else kind
        if now != ANY and script != ANY and now != script:
            return False
        script = now
    return True


def seed_substrings(pieces: Sequence[Sequence[int]], counts: Sequence[int], how_many: int, max_width: int,
                    classes: Sequence[int], line_ends: Sequence[int] | None = None) -> list[tuple[tuple[int, ...], int]]:
    """The valid substrings of 2..max_width symbols followed by two different symbols (a piece's
    end counting as one: END, or LINE_END for the line_ends[k] of piece k's occurrences that
    end a line, or both), the `how_many` of the highest count x length, ties by symbols."""
    grams: Counter = Counter()
    followers: dict[tuple[int, ...], set[int]] = {}
    for k, (piece, count) in enumerate(zip(pieces, counts)):
        piece = tuple(piece)
        at_line_end = 0 if line_ends is None else line_ends[k]
        ends = {END} if at_line_end == 0 else {LINE_END} if at_line_end >= count else {END, LINE_END}
        for start in range(len(piece)):
            for end in range(start + 1, min(start + max_width, len(piece)) + 1):
                gram = piece[start:end]
                if not valid_substring(gram, classes):
                    break
                grams[gram] += count
                followers.setdefault(gram, set()).update({piece[end]} if end < len(piece) else ends)
    ranked = [(g, c) for g, c in grams.items() if len(g) >= 2 and len(followers[g]) >= 2]
    return sorted(ranked, key=lambda gc: (-gc[1] * len(gc[0]), gc[0]))[:how_many]
