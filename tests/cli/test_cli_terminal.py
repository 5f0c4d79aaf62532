"""What the `tokfx` commands show a user on the terminal: one line per error, before any
expensive work where it can be checked first; a warning line when training ends short; Beam's
start-up chatter only with --verbose; Ctrl-C as one line and exit 130."""
import os
import random
import signal
import string
import subprocess
import time

import pytest

from pipeline_corpus import TOKFX, run_tokfx, stderr_lines

# Beam's lines that say nothing about a run (beam_jobs.logs); each appeared in every run.
CHATTER = ("apitools not found", "Logging handler created", "No semi_persistent_directory",
           "Discarding unparseable args")
TWO_WORKERS = ("--direct_num_workers=2", "--direct_running_mode=multi_processing")


@pytest.fixture
def small_txt(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text("hello world<|endoftext|>a second document\n")
    return path


def _one_error_line(result, expected: str) -> None:
    assert result.returncode == 2, result.stderr
    assert stderr_lines(result.stderr) == [f"tokfx: error: {expected}"]


def test_a_pipeline_run_with_two_workers_shows_tokfx_lines_only(tmp_path):
    result = run_tokfx("run", "--output", tmp_path / "out", "--vocab-size", "300", *TWO_WORKERS, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = stderr_lines(result.stderr)
    assert not [line for line in lines if any(c in line for c in CHATTER)]
    # The workers' progress lines come through, in tokfx's format.
    assert sum(line.startswith("tokfx: counted task") for line in lines) == 4
    assert sum(line.startswith("tokfx: task ") and " done: " in line for line in lines) == 4
    assert not [line for line in lines if line.startswith(("INFO:", "WARNING:"))], lines


def test_bad_input_in_a_worker_process_is_one_line(tmp_path):
    # Beam's workers log and print the failed bundle's traceback (beam_jobs.logs, beam_jobs.worker):
    # some 160 lines before the launcher's own line.
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a cat"}\n{"text": bad}\n')
    for command in (("run", "--vocab-size", "300"), ("count",)):
        _one_error_line(run_tokfx(*command, "--input", bad, "--output", tmp_path / command[0], *TWO_WORKERS,
                                  cwd=tmp_path),
                        f"{bad}:2: not JSON (Expecting value)")


def test_quiet_is_quiet_and_verbose_shows_beams_lines(tmp_path):
    quiet = run_tokfx("run", "-q", "--output", tmp_path / "q", "--vocab-size", "300", *TWO_WORKERS, cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""
    verbose = run_tokfx("run", "--verbose", "--output", tmp_path / "v", "--vocab-size", "300", *TWO_WORKERS,
                        cwd=tmp_path)
    assert verbose.returncode == 0, verbose.stderr
    assert "Logging handler created" in verbose.stderr  # a worker's start-up line, Beam's own
    assert "tokfx: counted task 1 of 4" in verbose.stderr


def test_no_temp_folder_is_left(tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    result = subprocess.run([TOKFX, "run", "-q", "--output", str(tmp_path / "out"), "--vocab-size", "300",
                             *TWO_WORKERS], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                            env={**os.environ, "TMPDIR": str(temp)})
    assert result.returncode == 0, result.stderr
    assert list(temp.iterdir()) == []


def test_an_unknown_option_is_named_as_typed(tmp_path):
    _one_error_line(run_tokfx("run", "--output-dir", tmp_path / "x", cwd=tmp_path),
                    "unknown option(s): --output-dir (tokfx run --help lists them)")


def test_an_output_that_is_a_file_is_refused_before_reading(tmp_path, small_txt):
    afile = tmp_path / "afile"
    afile.write_text("mine")
    # Before reading: the corpus pattern matches nothing, which would be the error otherwise.
    _one_error_line(run_tokfx("run", "--input", tmp_path / "none-*.txt", "--output", afile, cwd=tmp_path),
                    f"--output {afile}: exists and is not a directory")
    _one_error_line(run_tokfx("train", tmp_path / "missing.txt", "-o", afile, cwd=tmp_path),
                    f"-o {afile}: exists and is not a directory")
    tok = tmp_path / "tok"
    assert run_tokfx("train", small_txt, "-o", tok, "--vocab-size", "260", "-q", cwd=tmp_path).returncode == 0
    _one_error_line(run_tokfx("encode", tok, "--input", small_txt, "--output-dir", afile, cwd=tmp_path),
                    f"--output-dir {afile}: exists and is not a directory")
    _one_error_line(run_tokfx("train", small_txt, "-o", afile / "tok", cwd=tmp_path),
                    f"-o {afile / 'tok'}: {afile} is not a directory")
    assert afile.read_text() == "mine"


def test_an_input_directory_is_refused_naming_a_pattern(tmp_path, small_txt):
    _one_error_line(run_tokfx("run", "--input", tmp_path, "--output", tmp_path / "out", cwd=tmp_path),
                    f"{tmp_path}: a directory: give a pattern of its files, e.g. --input '{tmp_path}/*.jsonl.zst'")
    _one_error_line(run_tokfx("train", tmp_path, cwd=tmp_path), f"{tmp_path}: not a file")


def test_training_that_ends_short_says_why(tmp_path):
    # One pre-token, "abc": two merges (ab, abc), so 256 bytes + 2 + the special token.
    small_txt = tmp_path / "abc.txt"
    small_txt.write_text("abc<|endoftext|>abc")
    expected = "tokfx: warning: bpe: no pair left to merge: vocabulary 259 of the 32,000 asked for"
    trained = run_tokfx("train", small_txt, "-o", tmp_path / "tok", "--vocab-size", "32000", "-q", cwd=tmp_path)
    assert trained.returncode == 0 and stderr_lines(trained.stderr) == [expected]
    ran = run_tokfx("run", "--input", small_txt, "--output", tmp_path / "out", "--vocab-size", "32000", "-q",
                    cwd=tmp_path)
    assert ran.returncode == 0 and stderr_lines(ran.stderr) == [expected]


def test_ctrl_c_in_training_is_one_line_and_exit_130(tmp_path):
    rng = random.Random(0)
    corpus = tmp_path / "words.txt"
    corpus.write_text(" ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 12)))
                               for _ in range(50_000)))
    # SaGe trains for many seconds on this; Ctrl-C comes once counting is done.
    proc = subprocess.Popen([TOKFX, "train", str(corpus), "-o", str(tmp_path / "tok"), "--vocab-size", "3000",
                             "--algorithm", "sage", "--processes", "1"], cwd=tmp_path, stderr=subprocess.PIPE,
                            text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if "distinct pre-tokens" in line:
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    lines += proc.stderr.readlines()
    assert proc.wait(timeout=60) == 130, "".join(lines)
    assert stderr_lines("".join(lines))[-1] == "tokfx: interrupted"
    assert "Traceback" not in "".join(lines)
