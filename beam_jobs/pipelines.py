"""Entry points: `tokfx run`, `tokfx count`, `tokfx encode --output-dir` as Beam pipelines.

`tokfx run` reads the corpus twice, along one read plan (beam_jobs.plan): the first pass counts
pre-tokens for the single training reducer, the second re-reads each read task once the
tokenizer exists and encodes it straight into its shards (beam_jobs.encode). No document waits
for the tokenizer or crosses a shuffle, so memory does not grow with the corpus.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import resource
import shutil
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import NamedTuple

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions, WorkerOptions

from tokfx.alphabet import CHARACTERS, DEFAULT_CHARACTER_COVERAGE, Alphabet
from tokfx.cli.interrupt import interrupted
from tokfx.cli.flags import (BASIC_KEYWORDS, FLAGS, TRAINING, refuse_underscore_spellings, special_tokens,
                             training_keywords)
from tokfx.data import sample_corpus
from tokfx.formats.documents import CorpusError
from tokfx.formats.counts import write_counts
from tokfx.formats.readers import ReadOptions
from tokfx.formats.readers.policy import ErrorPolicy
from tokfx.formats.rejected import rejected_beside, write_rejected
from tokfx.formats.shards.formats import chosen_formats
from tokfx.formats.shards.manifest import MANIFEST_JSON
from tokfx.formats.shards.mds import check_kept
from tokfx.formats.shards.parquet import shard_schema
from tokfx.formats.shards.placement import is_held_out
from tokfx.models.training import trains_on_lines
from tokfx.pre_tokenizers import resolve_pattern
from tokfx.special_tokens import DEFAULT_SPECIAL
from tokfx.tokenizer import Tokenizer
from beam_jobs.count import LINE, PRETOKEN, CountSettings, CountTasks, Counted, count_work_dir
from beam_jobs.encode import TASKS, EncodeSettings, EncodeTasks
from beam_jobs.evaluate import EvalHeldOut
from beam_jobs.files import publish, read_json, write_bytes
from beam_jobs.manifest import WriteManifest
from beam_jobs.options import DEFAULT_RUNNER, TokfxOptions, corpus_arguments, local_runner
from beam_jobs.output_dir import COUNTING_DIR, EVAL_DIR, GIVEN_TOKENIZER, OURS, PROGRESS_DIR, TOKENIZER_DIR, OutputDir
from beam_jobs import progress
from beam_jobs.plan import ReadPlan, plan_reads
from beam_jobs.progress import COUNTING, ENCODING, RunProgress
from beam_jobs.read import REJECTED, ReadTasks
from beam_jobs.receipts import SHARDS_DIR
from beam_jobs.sample import sample_record, sample_tasks
from beam_jobs.shuffle import WriteShuffled, check_seed
from beam_jobs.records import TokenizerFile
from beam_jobs.totals import check_written, describe, totals
from beam_jobs.train import TrainVocab, save_tokenizer_files


def _options(command: str, argv: list[str]) -> tuple[PipelineOptions, TokfxOptions]:
    refuse_underscore_spellings(argv, "pipeline")
    argv = corpus_arguments(command, argv)
    options = PipelineOptions(argv)
    # Beam only warns about a flag it does not know; a misspelt --vocab-size would silently
    # train with the default.
    unknown = set(options.get_all_options(retain_unknown_options=True)) - set(options.get_all_options())
    if unknown:
        given = [arg.split("=")[0] for arg in argv if arg.startswith("--")]
        named = [next((g for g in given if g[2:].replace("-", "_") == u), "--" + u) for u in sorted(unknown)]
        raise ValueError(f"unknown option(s): {', '.join(named)} (tokfx {command} --help lists them)")
    if options.view_as(StandardOptions).runner is None:
        options.view_as(StandardOptions).runner = DEFAULT_RUNNER
    opts = options.view_as(TokfxOptions)
    if options.view_as(StandardOptions).runner == DEFAULT_RUNNER and not opts.verbose:
        _quiet_local_workers(options)
    return options, opts


def _quiet_local_workers(options: PipelineOptions) -> None:
    """The local runner's multi_processing workers write Beam's INFO log into the terminal
    (some 60 lines a run): keep their warnings and our progress lines, unless the user set the
    levels. (On a cluster runner the workers' log goes to its log service, so it is left alone.)"""
    worker = options.view_as(WorkerOptions)
    if worker.default_sdk_harness_log_level is None:
        worker.default_sdk_harness_log_level = "WARNING"
        if worker.sdk_harness_log_level_overrides is None:
            worker.sdk_harness_log_level_overrides = {"beam_jobs": "INFO"}
        # The runner logs every worker warning a second time as its own.
        logging.getLogger("apache_beam.runners.portability.local_job_service").setLevel(logging.ERROR)


def _absolute(path: str) -> str:
    """A local path made absolute in the launcher: a worker resolves a relative one against its
    own working directory, which on a cluster is not the launcher's."""
    return os.path.abspath(path) if FileSystems.get_scheme(path) is None else path


def _inputs(command: str, opts: TokfxOptions) -> list[str]:
    """The corpus file patterns; none given, the sample corpus (said on the run's first line),
    but not for tokfx encode, whose input is never a default."""
    if opts.input:
        return [_absolute(pattern) for pattern in opts.input]
    if command == "encode":
        raise ValueError("tokfx encode --output-dir: no corpus given: name its files after the"
                         " tokenizer, or --input PATTERN")
    sample = [str(p) for p in sample_corpus()]
    if not opts.quiet:
        print(f"tokfx: no corpus given: reading the sample corpus shipped with tokfx ({len(sample)}"
              f" files; corpus files or --input PATTERN name yours)", file=sys.stderr)
    return sample


def _read_options(opts: TokfxOptions) -> ReadOptions:
    return ReadOptions(opts.text_field, opts.id_field, tuple(special_tokens(opts)))


def _plan(opts: TokfxOptions, inputs: list[str]) -> ReadPlan:
    keep = opts.keep_fields or ()
    taken = [name for name in keep if name in shard_schema().names]
    if taken:
        raise ValueError(f"--keep-fields: {', '.join(map(repr, taken))} is a column of every shard"
                         " already (a document's own id: --id-field)")
    plan = plan_reads(inputs, _read_options(opts), opts.task_bytes, ErrorPolicy(opts.on_error), keep)
    if "mds" in chosen_formats(opts.format):
        check_kept(plan.options.keep)  # before any shard is written
    return plan


def _check_shuffle(command: str, opts: TokfxOptions) -> None:
    if command == "count":
        raise ValueError("--shuffle-seed is for tokfx run and tokfx encode --output-dir, not tokfx count")
    check_seed(opts.shuffle_seed)
    if opts.keep_fields:
        # A spill record holds a document's id, source and ids (beam_jobs.shuffle), not the
        # values of kept fields, whose Arrow types it would have to carry.
        raise ValueError("--shuffle-seed with --keep-fields: not supported yet (shuffle without"
                         " kept fields, or keep fields in input order)")


def _counted_specials(opts: TokfxOptions) -> list[str]:
    """The special tokens that cut a document's text before counting: none unless their text
    inside a document is to be read as them (a .txt file is cut into documents at them anyway)."""
    return special_tokens(opts) if opts.special_tokens_in_text == "split" else []


class Encoding(NamedTuple):
    """The tokenizer a pipeline encodes with when it is given one (None: tokfx run trains it),
    and the tokens put around every document (names of special or control tokens, or None)."""
    tokenizer: Tokenizer | None = None
    bos: str | None = None
    eos: str | None = None


# What --tokenizer makes moot in tokfx run: the flags that only say how to train.
_TRAINING_ONLY = tuple(name for name in (*TRAINING, "min_pretoken_count", "max_pretokens", "train_sample",
                                          "eval_fraction")
                       if name not in ("special_token", "segmenter"))


def encoding_of(command: str, opts: TokfxOptions) -> Encoding:
    """The given tokenizer, loaded, and the BOS / EOS each document gets: --prepend-bos and
    --append-eos force them on or off; not given, the tokenizer's framing decides (add_bos,
    add_eos). Checked before the output directory exists, so a refused flag leaves nothing."""
    if command == "count":
        return Encoding()
    if command == "run" and not opts.tokenizer:
        # The tokenizer is trained in the pipeline: it has no framing, so no BOS, and its EOS is
        # <|endoftext|>, if among its special tokens.
        if opts.prepend_bos:
            raise ValueError("--prepend-bos: a tokenizer tokfx run trains has no BOS token"
                             " (give --tokenizer to encode with one that has)")
        if opts.append_eos and DEFAULT_SPECIAL not in special_tokens(opts):
            raise ValueError(f"--append-eos needs {DEFAULT_SPECIAL} among the special tokens")
        return Encoding(eos=DEFAULT_SPECIAL if opts.append_eos else None)
    if not opts.tokenizer:
        raise ValueError("tokfx encode --output-dir needs a tokenizer (directory or file)")
    if command == "run":
        given = [FLAGS[name].names[-1] for name in _TRAINING_ONLY if getattr(opts, name) != FLAGS[name].default]
        if given:
            raise ValueError(f"tokfx run --tokenizer encodes with that tokenizer and trains none:"
                             f" leave out {', '.join(given)}")
    # Absolute: the manifest records the file it was read from (tokenizer.source).
    tokenizer = Tokenizer.load(os.path.abspath(opts.tokenizer))
    framing = tokenizer.framing
    prepend = framing.add_bos if opts.prepend_bos is None else opts.prepend_bos
    append = framing.add_eos if opts.append_eos is None else opts.append_eos
    bos = _framing_token(tokenizer, "bos") if prepend else None
    eos = _framing_token(tokenizer, "eos") if append else None
    for flag, which, wanted, token in (("--prepend-bos", "bos", prepend, bos),
                                       ("--append-eos", "eos", append, eos)):
        if wanted and token is None:
            raise ValueError(f"{flag}: {opts.tokenizer} has no {which.upper()} token (its framing names"
                             f" none, and it has none of {', '.join(_CONVENTIONAL[which])})")
    return Encoding(tokenizer, bos, eos)


# Where the framing names no BOS / EOS (a tokfx-trained tokenizer, a sentencepiece .model, a
# tokenizer.json whose post-processor adds only <s> and that has no tokenizer_config.json beside
# it), the tokens that conventionally are one: <|endoftext|> first, the EOS --append-eos has
# always appended.
_CONVENTIONAL = {"bos": ("<s>",), "eos": (DEFAULT_SPECIAL, "</s>")}


def _framing_token(tokenizer: Tokenizer, which: str) -> str | None:
    named = getattr(tokenizer.framing, which)
    if named is not None:
        return named
    reserved = {**tokenizer.special_tokens, **tokenizer.control_tokens}
    return next((name for name in _CONVENTIONAL[which] if name in reserved), None)


def config_of(opts: TokfxOptions, inputs: list[str], encoding: Encoding, **extra) -> dict:
    """What determines the output (recorded in the manifest, the shard footers and
    settings.json); no paths out, no runner, no timings. The BOS / EOS choices are the
    effective ones, so a resume that would frame documents otherwise is refused."""
    return {"inputs": inputs, "text_field": opts.text_field, "id_field": opts.id_field,
            "special_tokens": special_tokens(opts), "on_error": opts.on_error,
            "special_tokens_in_text": opts.special_tokens_in_text, "shard_size": opts.shard_size,
            "formats": list(chosen_formats(opts.format)),
            "task_bytes": opts.task_bytes,
            "prepend_bos": encoding.bos is not None, "append_eos": encoding.eos is not None,
            # Only when given: the config (and so the receipts' key) of a run without them is unchanged.
            **({"keep_fields": list(opts.keep_fields)} if opts.keep_fields else {}),
            **({"shuffle_seed": opts.shuffle_seed} if opts.shuffle_seed is not None else {}), **extra}


class Built(NamedTuple):
    """What building a pipeline's graph gives the run: the config its output directory records
    (None: tokfx count), the read plan, the passes it makes over the plan (progress), and the
    given tokenizer, which the run writes for its workers to read (_given_path)."""
    config: dict | None
    plan: ReadPlan
    passes: list[str]
    given: TokenizerFile | None = None


def _count(tasks, plan: ReadPlan, opts: TokfxOptions, command: str, lines: bool = False,
           eval_fraction: float = 0.0, record_rejected: bool = False) -> dict:
    settings = CountSettings(_work_dir(command, opts), plan.options, opts.on_error, opts.pattern,
                             tuple(_counted_specials(opts)), lines, eval_fraction, record_rejected,
                             len(plan.tasks), progress=not opts.quiet,
                             progress_dir=_progress_dir(command, opts), progress_every=progress.EVERY)
    return tasks | "CountTasks" >> CountTasks(settings, opts.min_pretoken_count, opts.max_pretokens)


def _encode_and_write(p, tasks, plan: ReadPlan, opts: TokfxOptions, config: dict, tokenizer_file,
                      tokenizer_dir: str | None, encoding: Encoding, command: str) -> None:
    """The second pass: every read task read again, encoded and written into its shards; then
    the rejected records and the manifest."""
    settings_json = json.dumps(config, sort_keys=True)
    settings = EncodeSettings(
        opts.output, plan.options, opts.on_error, opts.shard_size, encoding.eos,
        opts.special_tokens_in_text == "split",
        hashlib.sha256(settings_json.encode()).hexdigest(), settings_json, len(plan.tasks),
        progress=not opts.quiet, bos_token=encoding.bos, progress_dir=_progress_dir(command, opts),
        progress_every=progress.EVERY, formats=chosen_formats(opts.format), shuffle_seed=opts.shuffle_seed)
    encoded = tasks | "EncodeTasks" >> EncodeTasks(tokenizer_file, settings)
    shards = encoded.shards
    if opts.shuffle_seed is not None:
        shards = shards | "WriteShuffled" >> WriteShuffled(tokenizer_file, settings)
    source = encoding.tokenizer.source if encoding.tokenizer is not None else None
    planned = p | "PlanRejected" >> beam.Create(plan.rejected)
    rejected = (planned, encoded[REJECTED]) | "AllRejected" >> beam.Flatten()
    ({"shards": shards, "tasks": encoded[TASKS], "rejected": rejected}
     | "WriteManifest" >> WriteManifest(opts.output, config, opts.max_rejected, tokenizer_file, len(plan.tasks),
                                        tokenizer_dir, source, shuffled=opts.shuffle_seed is not None))


def build_run(p, opts: TokfxOptions, encoding: Encoding) -> Built:
    """The graph of `tokfx run`. With
    --tokenizer, that tokenizer (encoding.tokenizer) is written into OUTPUT/tokenizer/ and
    encoded with, and nothing is counted or trained."""
    if encoding.tokenizer is not None:
        return _build_given(p, opts, encoding, TOKENIZER_DIR)
    inputs = opts.input
    keywords = training_keywords(opts)  # checks the settings before the pipeline runs
    params = {name: value for name, value in keywords.items() if name not in BASIC_KEYWORDS}
    if not 0 <= opts.eval_fraction < 1:
        raise ValueError(f"--eval-fraction must be in [0, 1), got {opts.eval_fraction}")
    alphabet = Alphabet.named(keywords["alphabet"], keywords["cjk_groups"])
    plan = _plan(opts, inputs)
    trained_on = sample_tasks(plan.tasks, opts.train_sample) if opts.train_sample else plan.tasks
    config = config_of(opts, inputs, encoding, algorithm=opts.algorithm, vocab_size=opts.vocab_size,
                       pattern=opts.pattern, alphabet=alphabet.to_dict(),
                       **({"character_coverage": keywords["character_coverage"] or DEFAULT_CHARACTER_COVERAGE}
                          if alphabet.name in CHARACTERS else {}),
                       min_pretoken_count=opts.min_pretoken_count,
                       max_pretokens=opts.max_pretokens, eval_fraction=opts.eval_fraction,
                       **({"training": params} if params else {}),
                       **({"train_sample": sample_record(plan.tasks, trained_on, opts.train_sample)}
                          if opts.train_sample else {}))
    tasks = p | "ReadPlan" >> beam.Create(plan.tasks)
    # The first pass: documents counted for training, those of the sample's tasks only (the
    # rejected records are the second pass's, which reads every task).
    if trained_on != plan.tasks:
        counted_tasks = p | "SampledPlan" >> beam.Create(trained_on)
    else:
        counted_tasks = tasks
    fraction = opts.eval_fraction
    counted = _count(counted_tasks, plan, opts, "run", trains_on_lines(opts.algorithm, params), fraction)
    tokenizer_file = (counted[PRETOKEN]
                      | "TrainVocab" >> TrainVocab(FileSystems.join(opts.output, TOKENIZER_DIR), keywords,
                                                   progress=not opts.quiet, lines=counted.get(LINE)))
    if fraction:
        # Held-out documents wait for the tokenizer: a third read, that keeps the held-out share.
        read = tasks | "ReadHeldOut" >> ReadTasks(plan.options, opts.on_error, counted=False)
        (read["documents"]
         | "HeldOut" >> beam.Filter(lambda doc: is_held_out(doc.id, fraction))
         | "EvalHeldOut" >> EvalHeldOut(tokenizer_file, FileSystems.join(opts.output, EVAL_DIR),
                                        TOKENIZER_DIR))
    _encode_and_write(p, tasks, plan, opts, config, tokenizer_file, TOKENIZER_DIR, encoding, "run")
    return Built(config, plan, [COUNTING, ENCODING])


def build_encode(p, opts: TokfxOptions, encoding: Encoding) -> Built:
    """The graph of `tokfx encode --output-dir`."""
    return _build_given(p, opts, encoding, None)


def _build_given(p, opts: TokfxOptions, encoding: Encoding, tokenizer_dir: str | None) -> Built:
    """Encoding with a given tokenizer; `tokenizer_dir`: the output's folder to write it into
    first (tokfx run), or None (tokfx encode leaves it where it is)."""
    inputs = opts.input
    # The tokenizer is named by its hash, not its path: the same tokenizer elsewhere is the same run.
    file = TokenizerFile.of(encoding.tokenizer)
    config = config_of(opts, inputs, encoding, tokenizer_hash=file.hash)
    plan = _plan(opts, inputs)
    # The tokenizer reaches the workers as a file in the output directory, which they all see,
    # not its local path, which they may not, nor in the graph: beam.Create puts its values into
    # the graph, where the launcher and a worker held several copies of them (GPT-2's: about
    # 4 MiB of a worker's peak, 10 of the process tree's; bench/README, "Per-worker cost").
    tokenizer_file = (p | "Tokenizer" >> beam.Create([_given_path(opts)])
                      | "ReadTokenizer" >> beam.Map(TokenizerFile.read))
    if tokenizer_dir is not None:
        # Written before the manifest, which waits on this as its side input and lists the files.
        tokenizer_file = tokenizer_file | "SaveTokenizer" >> beam.Map(
            _save_given, FileSystems.join(opts.output, tokenizer_dir))
    _encode_and_write(p, p | "ReadPlan" >> beam.Create(plan.tasks), plan, opts, config,
                      tokenizer_file, tokenizer_dir, encoding, "encode" if tokenizer_dir is None else "run")
    return Built(config, plan, [ENCODING], given=file)


def _save_given(file: TokenizerFile, directory: str) -> TokenizerFile:
    save_tokenizer_files(file.load(), directory)
    return file


def _write_counts_file(counted: Counted, destination: str, unit: str = "pretoken") -> int:
    counts = counted.load()
    with tempfile.TemporaryDirectory() as local:
        write_counts(Path(local) / "counts.parquet", counts, unit)
        publish(Path(local) / "counts.parquet", destination)
    return len(counts)


def build_count(p, opts: TokfxOptions, encoding: Encoding) -> Built:
    resolve_pattern(opts.pattern)
    plan = _plan(opts, opts.input)
    tasks = p | "ReadPlan" >> beam.Create(plan.tasks)
    counted = _count(tasks, plan, opts, "count", lines=bool(opts.lines_output), record_rejected=True)
    counted[PRETOKEN] | "WriteCounts" >> beam.Map(_write_counts_file, opts.output)
    if opts.lines_output:
        counted[LINE] | "WriteLines" >> beam.Map(_write_counts_file, opts.lines_output, "line")
    ((p | "PlanRejected" >> beam.Create(plan.rejected), counted[REJECTED])
     | "Rejected" >> beam.Flatten()
     | "AllRejected" >> beam.combiners.ToList()
     | "WriteRejected" >> beam.Map(write_rejected, rejected_beside(opts.output), write_bytes))
    return Built(None, plan, [COUNTING])


def _counters(result) -> dict[str, int]:
    metrics = result.metrics().query(MetricsFilter().with_namespace("tokfx"))
    totals: dict[str, int] = {}
    for counter in metrics["counters"]:
        name = counter.key.metric.name
        totals[name] = totals.get(name, 0) + (counter.committed or counter.attempted or 0)
    return totals


def summary(counters: dict[str, int], counts: dict[str, int], seconds: float, written: str,
            command: str, counted: bool) -> str:
    """The run's last lines: `counts` (beam_jobs.totals) as manifest.json records them, the
    counters of this run's own work, what it wrote and the time it took; `counted`: whether it
    counted pre-tokens (an encode-only run says nothing of them)."""
    stages = ", ".join(f"{stage} {counters[f'usec_{stage}'] / 1000:,.0f} ms"
                       for stage in ("read", "count", "train", "encode", "write")
                       if f"usec_{stage}" in counters)
    kept = (f" ({counters.get('documents_written', 0):,} documents encoded by this run,"
            f" {counters['shards_kept']:,} shards kept from an earlier run)" if counters.get("shards_kept") else "")
    lines = [describe(counts, _WRITTEN[command]),
             (f"{counters.get('pretokens', 0):,} pre-tokens counted; " if counted else "")
             + f"{counts['tokens']:,} tokens written{kept}",
             f"wrote {written}",
             f"{seconds:.1f} s in all; processing time summed over workers: {stages or '-'}"]
    return "\n".join(lines)


# What the summary says a command did with each document it read.
_WRITTEN = {"run": "written", "encode": "written", "count": "counted"}


def _totals(command: str, opts: TokfxOptions, counters: dict[str, int], plan: ReadPlan) -> dict[str, int]:
    """The totals of a finished run: manifest.json's; tokfx count, which has none, counts them
    from its counters and the read plan's rejections the same way (and fails as the manifest
    would: its counts files removed)."""
    if command != "count":
        return read_json(FileSystems.join(opts.output, MANIFEST_JSON))["totals"]
    whole = sum(r.whole_file for r in plan.rejected)
    counts = totals(counters.get("documents_counted", 0),
                    counters.get("documents_rejected", 0) + len(plan.rejected) - whole,
                    counters.get("files_rejected", 0) + whole)
    try:
        check_written(counts, opts.max_rejected, rejected_beside(opts.output), _WRITTEN[command])
    except CorpusError:
        _remove(opts.output)
        _remove(opts.lines_output)
        raise
    return counts


BUILDERS = {"run": build_run, "count": build_count, "encode": build_encode}


def _peak_memory() -> str:
    """Peak resident memory of this process and of its largest child (the local runner's
    workers), as the kernel counts them."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return f"peak memory {own:,.0f} MB" + (f", largest worker process {children:,.0f} MB" if children else "")


def _written(command: str, opts: TokfxOptions, counts: dict[str, int]) -> str:
    if command == "count":
        written = f"pre-token counts to {opts.output}"
        if counts["documents_rejected"] or counts["files_rejected"]:
            written += f", rejected records to {rejected_beside(opts.output)}"
        return written
    written = (f"{FileSystems.join(opts.output, SHARDS_DIR)}/ ({', '.join(chosen_formats(opts.format))}),"
               f" {FileSystems.join(opts.output, MANIFEST_JSON)}")
    if command == "run":
        written = f"{FileSystems.join(opts.output, TOKENIZER_DIR)}/, " + written
        if opts.eval_fraction:
            written += f", eval report on held-out documents in {FileSystems.join(opts.output, EVAL_DIR)}/"
    return written


def _work_dir(command: str, opts: TokfxOptions) -> str | None:
    """Where the counting pass of `command` keeps its files, if it counts."""
    if command == "count":
        return count_work_dir(opts.output)
    return FileSystems.join(opts.output, COUNTING_DIR) if command == "run" else None


def _given_path(opts: TokfxOptions) -> str:
    """Where a run with a given tokenizer writes it for its workers (Built.given)."""
    return FileSystems.join(opts.output, GIVEN_TOKENIZER)


def _progress_dir(command: str, opts: TokfxOptions) -> str | None:
    """Where the workers report the run's progress (beam_jobs.progress); None with --quiet."""
    if opts.quiet:
        return None
    return opts.output + ".progress" if command == "count" else FileSystems.join(opts.output, PROGRESS_DIR)


def _remove(path: str | None) -> None:
    if path is not None and FileSystems.exists(path):
        FileSystems.delete([path])


def _run_pipeline(p, command: str, opts: TokfxOptions, output: OutputDir | None, built: Built):
    """Run the built pipeline into its claimed output, reporting its progress; when it fails,
    say what is left there."""
    work_dir, progress_dir = _work_dir(command, opts), _progress_dir(command, opts)
    given = _given_path(opts) if built.given is not None else None
    for path in (work_dir, progress_dir):
        _remove(path)  # an earlier run's, killed before it could remove it
    if given is not None:
        built.given.write(given)
    try:
        with RunProgress(progress_dir, built.passes, built.plan) if progress_dir else nullcontext():
            result = p.run()
            result.wait_until_finish()
    except BaseException as exc:
        if output and output.holds_shards() and not opts.quiet:
            # Only an interrupted run is sure to go on: a failing input fails again.
            then = ("the same command again resumes it" if interrupted(exc) else
                    "its finished shards are kept for a run with the same settings")
            print(f"tokfx: the output in {opts.output} is incomplete (no {MANIFEST_JSON}); {then}",
                  file=sys.stderr)
        raise
    finally:
        for path in (work_dir, progress_dir, given):
            _remove(path)
    return result


def run(command: str, argv: list[str]):
    """Build and run the pipeline of `command`; print progress and the summary; return the
    counters."""
    options, opts = _options(command, argv)
    opts.output = _absolute(opts.output)
    if opts.lines_output:
        opts.lines_output = _absolute(opts.lines_output)
    start = time.perf_counter()
    if opts.lines_output and command != "count":
        raise ValueError(f"--lines-output is for tokfx count, not tokfx {command}")
    if opts.keep_fields and command == "count":
        raise ValueError("--keep-fields is for tokfx run and tokfx encode --output-dir (their shards), not tokfx count")
    if opts.train_sample and command != "run":
        raise ValueError(f"--train-sample is for tokfx run, not tokfx {command}")
    if opts.format and command == "count":
        raise ValueError("--format is for tokfx run and tokfx encode --output-dir, not tokfx count")
    if opts.shuffle_seed is not None:
        _check_shuffle(command, opts)
    output = OutputDir(opts.output, command) if command in OURS else None
    if output:
        output.check()
    encoding = encoding_of(command, opts)
    opts.input = _inputs(command, opts)
    local = options.view_as(StandardOptions).runner == DEFAULT_RUNNER
    p = beam.Pipeline(runner=local_runner(options) if local else None, options=options)
    try:
        # Checks the settings and plans the reads before the output directory is created or
        # claimed: a refused run leaves no directory and deletes nothing.
        built = BUILDERS[command](p, opts, encoding)
        with output.lock() if output else nullcontext():
            if output:
                output.prepare(built.config, opts.overwrite)
            result = _run_pipeline(p, command, opts, output, built)
    finally:
        # Beam removes the pipeline's local temp folder in a run that starts only.
        shutil.rmtree(p.local_tempdir, ignore_errors=True)
    counters = _counters(result)
    counts = _totals(command, opts, counters, built.plan)
    if not opts.quiet:
        print(summary(counters, counts, time.perf_counter() - start, _written(command, opts, counts), command,
                      COUNTING in built.passes) + "; " + _peak_memory(), file=sys.stderr)
    return counters
