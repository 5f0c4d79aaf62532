"""EvalHeldOut: the held-out documents -> the trained tokenizer's eval report in one directory.

Runs in one reducer over all held-out documents (a small share of the corpus), in id order;
writes what `tokfx eval` writes (tokfx.eval.report), figures only if matplotlib is installed.
"""
from __future__ import annotations

import tempfile

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from tokfx.eval.report import evaluate, write_report
from beam_jobs.files import publish


def _evaluate(docs: list[tuple[str, str]], tokenizer_file, output_dir: str, name: str) -> list[str]:
    if not docs:  # a small corpus may hold out no document at all: nothing to report
        return []
    report = evaluate({name: tokenizer_file.load()},
                      (text for _, text in sorted(docs)))
    written = []
    with tempfile.TemporaryDirectory() as local:
        for path in write_report(report, local):
            destination = FileSystems.join(output_dir, path.name)
            publish(path, destination)
            written.append(destination)
    return written


class EvalHeldOut(beam.PTransform):
    """Documents -> one element: the paths of the report's files, once written (none when no
    document is held out)."""

    def __init__(self, tokenizer_file, output_dir: str, name: str):
        """tokenizer_file: the PCollection of the one TokenizerFile; its report is `name`'s."""
        super().__init__()
        self.tokenizer_file, self.output_dir, self.name = tokenizer_file, output_dir, name

    def expand(self, documents):
        return (documents
                | "IdAndText" >> beam.Map(lambda doc: (doc.id, doc.text))
                | "All" >> beam.combiners.ToList()
                | "Evaluate" >> beam.Map(_evaluate, beam.pvalue.AsSingleton(self.tokenizer_file),
                                         self.output_dir, self.name))
