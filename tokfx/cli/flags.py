"""Every flag of the `tokfx` command, declared once: name, type, default, choices and help.

The library commands (`tokfx train`, `encode`, `inspect`, `eval`) build their argparse parsers
from this table, and so do the Beam pipeline options (`tokfx run`, `count`, `encode
--output-dir`: beam_jobs.options), so a flag means the same everywhere. `--help` shows each
flag's default and choices; the algorithms and segmenters listed are the registries' own.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tokfx.alphabet import DEFAULT_CHARACTER_COVERAGE, NAMES as ALPHABETS, Alphabet, check_character_coverage
from tokfx.formats.readers.policy import DEFAULT_MAX_REJECTED, ON_ERROR, rejected_limit
from tokfx.formats.shards.formats import DEFAULT_FORMATS, FORMATS
from tokfx.models.base import CONTEXTS
from tokfx.models.pathpiece import TIE_BREAKS
from tokfx.models.registry import TRAINERS
from tokfx.models.top_down import INITIAL_VOCABS
from tokfx.models.unigram import RECIPES
from tokfx.models.training import check_vocab_size, training_settings
from tokfx.pre_tokenizers import PATTERNS, resolve_pattern
from tokfx.segmenters import SEGMENTERS
from tokfx.special_tokens import DEFAULT_SPECIAL, special_tokens_or_default


def sizes(text: str) -> list[int]:
    """'60000,50000,40000' -> [60000, 50000, 40000]."""
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sizes like 60000,50000,40000, got {text!r}") from None


def field_names(text: str) -> tuple[str, ...]:
    """'url,date' -> ('url', 'date'): names, each once, none empty."""
    names = tuple(name.strip() for name in text.split(","))
    if not all(names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"expected distinct names like url,date, got {text!r}")
    return names


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def byte_size(text: str) -> int:
    """'1G' -> 1073741824: bytes, with an optional binary unit K, M, G or T (KiB, MiB...)."""
    number, unit = text.rstrip("iBb").upper(), ""
    if number and number[-1] in _UNITS:
        number, unit = number[:-1], number[-1]
    try:
        value = int(float(number) * _UNITS[unit])
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size like 1G, 256M or 1000000, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive size, got {text!r}")
    return value


def max_rejected(text: str) -> str:
    """'10%' or '25', checked (tokfx.formats.readers.policy.rejected_limit)."""
    try:
        rejected_limit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def share_or_size(text: str) -> tuple[str, float | int]:
    """'10%' or '0.1' -> ("share", 0.1): a share of a corpus; '2G' or '1000000' -> ("bytes", n)."""
    spelled = text.strip()
    if spelled.endswith("%"):
        number, scale = spelled[:-1], 100
    elif "." in spelled and spelled.replace(".", "", 1).isdigit():
        number, scale = spelled, 1
    else:
        return "bytes", byte_size(text)
    try:
        share = float(number) / scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share like 10% or 0.1, got {text!r}") from None
    if not 0 < share <= 1:
        raise argparse.ArgumentTypeError(f"expected a share above 0 and at most 100 %, got {text!r}")
    return "share", share


@dataclass(frozen=True)
class Flag:
    names: tuple[str, ...]  # ("--vocab-size",), ("-q", "--quiet"), or a positional ("files",)
    help: str
    type: Callable | None = None
    default: Any = None
    choices: Sequence[str] | None = None
    action: str | None = None
    nargs: str | None = None
    required: bool = False
    metavar: str | None = None
    dest: str | None = None
    key: str | None = None  # its name in the table, where two commands give a name two meanings

    @property
    def name(self) -> str:
        return self.key or self.names[-1].lstrip("-").replace("-", "_")

    def add_to(self, parser) -> None:
        kwargs: dict[str, Any] = {"help": self.help_text()}
        for key in ("type", "choices", "action", "nargs", "metavar", "dest"):
            if getattr(self, key) is not None:
                kwargs[key] = getattr(self, key)
        if self.default is not None:
            kwargs["default"] = self.default
        if self.required:
            kwargs["required"] = True
        parser.add_argument(*self.names, **kwargs)

    def help_text(self) -> str:
        if self.default is None or self.default is False or self.action == "store_true":
            return self.help
        return f"{self.help} (default: {str(self.default).replace('%', '%%')})"  # argparse %-formats help


# What every flag that takes a tokenizer accepts (Tokenizer.load).
TOKENIZER_FILES = "tokenizer directory or file (tokfx.json, tokenizer.json, sentencepiece .model, tekken.json, tiktoken's own rank files)"

_FLAGS = [
    # What is read.
    Flag(("--input",), "file pattern of JSON-lines (.jsonl, .json, .ndjson; plain, .gz or .zst), .txt or .parquet files (repeatable;"
         " read with the corpus files named; none of either: the sample corpus shipped with tokfx, but"
         " not in tokfx encode)", action="append"),
    Flag(("files",), "JSON-lines (.jsonl, .json, .ndjson; plain, .gz or .zst), .txt or .parquet files (none: tokfx train,"
         " run and count read the sample corpus shipped with tokfx, and say so)", nargs="*"),
    Flag(("--text-field",), "JSON field or Parquet column holding the text", default="text"),
    Flag(("--id-field",), "JSON field or Parquet column holding a document id (default: file:line, file:row in Parquet)"),
    Flag(("--on-error",), "bad input: stop with a message naming the file and line, or record it"
         " as rejected and go on (into OUTPUT/rejected/rejected.jsonl, or OUTPUT.rejected.jsonl beside"
         " the output of count, train and eval)", default="fail", choices=ON_ERROR),
    Flag(("--max-rejected",), "with --on-error=skip, the run fails (and writes no manifest) when it"
         " rejects more than this: a count of documents and files, or a share of all read, like 10%%;"
         " it fails too when it writes no document at all", type=max_rejected, default=DEFAULT_MAX_REJECTED),
    Flag(("--keep-fields",), "tokfx run, encode --output-dir: JSON fields or Parquet columns copied"
         " into the Parquet shards beside the ids, with their types (e.g. url,date,score; missing:"
         " null)", type=field_names, metavar="FIELD,..."),
    Flag(("--task-bytes",), "tokfx run, count, encode --output-dir: a .txt file is read in parts of"
         " about this many bytes, in parallel (cut at special tokens), and so is a Parquet file (by"
         " row groups); other files are one read task each", type=byte_size, default="32M"),
    Flag(("--processes",), "processes counting a .txt file (default: one per core)", type=int),
    Flag(("--counts",), "train from this pre-token counts file (from tokfx count) instead of corpus files"),
    Flag(("--lines",), "with --counts: the line counts file (tokfx count --lines-output) that sage's"
         " line context trains on"),
    # Pre-tokenization and training.
    Flag(("--special-token",), f"a special token: never trained on, encoded as its own id; in a .txt"
         f" file it separates documents (repeatable; default {DEFAULT_SPECIAL})", action="append"),
    Flag(("--pattern",), f"pre-tokenization pattern: {', '.join(PATTERNS)}; or a regular expression",
         default="gpt2"),
    Flag(("--algorithm",), "vocabulary construction", default="bpe", choices=sorted(TRAINERS)),
    Flag(("--vocab-size",), "alphabet + learned tokens + special tokens", type=int, default=2000),
    Flag(("--alphabet",), "base symbols: bytes; cjk (CJK-remapped bytes); chars (characters with byte"
         " fallback, as sentencepiece); chars-cjk (chars, the fallback CJK-remapped)", default="bytes",
         choices=ALPHABETS),
    Flag(("--cjk-groups",), "with --alphabet cjk or chars-cjk: remapped lead-byte groups in hex (default"
         " 39,3a,3b; add 38 for kana and CJK punctuation)"),
    Flag(("--character-coverage",), f"with --alphabet chars or chars-cjk: the share of the text's characters"
         f" the alphabet covers (default {DEFAULT_CHARACTER_COVERAGE})", type=float),
    Flag(("--initial-vocab",), "pathpiece, sage: initial vocabulary (default bpe)", choices=INITIAL_VOCABS),
    Flag(("--initial-size",), "pathpiece, sage: initial vocabulary size (default 4 x --vocab-size, at"
         " most 2^18)", type=int),
    Flag(("--schedule",), "pathpiece, sage: vocab sizes after each round, e.g. 60000,50000,40000"
         " (default: pathpiece halving steps, sage the official multiples)", type=sizes),
    Flag(("--max-width",), "pathpiece, sage, unigram and the pathpiece-l/-r, greedy and likelihood"
         " segmenters: widest token in base symbols (default 16)", type=int),
    Flag(("--tie-break",), "pathpiece: how each pruning round chooses among a pre-token's shortest"
         " segmentations: the longest last token (PathPieceL, default) or at random as pathpiece-r"
         " with --seed (PathPieceR; the tokenizer then segments with pathpiece-r and that seed)",
         choices=TIE_BREAKS),
    Flag(("--seed-size",), "unigram: seed vocabulary size, base symbols included (default 1000000)",
         type=int),
    Flag(("--shrinking-factor",), "unigram: each prune keeps this share of the tokens (default 0.75)",
         type=float),
    Flag(("--em-iterations",), "unigram: EM steps per round (default 2)", type=int),
    Flag(("--recipe",), "unigram: sentencepiece's seed, rounds and final cut (the default) or ours, the"
         " most frequent n-grams pruned to exactly --vocab-size (fits the training text more tightly,"
         " generalizes worse); docs/algorithms.md", choices=RECIPES),
    Flag(("--seed",), "pathpiece-r, pathpiece with --tie-break random, sage (word2vec): random seed"
         " (default 0)", type=int),
    Flag(("--embeddings-schedule",), "sage: vocab sizes (the initial size or sizes of --schedule) at"
         " which word2vec is retrained (default: the official multiples of --vocab-size)", type=sizes),
    Flag(("--context",), "sage: word2vec and the ablation see the whole line (default, as the"
         " official code; the corpus's lines are counted too) or one pre-token (faster, and all"
         " that a counts file allows); unigram with its sentencepiece recipe: the seed tells a"
         " line's end from a pre-token's (line, as sentencepiece, which trains on lines) or not"
         " (pretoken, the default)", choices=CONTEXTS),
    Flag(("--segmenter",), "segment with this instead of the algorithm's (or the tokenizer's) own"
         " (bpe: merges; pathpiece-l/-r and greedy: any vocabulary; likelihood: a unigram one)", choices=tuple(SEGMENTERS)),
    Flag(("--min-pretoken-count",), "drop pre-tokens seen fewer times before training", type=int,
         default=1),
    # The training reducer holds every distinct pre-token, and their number grows with the corpus
    # (2.4 million in 1 GB of English web text): this bound keeps its memory flat. On that text
    # the top 2**20 hold 99.4 % of the occurrences, and a 32,000 BPE trained on them gives the
    # same held-out token count within 0.1 % (bench/README.md).
    Flag(("--max-pretokens",), "keep only the N most frequent pre-tokens for training (ties: the"
         " smaller pre-token); 0 keeps all (default 1048576)", type=int, default=1 << 20),
    # What is written.
    Flag(("-o", "--output"), "tokenizer directory", default="tokfx-out/tokenizer", key="tokenizer_output"),
    Flag(("--output",), "output directory (tokfx run, tokfx encode --output-dir) or counts file"
         " (tokfx count)", default="tokfx-out", key="pipeline_output"),
    Flag(("--lines-output",), "tokfx count: also write the corpus's line counts to this Parquet file"
         " (for SaGe's line context: tokfx train --counts FILE --lines THIS)"),
    Flag(("--tokenizer",), f"{TOKENIZER_FILES}: tokfx encode --output-dir encodes with it; tokfx run"
         " encodes with it instead of training one (its tokfx.json written into OUTPUT/tokenizer/)"),
    Flag(("--format",), f"shard formats to write, repeatable or a comma list: {', '.join(FORMATS)}"
         f" (default: {','.join(DEFAULT_FORMATS)})", action="append"),
    Flag(("--shard-size",), "a shard holds about this many bytes of token ids (its .bin: 2 or 4 bytes"
         " an id) before the next one starts; each read task writes its own shards (with --shuffle-seed:"
         " the corpus's ids cut into shards of about this size)", type=byte_size,
         default="1G"),
    Flag(("--shuffle-seed",), "write the documents in a pseudo-random order over the whole corpus,"
         " fixed by this seed (0 to 2**64-1): shards shuffled-00000... of about --shard-size, the"
         " same bytes for any runner and number of workers (default: input order, each read task"
         " its own shards)", type=int),
    Flag(("--overwrite",), "replace the output of an earlier run with other settings in --output"
         " (without it, such a run is refused; a run with the same settings resumes)",
         action="store_true"),
    Flag(("--special-tokens-in-text",), "special-token text inside a JSON or Parquet document: plain"
         " text (a document cannot inject a control id), or split: encoded as the special token's"
         " id (a .txt file is cut into documents at them either way)", default="text",
         choices=("text", "split")),
    # Not given (None): what the tokenizer's own framing does (Tokenizer.framing, e.g. a Hugging
    # Face post-processor's <s>), so a loaded model's documents are framed as the model expects.
    Flag(("--prepend-bos",), "put the tokenizer's BOS id before every document, or not"
         " (--no-prepend-bos); default: as the tokenizer's own framing does (Llama's <s>)",
         action=argparse.BooleanOptionalAction),
    Flag(("--append-eos",), f"append the tokenizer's EOS id after every document (its framing's EOS, else"
         f" {DEFAULT_SPECIAL}), or not (--no-append-eos); default: as the tokenizer's own framing does"
         f" (tokfx run: not)", action=argparse.BooleanOptionalAction),
    Flag(("--train-sample",), "tokfx run: train on a sample of the corpus, a share (10%%, 0.1) or a size"
         " (2G, bytes as stored): whole read tasks chosen by a hash of their file and part; every"
         " document is still encoded, and the manifest's config records the sample (default: all)",
         type=share_or_size),
    Flag(("--eval-fraction",), "tokfx run: hold out about this share of documents (by a hash of their"
         " id) from training, and write the trained tokenizer's eval report on them into"
         " OUTPUT/eval/ (they are still in the shards)", type=float, default=0.0),
    Flag(("-q", "--quiet"), "no progress output", action="store_true"),
    Flag(("--verbose",), "Beam's own log too: its INFO lines and the start-up lines tokfx leaves out",
         action="store_true"),
    # Encoding, inspecting, evaluating.
    Flag(("tokenizer",), TOKENIZER_FILES, key="tokenizer_dir"),
    Flag(("--text",), "encode this text and print its ids"),
    Flag(("-o", "--output"), "write JSON lines here instead of standard output", key="ids_output"),
    Flag(("--output-dir",), "run the Beam pipeline instead: shards and manifest into this directory"
         " (corpus from --input PATTERN; see tokfx run --help)"),
    Flag(("tokenizers",), f"{TOKENIZER_FILES}, one or more", nargs="+", metavar="TOKENIZER"),
    Flag(("--corpus",), "JSON-lines, .txt or .parquet files", nargs="+", required=True, metavar="FILE"),
    Flag(("-o", "--output"), "report directory", required=True, key="report_output"),
    Flag(("--separator",), f"text that separates documents in a .txt file (repeatable; default"
         f" {DEFAULT_SPECIAL})", action="append"),
    Flag(("--alpha",), "Rényi efficiency order", type=float, default=2.5),
    Flag(("--window",), "context diversity: neighbours within this many positions", type=int, default=2),
    Flag(("--no-plots",), "metrics only, no figures", action="store_true"),
    # Looking into an output directory (tokfx shards).
    Flag(("directory",), "an output directory of tokfx run or tokfx encode --output-dir (its"
         " manifest.json and shards/)", metavar="DIR", key="shards_dir"),
    Flag(("--id",), "the document with this id (as in the Parquet shards' id column)", dest="doc_id",
         key="doc_id"),
    Flag(("--index",), "the N-th document of the output, from 0 (the shards in the manifest's order)",
         type=int, metavar="N"),
    Flag(("--tokenizer",), f"{TOKENIZER_FILES} to decode with (default: DIR/tokenizer/, or the file"
         f" the manifest says the tokenizer was loaded from); its hash must be the manifest's",
         key="decode_tokenizer"),
]

FLAGS: dict[str, Flag] = {flag.name: flag for flag in _FLAGS}
assert len(FLAGS) == len(_FLAGS), "two flags share a key"

# The trainers' and segmenters' own options: None when not given (training_settings routes them).
TRAINER_OPTIONS = ("initial_vocab", "initial_size", "schedule", "max_width", "tie_break", "seed",
                   "embeddings_schedule", "context", "seed_size", "shrinking_factor", "em_iterations",
                   "recipe")
TRAINING = ("special_token", "pattern", "algorithm", "vocab_size", "alphabet", "cjk_groups",
            "character_coverage", *TRAINER_OPTIONS, "segmenter")

COMMAND_FLAGS = {
    "train": ("files", "tokenizer_output", *TRAINING, "text_field", "on_error", "processes", "counts",
              "lines", "quiet"),
    "encode": ("tokenizer_dir", "files", "text", "text_field", "ids_output", "segmenter", "output_dir"),
    "inspect": ("tokenizer_dir",),
    "eval": ("tokenizers", "corpus", "report_output", "text_field", "separator", "on_error", "alpha",
             "window", "no_plots", "quiet"),
    # tokfx run, count and encode --output-dir: Beam's PipelineOptions (beam_jobs.options).
    "pipeline": ("input", "pipeline_output", "tokenizer", "lines_output", "text_field", "id_field", "keep_fields",
                 *TRAINING, "min_pretoken_count", "max_pretokens", "train_sample", "eval_fraction", "format", "shard_size",
                 "shuffle_seed", "overwrite", "special_tokens_in_text", "prepend_bos", "append_eos",
                 "task_bytes", "on_error", "max_rejected", "quiet",
                 "verbose"),
    "shards inspect": ("shards_dir",),
    "shards show": ("shards_dir", "doc_id", "index", "decode_tokenizer"),
    "shards verify": ("shards_dir",),
}


def add_flags(parser, command: str) -> None:
    """Declare the flags of `command` (a key of COMMAND_FLAGS) on an argparse parser."""
    for name in COMMAND_FLAGS[command]:
        FLAGS[name].add_to(parser)


def refuse_underscore_spellings(argv: Sequence[str], command: str) -> None:
    """`--vocab_size` for `--vocab-size` is an error that names the right spelling, never a flag
    silently ignored (Beam keeps options it does not know, under the same name as ours)."""
    ours = {name for key in COMMAND_FLAGS[command] for name in FLAGS[key].names}
    for arg in argv:
        spelled = arg.split("=", 1)[0]
        if spelled.startswith("--") and "_" in spelled and spelled.replace("_", "-") in ours:
            raise ValueError(f"unknown option {spelled}: tokfx's flags are spelled with dashes,"
                             f" {spelled.replace('_', '-')}")


def special_tokens(args) -> list[str]:
    return special_tokens_or_default(args.special_token)


# The keywords of tokfx.train that every training has; the rest are settings of the algorithm
# and the segmenter (recorded as such in a pipeline's config).
BASIC_KEYWORDS = ("algorithm", "vocab_size", "special_tokens", "pattern", "alphabet", "cjk_groups",
                  "character_coverage")


def training_keywords(args) -> dict:
    """`tokfx.train` keywords from the parsed training flags, checked before any input is read."""
    tokens = special_tokens(args)
    alphabet = Alphabet.named(args.alphabet, args.cjk_groups)
    check_character_coverage(alphabet, args.character_coverage)
    check_vocab_size(args.vocab_size, tokens, alphabet)
    resolve_pattern(args.pattern)
    settings = training_settings(args.algorithm, args.segmenter,
                                 **{name: getattr(args, name) for name in TRAINER_OPTIONS})
    return {"algorithm": args.algorithm, "vocab_size": args.vocab_size, "special_tokens": tokens,
            "pattern": args.pattern, "alphabet": alphabet.name, "cjk_groups": alphabet.groups or None,
            "character_coverage": args.character_coverage, **settings}
