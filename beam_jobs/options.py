"""The tokfx pipeline options: every tokfx flag (tokfx.cli.flags, the one table), next to Beam's
own (`--runner`, ...)."""
from __future__ import annotations

from apache_beam.options.pipeline_options import PipelineOptions

from tokfx.cli.flags import add_flags

# Named so that Beam never falls back to its default, which first tries to download a runner.
DEFAULT_RUNNER = "DirectRunner"


class TokfxOptions(PipelineOptions):
    @classmethod
    def _add_argparse_args(cls, parser):
        add_flags(parser, "pipeline")
