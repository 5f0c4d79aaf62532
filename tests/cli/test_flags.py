"""The one flag table: the library commands and the Beam pipeline options declare the same flags
the same way, underscore spellings are refused, and --help shows defaults and choices."""
import argparse
import subprocess
import sys
import tempfile

import pytest

from beam_jobs.options import TokfxOptions
from tokfx.cli.flags import COMMAND_FLAGS, FLAGS, TOKENIZER_FILES
from tokfx.cli.main import build_parser, main
from tokfx.models.registry import TRAINERS
from tokfx.segmenters import SEGMENTERS


def _actions(parser: argparse.ArgumentParser) -> dict:
    return {a.option_strings[-1] if a.option_strings else a.dest: a for a in parser._actions}


def _pipeline_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    TokfxOptions._add_argparse_args(parser)
    return parser


def _train_parser() -> argparse.ArgumentParser:
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices["train"]


def test_a_flag_of_train_and_of_the_pipeline_is_one_declaration():
    train, pipeline = _actions(_train_parser()), _actions(_pipeline_parser())
    # --output is a tokenizer directory for train, an output directory or file for the pipeline.
    shared = sorted(set(train) & set(pipeline) - {"-h", "--help", "--output"})
    assert {"--algorithm", "--vocab-size", "--pattern", "--special-token", "--alphabet", "--cjk-groups",
            "--text-field", "--schedule", "--segmenter", "--quiet"} <= set(shared)
    for name in shared:
        a, b = train[name], pipeline[name]
        assert (a.type, a.default, a.choices, a.help, a.nargs, a.dest) == \
            (b.type, b.default, b.choices, b.help, b.nargs, b.dest), name


def test_every_key_of_a_command_is_in_the_table_and_every_flag_is_used():
    used = {key for keys in COMMAND_FLAGS.values() for key in keys}
    assert used == set(FLAGS)


def test_choices_come_from_the_registries():
    for actions in (_actions(_train_parser()), _actions(_pipeline_parser())):
        assert list(actions["--algorithm"].choices) == sorted(TRAINERS)
        assert list(actions["--segmenter"].choices) == list(SEGMENTERS)


@pytest.mark.parametrize("command", [["run"], ["count"], ["train"]])
def test_help_shows_defaults_and_choices(command):
    result = subprocess.run([sys.executable, "-m", "tokfx.cli", *command, "--help"], capture_output=True,
                            text=True, cwd=tempfile.gettempdir())
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())  # argparse wraps lines
    assert "(default: 2000)" in text and "(default: gpt2)" in text
    assert "{" + ",".join(sorted(TRAINERS)) + "}" in text


@pytest.mark.parametrize("argv, right", [
    (["run", "--shard_size", "2G"], "--shard-size"),
    (["run", "--on_error=skip"], "--on-error"),
    (["count", "--vocab_size", "3000"], "--vocab-size"),
    (["train", "--vocab_size", "3000"], "--vocab-size"),
    (["encode", "tok", "--output-dir", "out", "--append_eos"], "--append-eos"),
])
def test_an_underscore_spelling_of_a_tokfx_flag_is_refused(argv, right, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tokfx: error: unknown option") and right in err
    assert not (tmp_path / "tokfx-out").exists()


def test_every_flag_that_takes_a_tokenizer_names_the_files_it_reads():
    takes = [flag for flag in FLAGS.values()
             if flag.name in ("tokenizer", "tokenizer_dir", "tokenizers", "decode_tokenizer")]
    assert len(takes) == 4
    for flag in takes:
        assert TOKENIZER_FILES in flag.help, flag.names
    for kind in ("tokfx.json", "tokenizer.json", ".model", "tekken.json", "rank files"):
        assert kind in TOKENIZER_FILES


@pytest.mark.parametrize("argv, expected", [([], (None, None)), (["--prepend-bos", "--no-append-eos"], (True, False)),
                                            (["--no-prepend-bos", "--append-eos"], (False, True))])
def test_bos_and_eos_are_the_tokenizers_unless_forced(argv, expected):
    # None: not given, so the tokenizer's framing decides (beam_jobs.pipelines.encoding_of).
    options = TokfxOptions(argv)
    assert (options.prepend_bos, options.append_eos) == expected
