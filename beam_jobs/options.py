"""The tokfx pipeline options: every tokfx flag, next to Beam's own (`--runner`, ...)."""
from __future__ import annotations

from apache_beam.options.pipeline_options import PipelineOptions

from tokfx.cli import add_pathpiece_arguments

DEFAULT_SPECIAL = "<|endoftext|>"
# Named so that Beam never falls back to its default, which first tries to download a runner.
DEFAULT_RUNNER = "DirectRunner"


class TokfxOptions(PipelineOptions):
    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--input", action="append", default=None,
                            help="file pattern of .jsonl, .jsonl.gz, .jsonl.zst or .txt files"
                                 " (repeatable; default: the sample corpus shipped with tokfx)")
        parser.add_argument("--output", default="tokfx-out",
                            help="output directory (tokfx run/encode) or counts file (tokfx count)")
        parser.add_argument("--tokenizer", default=None, help="tokenizer directory (tokfx encode)")
        parser.add_argument("--lines-output", default=None,
                            help="tokfx count: also write the corpus's line counts to this Parquet file"
                                 " (for SaGe's line context: tokfx train --counts FILE --lines THIS)")
        parser.add_argument("--text-field", default="text", help="JSON field holding the text")
        parser.add_argument("--id-field", default=None,
                            help="JSON field holding a document id (default: file:line)")
        parser.add_argument("--special-token", action="append", default=None,
                            help=f"special token (repeatable; default {DEFAULT_SPECIAL}); in .txt"
                                 " files they separate documents")
        parser.add_argument("--pattern", default="gpt2", help="gpt2, cl100k, o200k, llama3, a PathPiece"
                            " variant (firstspace, space, digit, ...) or a regex")
        parser.add_argument("--algorithm", default="bpe", help="trainer name (see the registry)")
        parser.add_argument("--alphabet", default="bytes", choices=["bytes", "cjk"],
                            help="base symbols: bytes, or cjk (CJK-remapped bytes; the tokenizer"
                                 " directory then holds tokfx.json only)")
        parser.add_argument("--cjk-groups", default=None,
                            help="with --alphabet cjk: remapped lead-byte groups in hex (default"
                                 " 39,3a,3b; add 38 for kana and CJK punctuation)")
        parser.add_argument("--vocab-size", type=int, default=2000)
        add_pathpiece_arguments(parser)
        parser.add_argument("--min-pretoken-count", type=int, default=1,
                            help="drop pre-tokens seen fewer times before training")
        parser.add_argument("--max-pretokens", type=int, default=None,
                            help="keep only the N most frequent pre-tokens for training")
        parser.add_argument("--eval-fraction", type=float, default=0.0,
                            help="tokfx run: hold out about this share of documents (by a hash of"
                                 " their id) from training, and write the trained tokenizer's eval"
                                 " report on them into OUTPUT/eval/ (they are still in the shards)")
        parser.add_argument("--num-shards", type=int, default=4, help="output shards")
        parser.add_argument("--append-eos", action="store_true",
                            help=f"append the {DEFAULT_SPECIAL} id after every document")
        parser.add_argument("--txt-range-bytes", type=int, default=32 << 20,
                            help="a .txt file is read in ranges of about this size, in parallel")
        parser.add_argument("--on-error", choices=["fail", "skip"], default="fail",
                            help="bad input: stop with a message, or record it in rejected/")
        parser.add_argument("-q", "--quiet", action="store_true", help="no progress output and no summary")
