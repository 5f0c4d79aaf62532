"""Entry points: `tokfx run`, `tokfx count`, `tokfx encode --output-dir` as Beam pipelines."""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from tokfx.counts_file import write_counts
from tokfx.manifest import MANIFEST_JSON
from tokfx.pretokenize import resolve_pattern
from tokfx.registry import get_trainer
from tokfx.tokenizer import Tokenizer
from tokfx.tokenizer_files import tokenizer_hash, tokenizer_json_bytes
from tokfx.training import check_vocab_size, training_settings
from beam_jobs.count import CountPretokens
from beam_jobs.encode import TokenizeDocs
from beam_jobs.files import publish
from beam_jobs.options import DEFAULT_RUNNER, DEFAULT_SPECIAL, TokfxOptions
from beam_jobs.read import ReadCorpus
from beam_jobs.train import TrainVocab
from beam_jobs.write import SHARDS_DIR, WriteShards

TOKENIZER_DIR = "tokenizer"


def _options(argv: list[str]) -> tuple[PipelineOptions, TokfxOptions]:
    options = PipelineOptions(argv)
    # Beam only warns about a flag it does not know; a misspelt --vocab-size would silently
    # train with the default.
    unknown = set(options.get_all_options(retain_unknown_options=True)) - set(options.get_all_options())
    if unknown:
        raise ValueError(f"unknown option(s): {', '.join('--' + u for u in sorted(unknown))}")
    if options.view_as(StandardOptions).runner is None:
        options.view_as(StandardOptions).runner = DEFAULT_RUNNER
    return options, options.view_as(TokfxOptions)


def _inputs(opts: TokfxOptions) -> list[str]:
    if opts.input:
        return list(opts.input)
    from tokfx.cli import sample_corpus  # the CLI owns the sample corpus's location
    return [str(p) for p in sample_corpus()]


def _special_tokens(opts: TokfxOptions) -> list[str]:
    return opts.special_token if opts.special_token is not None else [DEFAULT_SPECIAL]


def config_of(opts: TokfxOptions, inputs: list[str], **extra) -> dict:
    """What determines the output (recorded in the manifest and shard footers); no paths out,
    no runner, no timings."""
    return {"inputs": inputs, "text_field": opts.text_field, "id_field": opts.id_field,
            "special_tokens": _special_tokens(opts), "on_error": opts.on_error,
            "num_shards": opts.num_shards, "append_eos": opts.append_eos, **extra}


def _read(p, opts: TokfxOptions, inputs: list[str]):
    return p | "ReadCorpus" >> ReadCorpus(
        inputs, text_field=opts.text_field, id_field=opts.id_field,
        special_tokens=_special_tokens(opts), on_error=opts.on_error,
        txt_range_bytes=opts.txt_range_bytes)


def _count(docs, opts: TokfxOptions):
    return docs | "CountPretokens" >> CountPretokens(
        opts.pattern, _special_tokens(opts), opts.min_pretoken_count, opts.max_pretokens)


def _training_settings(opts: TokfxOptions) -> dict:
    """Checks the settings before the pipeline runs; returns TrainVocab's extra params."""
    get_trainer(opts.algorithm)
    resolve_pattern(opts.pattern)
    check_vocab_size(opts.vocab_size, _special_tokens(opts))
    return training_settings(opts.algorithm, opts.segmenter, initial_vocab=opts.initial_vocab,
                             initial_size=opts.initial_size, schedule=opts.schedule,
                             max_width=opts.max_width, seed=opts.seed,
                             embeddings_schedule=opts.embeddings_schedule)


def _write(docs_and_rejected, keyed, opts, tokenizer_file, config):
    return keyed | "WriteShards" >> WriteShards(
        opts.output, opts.num_shards, config, tokenizer_file,
        docs_and_rejected["documents"], docs_and_rejected["rejected"])


def _eos(opts: TokfxOptions) -> str | None:
    return DEFAULT_SPECIAL if opts.append_eos else None


def _clear_manifest(output_dir: str) -> None:
    """An old manifest would claim the output complete while the new run writes it."""
    path = FileSystems.join(output_dir, MANIFEST_JSON)
    if FileSystems.exists(path):
        FileSystems.delete([path])


def build_run(p, opts: TokfxOptions) -> None:
    inputs = _inputs(opts)
    params = _training_settings(opts)
    if opts.append_eos and DEFAULT_SPECIAL not in _special_tokens(opts):
        raise ValueError(f"--append-eos needs {DEFAULT_SPECIAL} among the special tokens")
    config = config_of(opts, inputs, algorithm=opts.algorithm, vocab_size=opts.vocab_size,
                       pattern=opts.pattern, min_pretoken_count=opts.min_pretoken_count,
                       max_pretokens=opts.max_pretokens, **({"training": params} if params else {}))
    read = _read(p, opts, inputs)
    tokenizer_file = (_count(read["documents"], opts)
                      | "TrainVocab" >> TrainVocab(
                          FileSystems.join(opts.output, TOKENIZER_DIR), algorithm=opts.algorithm,
                          vocab_size=opts.vocab_size, special_tokens=_special_tokens(opts),
                          pattern=opts.pattern, params=params))
    keyed = read["documents"] | "TokenizeDocs" >> TokenizeDocs(tokenizer_file, opts.num_shards,
                                                              _eos(opts))
    _write(read, keyed, opts, tokenizer_file, config)


def build_encode(p, opts: TokfxOptions) -> None:
    if not opts.tokenizer:
        raise ValueError("tokfx encode --output-dir needs a tokenizer directory")
    tokenizer = Tokenizer.load(opts.tokenizer)
    if opts.append_eos and DEFAULT_SPECIAL not in tokenizer.special_tokens:
        raise ValueError(f"--append-eos: the tokenizer has no {DEFAULT_SPECIAL} token")
    inputs = _inputs(opts)
    config = config_of(opts, inputs)
    read = _read(p, opts, inputs)
    # The tokenizer's bytes travel in the graph, not its local path.
    tokenizer_file = p | "Tokenizer" >> beam.Create(
        [(tokenizer_hash(tokenizer), tokenizer_json_bytes(tokenizer))])
    keyed = read["documents"] | "TokenizeDocs" >> TokenizeDocs(tokenizer_file, opts.num_shards,
                                                              _eos(opts))
    _write(read, keyed, opts, tokenizer_file, config)


def _write_counts_file(counts: dict, destination: str) -> int:
    with tempfile.TemporaryDirectory() as local:
        write_counts(Path(local) / "counts.parquet", counts)
        publish(Path(local) / "counts.parquet", destination)
    return len(counts)


def build_count(p, opts: TokfxOptions) -> None:
    resolve_pattern(opts.pattern)
    read = _read(p, opts, _inputs(opts))
    # Under --on-error=skip the rejected records are reported in the summary only.
    _count(read["documents"], opts) | "WriteCounts" >> beam.Map(_write_counts_file, opts.output)


def _counters(result) -> dict[str, int]:
    metrics = result.metrics().query(MetricsFilter().with_namespace("tokfx"))
    totals: dict[str, int] = {}
    for counter in metrics["counters"]:
        name = counter.key.metric.name
        totals[name] = totals.get(name, 0) + (counter.committed or counter.attempted or 0)
    return totals


def summary(counters: dict[str, int], seconds: float, written: str) -> str:
    stages = ", ".join(f"{stage} {counters[f'usec_{stage}'] / 1000:,.0f} ms"
                       for stage in ("read", "count", "train", "encode", "write")
                       if f"usec_{stage}" in counters)
    lines = [f"read {counters.get('documents_read', 0):,} documents"
             f" ({counters.get('bytes_read', 0):,} bytes),"
             f" rejected {counters.get('documents_rejected', 0):,} documents"
             f" and {counters.get('files_rejected', 0):,} files",
             f"{counters.get('pretokens', 0):,} pre-tokens counted;"
             f" {counters.get('documents_written', 0):,} documents written,"
             f" {counters.get('tokens', 0):,} tokens",
             f"wrote {written}",
             f"{seconds:.1f} s in all; processing time summed over workers: {stages or '-'}"]
    return "\n".join(lines)


BUILDERS = {"run": build_run, "count": build_count, "encode": build_encode}


def run(command: str, argv: list[str]):
    """Build and run the pipeline of `command`; print the summary; return the counters."""
    options, opts = _options(argv)
    if command != "count":
        _clear_manifest(opts.output)
    start = time.perf_counter()
    p = beam.Pipeline(options=options)
    BUILDERS[command](p, opts)
    result = p.run()
    result.wait_until_finish()
    counters = _counters(result)
    if command == "count":
        written = f"pre-token counts to {opts.output}"
    else:
        written = (f"{FileSystems.join(opts.output, SHARDS_DIR)}/ (Parquet, .bin/.idx),"
                   f" {FileSystems.join(opts.output, MANIFEST_JSON)}")
        if command == "run":
            written = f"{FileSystems.join(opts.output, TOKENIZER_DIR)}/, " + written
    if not opts.quiet:
        print(summary(counters, time.perf_counter() - start, written), file=sys.stderr)
    return counters
