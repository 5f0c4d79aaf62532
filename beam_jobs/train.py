"""TrainVocab: the counted pre-tokens (and, for SaGe's context="line", the counted lines;
beam_jobs.count.Counted) -> a trained tokenizer, saved to a directory.

Runs in one reducer, which loads the counts from their files, in key order: the trainer sees
the same input whatever order the workers delivered them in. Emits the tokenizer as a
TokenizerFile, for the steps after it.
"""
from __future__ import annotations

import logging
import tempfile
import time
import warnings
from pathlib import Path

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics

from tokfx.formats.tokfx_json import TOKFX_JSON
from tokfx.models.training import train
from beam_jobs.count import Counted
from beam_jobs.files import publish, sha256
from beam_jobs.records import TokenizerFile

log = logging.getLogger(__name__)


def _train_and_save(counted: Counted, output_dir: str, settings: dict, lines: Counted | None = None):
    start = time.perf_counter()
    counts = counted.load()  # in key order, whatever order the workers delivered the parts in
    lines = lines.load() if lines is not None else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tokenizer = train(counts, lines=lines, **settings)
    for warning in caught:  # on a worker too, where a warning would go to its stderr unformatted
        log.warning("warning: %s", warning.message)
    file = TokenizerFile.of(tokenizer, save_tokenizer_files(tokenizer, output_dir))
    Metrics.counter("tokfx", "usec_train").inc(int((time.perf_counter() - start) * 1e6))
    return file


def save_tokenizer_files(tokenizer, output_dir: str) -> str:
    """The tokenizer's files (tokfx.json and the other formats that can express it) into
    `output_dir`, which may be on an object store; returns the sha256 of the tokfx.json written
    (tokenizer_hash's, without making its text again)."""
    with tempfile.TemporaryDirectory() as local:
        tokenizer.save(local)
        for path in sorted(Path(local).iterdir()):
            publish(path, FileSystems.join(output_dir, path.name))
        return sha256(str(Path(local) / TOKFX_JSON))


def _train_on_both(both: dict, output_dir: str, settings: dict):
    return _train_and_save(both["counts"], output_dir, settings, both["lines"])


class TrainVocab(beam.PTransform):
    def __init__(self, output_dir: str, keywords: dict, *, progress: bool = False, lines=None):
        """keywords: `tokfx.train`'s (algorithm, vocab_size, special_tokens, ..., the
        algorithm's own params, segmenter; tokfx.cli.flags.training_keywords). lines: with
        context="line", the PCollection of the counted lines (CountTasks)."""
        super().__init__()
        self.output_dir, self.lines = output_dir, lines
        self.settings = {**keywords, "progress": progress}

    def expand(self, counts):
        if self.lines is None:
            return counts | "Train" >> beam.Map(_train_and_save, self.output_dir, self.settings)
        # Both single elements meet in one reducer.
        both = ((counts | "TagCounts" >> beam.Map(lambda c: ("counts", c)),
                 self.lines | "TagLines" >> beam.Map(lambda c: ("lines", c)))
                | "Both" >> beam.Flatten()
                | "Together" >> beam.combiners.ToDict())
        return both | "Train" >> beam.Map(_train_on_both, self.output_dir, self.settings)
