"""The entry point of `tokfx run`, `tokfx count` and `tokfx encode --output-dir` (the `tokfx`
command hands them here): --help, the run, and errors as one line."""
from __future__ import annotations

import argparse
import re
import sys

from tokfx.cli.files import os_error_line
from tokfx.cli.flags import FLAGS, add_flags
from tokfx.cli.interrupt import interrupted, report_interrupt
from tokfx.cli.pipeline_commands import PIPELINE_HELP
from tokfx.formats.documents import CorpusError
from beam_jobs.logs import show_logs

def _corpus_error(exc: BaseException) -> str | None:
    """The CorpusError message inside an error a Beam runner wrapped (with its traceback)."""
    if isinstance(exc, CorpusError):
        return str(exc).split(" [while running")[0]
    match = re.search(r"CorpusError: (.*?)(?: \[while running|\n|$)", str(exc))
    return match.group(1) if match else None


def run_command(command: str, argv: list[str]) -> int:
    """Run the pipeline of `command`; the exit status."""
    if "-h" in argv or "--help" in argv:
        parser = argparse.ArgumentParser(prog=f"tokfx {command}",
                                         description=PIPELINE_HELP[command] + "; any Beam pipeline option also passes through")
        FLAGS["files"].add_to(parser)  # beam_jobs.options.corpus_arguments reads them, not Beam's parser
        add_flags(parser, "pipeline")
        parser.print_help()
        return 0
    # Read before Beam parses the command line (beam_jobs.logs).
    show_logs(*(any(spelling in argv for spelling in FLAGS[name].names) for name in ("verbose", "quiet")))
    from beam_jobs.pipelines import run  # imports Beam, which logs as it is imported
    from beam_jobs.local_workers import WORKER_EXITED
    try:
        run(command, argv)
    except KeyboardInterrupt as exc:
        return report_interrupt(exc)
    except OSError as exc:
        print(f"tokfx: error: {os_error_line(exc)}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"tokfx: error: {_corpus_error(exc) or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a runner's wrapper around a worker's error
        if interrupted(exc):  # Ctrl-C reached a worker first
            return report_interrupt(exc)
        message = _corpus_error(exc) or (str(exc) if str(exc).startswith(WORKER_EXITED) else None)
        if message is None:
            raise
        print(f"tokfx: error: {message}", file=sys.stderr)
        return 2
    return 0
