"""The bounds on what tokfx accepts from a tokenizer file, which users download and so is
untrusted input (tokfx.formats.untrusted reads files within them), and from a caller building a
tokenizer, so that every tokenizer that exists can be saved and loaded again.

Each bound keeps loading and the first encode within about a second and a few hundred MB while
staying far above any real tokenizer (o200k: 200,019 tokens, longest 128 bytes, a pattern of
~400 characters, a few special tokens of under 30 bytes). README.md ("Loading tokenizer files")
lists them.
"""

# tokfx.json, vocab.json, merges.txt: read whole, so their size bounds the parse's memory.
MAX_FILE_BYTES = 128 << 20
# JSON nesting (tokfx.json needs 4 levels, a Hugging Face tokenizer.json 5), checked before
# parsing, without recursion: a deeply nested array would otherwise overflow the parser's stack.
MAX_JSON_DEPTH = 32
# Tokens of a vocabulary (special tokens included), and merges (Scaffold-BPE's expanded ones too).
MAX_TOKENS = 1 << 21
# Base symbols of one token. Scaffold-BPE's scaffold tokens are not written out, only their
# merges, so their lengths (and the sum over every token, MAX_TOTAL_SYMBOLS) are computed from
# the merges before any is built: 60 merges of a token with itself would spell 2^60 symbols.
MAX_TOKEN_SYMBOLS = 1 << 16
MAX_TOTAL_SYMBOLS = 1 << 26
# The widest token the path segmenters use (their max_width): no token is wider.
MAX_WIDTH = MAX_TOKEN_SYMBOLS
# Special tokens are matched by one regex alternation compiled when the tokenizer is built,
# whose compile time grows with their total size (4,096 tokens of 32 bytes: ~1.2 s).
MAX_SPECIAL_TOKENS = 4096
MAX_SPECIAL_TOKEN_BYTES = 256
MAX_SPECIAL_TOKENS_TOTAL_BYTES = 1 << 16
# What an alphabet's unknown symbol decodes to (sentencepiece's unk_surface, " \u2047 " by default).
MAX_UNKNOWN_TEXT_CHARS = 256
# A user pattern (a regex that is not a named pattern): its length, and the product of its
# counted repeats ({m}, {m,n}), which the regex package expands when it compiles a repeated
# literal (`((a{1000}){1000}){1000}` exhausts memory in compile, where no timeout reaches).
MAX_PATTERN_CHARS = 4096
MAX_PATTERN_REPEATS = 100_000
# A user pattern runs with the regex package's timeout, per call on a text of n characters:
# PATTERN_TIMEOUT_SECONDS + n * PATTERN_TIMEOUT_SECONDS_PER_CHAR (real patterns split
# 5-50 MB/s, i.e. under 0.2 s per million characters).
PATTERN_TIMEOUT_SECONDS = 1.0
PATTERN_TIMEOUT_SECONDS_PER_CHAR = 1e-6
# sentencepiece's precompiled charsmap (its normalization rules, inside a .model file): the
# blob; the nodes walked in its trie (every path once: a shared subtree is walked once per path
# to it), the rules and a key's bytes; the bytes of the replacements once decoded. nmt_nfkc: 240
# KB, 262,841 nodes, 225,276 rules, keys of at most 12 bytes, 60 KB of replacements.
MAX_CHARSMAP_BYTES = 1 << 24
MAX_CHARSMAP_TRIE_NODES = 1 << 21
MAX_CHARSMAP_RULES = 1 << 20
MAX_CHARSMAP_KEY_BYTES = 1 << 10
MAX_CHARSMAP_DECODED_BYTES = 1 << 26
