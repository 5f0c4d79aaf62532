"""The tokfx pipeline options: every tokfx flag (tokfx.cli.flags, the one table), next to Beam's
own (`--runner`, ...), and the local runner that runs them by default."""
from __future__ import annotations

import argparse
import shlex

from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.portability import python_urns
from apache_beam.runners.portability.fn_api_runner import fn_runner

from tokfx.cli.flags import FLAGS, add_flags
from beam_jobs import local_workers, worker

# The local runner, named: Beam's default (DirectRunner) would first try to download and start
# the Prism runner, and use it when it can, a runner tokfx is never tested on.
DEFAULT_RUNNER = "FnApiRunner"
# Beam's period of the FnApiRunner's time-based flush (fn_api_runner/worker_handlers.py).
_BEAMS_FLUSH_MS = 1000


class TokfxOptions(PipelineOptions):
    @classmethod
    def _add_argparse_args(cls, parser):
        add_flags(parser, "pipeline")


def _option_strings() -> dict[str, bool]:
    """Every option string of the pipeline options, Beam's and tokfx's -> whether it takes a value."""
    found: dict[str, bool] = {}

    def collect(parser) -> None:
        found.update((s, action.nargs != 0) for action in parser._actions for s in action.option_strings)

    PipelineOptions([]).get_all_options(add_extra_args_fn=collect)
    return found


def corpus_arguments(command: str, argv: list[str]) -> list[str]:
    """`argv` with its positional arguments made flags: corpus files, `--input` (Beam's parser
    would drop them with a warning, and the run read the sample corpus instead); the first of
    `tokfx encode`, unless it has --tokenizer, its tokenizer (`tokfx encode TOKENIZER
    --output-dir DIR FILES`, as `tokfx encode TOKENIZER FILES`)."""
    options, tokenizer = _option_strings(), FLAGS["tokenizer"].names[-1]
    flags, positional, i = [], [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            positional += argv[i + 1:]
            break
        if arg.startswith("-") and arg != "-":
            if not arg.startswith("--") and arg not in options:
                # Beam's parser drops an unknown one-dash flag (`-o` for --output) with a warning.
                raise ValueError(f"unknown option {arg} (tokfx {command} --help lists them)")
            flags.append(arg)
            if "=" not in arg and options.get(arg) and i + 1 < len(argv):
                flags.append(argv[i + 1])
                i += 1
        else:
            positional.append(arg)
        i += 1
    if command == "encode" and positional and not any(f.split("=")[0] == tokenizer for f in flags):
        flags.append(f"{tokenizer}={positional.pop(0)}")
    return flags + [f"{FLAGS['input'].names[-1]}={path}" for path in positional]


class _LocalRunner(fn_runner.FnApiRunner):
    """The FnApiRunner, whose multi_processing workers start as `python -m beam_jobs.worker`
    (the same SDK worker, with tokfx's terminal log) instead of Beam's own command, watched
    (beam_jobs.local_workers: a worker that exits stops the run instead of hanging it)."""

    def __init__(self, worker_command: list[str], **kwargs):
        super().__init__(**kwargs)
        self._worker_command = shlex.join(worker_command)

    def run_via_runner_api(self, pipeline_proto, options):
        for environment in pipeline_proto.components.environments.values():
            if environment.urn == python_urns.SUBPROCESS_SDK:
                environment.urn = local_workers.URN
                environment.payload = self._worker_command.encode()
        return super().run_via_runner_api(pipeline_proto, options)


def local_runner(options: PipelineOptions):
    """The FnApiRunner, given the pipeline options to hand its workers (as Beam's DirectRunner
    does when it picks it; by name alone, a multi_processing worker would get none, and so not
    the log levels set for it)."""
    from apache_beam.portability.api import beam_provision_api_pb2
    from apache_beam.runners.portability.fn_api_runner import worker_handlers
    from apache_beam.runners.portability.portable_runner import JobServiceHandle

    # Only Beam's own options, and only those set: the workers' parser knows no tokfx flag (the
    # steps get what they need when the graph is built) and would warn about each one.
    parser = argparse.ArgumentParser()
    TokfxOptions._add_argparse_args(parser)
    ours = {action.dest for action in parser._actions}
    beams = {k: v for k, v in options.get_all_options(drop_default=True).items() if k not in ours}
    encoded = JobServiceHandle.encode_pipeline_options(beams)
    # The runner's time-based flush of the data it sends a worker drops a chunk written while a
    # flush runs (docs/lost_documents.md): send without it. tokfx's stages send no large input
    # anyway; this keeps any other from the race. A value set on purpose (the regression tests
    # shorten it to provoke the race) is left alone.
    if worker_handlers.DATA_BUFFER_TIME_LIMIT_MS == _BEAMS_FLUSH_MS:
        worker_handlers.DATA_BUFFER_TIME_LIMIT_MS = 0
    opts = options.view_as(TokfxOptions)
    return _LocalRunner(worker.command(opts.verbose, opts.quiet), provision_info=fn_runner.ExtendedProvisionInfo(
        beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded)))
