"""The `tokfx` command: run, count, train, encode, inspect, eval, shards.

`run`, `count` and `encode --output-dir` are Beam pipelines (beam_jobs, imported only when one
of them is asked for); every Beam flag (`--runner`, `--direct_num_workers`, ...) passes through
to them. Every tokfx flag is declared once, in tokfx.cli.flags.
"""
from __future__ import annotations

import argparse
import sys
import warnings

from tokfx.cli import encode, evaluate, inspect, shards, train
from tokfx.cli.files import os_error_line
from tokfx.cli.interrupt import report_interrupt, sigterm_raises
from tokfx.cli.flags import COMMAND_FLAGS, add_flags, refuse_underscore_spellings
from tokfx.cli.pipeline_commands import PIPELINE_HELP, pipeline_argv
from tokfx.formats.documents import CorpusError

LIBRARY_COMMANDS = (train, encode, inspect, evaluate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tokfx", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "count"):  # listed for --help; main() hands them to beam_jobs unparsed
        sub.add_parser(name, help=PIPELINE_HELP[name])
    for command in LIBRARY_COMMANDS:
        p = sub.add_parser(command.NAME, help=command.HELP, description=command.HELP, allow_abbrev=False)
        add_flags(p, command.NAME)
        p.set_defaults(run=command.run)
    shards.add_subcommands(sub.add_parser(shards.NAME, help=shards.HELP, description=shards.HELP))
    return parser


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one line (Python's own format adds the file, line and source of the call)."""
    print(f"tokfx: warning: {message}", file=sys.stderr if file is None else file)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    warnings.showwarning = _warning_line
    with sigterm_raises():
        try:
            return _command(argv)
        except KeyboardInterrupt as exc:  # also while Beam is being imported
            return report_interrupt(exc)


def _command(argv: list[str]) -> int:
    pipeline = pipeline_argv(argv)
    if pipeline is not None:
        from beam_jobs.main import run_command  # Beam is imported only for the pipeline commands
        return run_command(*pipeline)
    try:
        if argv[:1] and argv[0] in COMMAND_FLAGS:
            refuse_underscore_spellings(argv[1:], argv[0])
        args = build_parser().parse_args(argv)
        status = args.run(args)  # a command that found something wrong returns its status
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a file that cannot be read or written
        print(f"tokfx: error: {os_error_line(exc)}", file=sys.stderr)
        return 2
    except (ValueError, CorpusError) as exc:
        print(f"tokfx: error: {exc}", file=sys.stderr)
        return 2
    return status or 0
