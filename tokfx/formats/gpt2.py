"""GPT-2 style vocab.json ({token spelled with GPT-2's byte alphabet: id}) and merges.txt (one
merge per line, the two parts spelled the same way and separated by one space)."""
import json
from pathlib import Path

from tokfx.formats.untrusted import Fields, TokenizerFileError, read_file_bytes, read_json_file, shown
from tokfx.limits import MAX_TOKEN_SYMBOLS, MAX_TOKENS
from tokfx.pre_tokenizers.byte_level import spell, spelled_merges, unspell

MERGES_HEADER = "#version: 0.2"


def read_gpt2_files(vocab_json, merges_txt) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """(vocab: {id: token bytes}, merges: [(left bytes, right bytes)] in rank order). The files
    are untrusted input (tokfx.formats.untrusted): anything malformed or beyond tokfx.limits is
    one TokenizerFileError naming the file (and line of merges.txt)."""
    vocab_path, merges_path = Path(vocab_json), Path(merges_txt)
    f = Fields(str(vocab_path))
    spelled_vocab = f.object(read_json_file(vocab_path), "", (), None)  # keys: the spellings
    if len(spelled_vocab) > MAX_TOKENS:
        f.fail(None, f"{len(spelled_vocab):,} tokens: at most {MAX_TOKENS:,}")
    vocab = {}
    for spelling, token_id in spelled_vocab.items():
        field = f"token {shown(spelling)}"
        f.int(token_id, field, 0, MAX_TOKENS - 1)
        if len(spelling) > MAX_TOKEN_SYMBOLS:
            f.fail(field, f"{len(spelling):,} bytes long: at most {MAX_TOKEN_SYMBOLS:,}")
        if token_id in vocab:
            f.fail(field, f"id {token_id} belongs to two tokens, {shown(spell(vocab[token_id]))} and this one")
        try:
            vocab[token_id] = unspell(spelling)
        except KeyError as error:
            f.fail(field, f"has the character {error.args[0]!r}, which is not in GPT-2's byte alphabet")
    known = set(spelled_vocab)
    merges = []
    try:
        lines = read_file_bytes(merges_path).decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise TokenizerFileError(str(merges_path), None, f"not UTF-8: {exc}") from None
    for line_number, line in enumerate(lines, start=1):
        line = line.removesuffix("\r")
        if (line_number == 1 and line.startswith("#version")) or not line:
            continue  # GPT-2's header; a blank line (e.g. a trailing one) holds no merge
        where = f"{merges_path}:{line_number}"
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise TokenizerFileError(where, None, f"expected two tokens separated by one space, got {shown(line)}")
        unknown = [part for part in parts if part not in known]
        if unknown:
            raise TokenizerFileError(where, None, f"{' and '.join(map(shown, unknown))} not in {vocab_path}")
        if len(merges) == MAX_TOKENS:
            raise TokenizerFileError(where, None, f"more than {MAX_TOKENS:,} merges")
        merges.append((unspell(parts[0]), unspell(parts[1])))
    return vocab, merges


def write_gpt2_files(directory, vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]]) -> None:
    """vocab.json (tokens in id order) and merges.txt (with GPT-2's `#version: 0.2` first line,
    which the original GPT-2 loader drops unread)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    spellings = {token: spell(token) for token in vocab.values()}  # each token spelled once
    spelled_vocab = {spellings[vocab[token_id]]: token_id for token_id in sorted(vocab)}
    if len(spelled_vocab) != len(vocab):
        raise ValueError("two ids share the same token bytes; vocab.json cannot hold both")
    with open(directory / "vocab.json", "w", encoding="utf-8") as f:
        # One string: json.dump writes a piece at a time (18 against 11 ms for 32,000 tokens).
        f.write(json.dumps(spelled_vocab, ensure_ascii=False))
    with open(directory / "merges.txt", "w", encoding="utf-8", newline="\n") as f:
        f.write(MERGES_HEADER + "\n")
        f.writelines(f"{left} {right}\n" for left, right in spelled_merges(merges, spellings))
