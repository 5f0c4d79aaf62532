"""The `tokfx` command: run, count, train, encode, inspect, eval.

`run`, `count` and `encode --output-dir` are Beam pipelines (beam_jobs, imported only when one
of them is asked for); every Beam flag (`--runner`, `--direct_num_workers`, ...) passes through
to them. Every tokfx flag is declared once, in tokfx.cli.flags.
"""
from __future__ import annotations

import argparse
import sys

from tokfx.cli import encode, evaluate, inspect, train
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
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    pipeline = pipeline_argv(argv)
    if pipeline is not None:
        from beam_jobs.main import run_command  # Beam is imported only for the pipeline commands
        return run_command(*pipeline)
    try:
        if argv[:1] and argv[0] in COMMAND_FLAGS:
            refuse_underscore_spellings(argv[1:], argv[0])
        args = build_parser().parse_args(argv)
        args.run(args)
    except (ValueError, FileNotFoundError, CorpusError) as exc:
        print(f"tokfx: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return 0
