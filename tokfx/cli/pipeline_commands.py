"""The commands that are Beam pipelines (`tokfx run`, `tokfx count`, `tokfx encode --output-dir`):
their descriptions, and how their command lines are told apart. The `tokfx` command hands them
to beam_jobs.main unparsed."""
from __future__ import annotations

PIPELINE_HELP = {
    "run": "the whole pipeline: corpus -> pre-token counts -> tokenizer -> Parquet and Megatron"
           " shards + manifest.json (no arguments: the sample corpus into ./tokfx-out/; --tokenizer:"
           " encode with that tokenizer, no training)",
    "count": "count pre-tokens of a corpus into a Parquet counts file (--output FILE)",
    "encode": "encode a corpus with an existing tokenizer into shards and manifest.json"
              " (tokfx encode TOKENIZER --output-dir DIR FILES, or --input PATTERN)",
}


def pipeline_argv(argv: list[str]) -> tuple[str, list[str]] | None:
    """(pipeline command, its Beam arguments) when `argv` asks for a pipeline, else None."""
    if argv[:1] in (["run"], ["count"]):
        return argv[0], argv[1:]
    if argv[:1] == ["encode"] and any(a.split("=")[0] == "--output-dir" for a in argv):
        # The tokenizer, its first positional argument, is told from the corpus files by
        # beam_jobs.options.corpus_arguments.
        return "encode", [("--output" + a[len("--output-dir"):]) if a.split("=")[0] == "--output-dir" else a
                          for a in argv[1:]]
    return None
