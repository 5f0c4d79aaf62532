"""The run's progress on the launcher's terminal (beam_jobs.progress): lines while a task is
read, not only when it ends; each pass's documents, bytes and MB/s; the time left of the run from
the read plan's bytes; a resumed run's estimate from what is left, not from what was kept. The
expected numbers are worked out by hand from the reports written here."""
import json
import logging
import re
import time

import pytest

from beam_jobs import progress
from beam_jobs.plan import ReadPlan, ReadTask
from beam_jobs.progress import COUNTING, ENCODING, RunProgress
from conftest import INSTALLED_ONLY, installed_outside_the_source_tree
from tokfx.cli.main import main
from tokfx.formats.readers import ReadOptions


def _plan(*sizes: int) -> ReadPlan:
    return ReadPlan(tuple(ReadTask(k, f"/corpus/part-{k}.jsonl.zst", size, None) for k, size in enumerate(sizes)),
                    (), ReadOptions())


def _report(directory, name, started, updated, documents, tasks):
    (directory / f"{name}-{started}-{updated}.json").write_text(json.dumps(
        {"started": started, "updated": updated, "documents": documents, "tasks": tasks}))


def test_the_counting_pass_estimates_the_whole_run(tmp_path):
    # Two tasks of 1 MB; 1.5 MB read in 10 s: 0.15 MB/s; left: 0.5 MB of counting (3.3 s), and
    # then the 2 MB of the encoding pass, at least as slow: 2.5 MB at 0.15 MB/s = 16.7 s.
    _report(tmp_path, COUNTING, 100, 110, 1234, {"0": [1.0, 0.0], "1": [0.5, 0.0]})
    lines = RunProgress(str(tmp_path), [COUNTING, ENCODING], _plan(1_000_000, 1_000_000)).lines()
    assert lines == ["counting: 1.5 of 2.0 MB (75 %), 1,234 documents, 1 of 2 tasks, 0.1 MB/s;"
                     " about 3 s left of counting, over 17 s of the run (training not included)"]


def test_the_reports_of_several_workers_are_summed(tmp_path):
    # Two workers since t=100, one task each: 3 MB and 1 MB of 4 MB by t=120: 0.2 MB/s, 0 MB left of counting.
    _report(tmp_path, COUNTING, 100, 120, 10, {"0": [1.0, 0.0]})
    _report(tmp_path, COUNTING, 101, 118, 5, {"1": [0.5, 0.0]})
    lines = RunProgress(str(tmp_path), [COUNTING], _plan(3_000_000, 2_000_000)).lines()
    assert lines == ["counting: 4.0 of 5.0 MB (80 %), 15 documents, 1 of 2 tasks, 0.2 MB/s; about 5 s left of the run"]


def test_after_a_resume_the_estimate_is_the_rest_at_the_rate_of_what_was_read(tmp_path):
    # Task 0 (8 MB) kept from an earlier run, task 1 (2 MB) half read in 5 s: 0.2 MB/s over what
    # was read; 1 MB left: 5 s (counting the kept 8 MB in the rate would say 0.1 s).
    _report(tmp_path, ENCODING, 200, 205, 50, {"0": [1.0, 1.0], "1": [0.5, 0.0]})
    run = RunProgress(str(tmp_path), [ENCODING], _plan(8_000_000, 2_000_000))
    assert run.lines() == ["encoding: 9.0 of 10.0 MB (90 %), 50 documents, 1 of 2 tasks, 0.2 MB/s,"
                           " 8.0 MB kept from an earlier run; about 5 s left of the run"]


def test_a_pass_that_ends_says_so_once_and_the_next_one_goes_on(tmp_path):
    _report(tmp_path, COUNTING, 100, 104, 300, {"0": [1.0, 0.0], "1": [1.0, 0.0]})
    run = RunProgress(str(tmp_path), [COUNTING, ENCODING], _plan(1_000_000, 1_000_000))
    assert run.lines() == ["counting done: 300 documents, 2.0 MB, in 4 s (0.5 MB/s)"]
    assert run.lines() == []  # training: nothing new to say
    _report(tmp_path, ENCODING, 110, 110, 0, {"0": [0.0, 0.0]})
    assert run.lines() == ["encoding: 0.0 of 2.0 MB (0 %), 0 documents, 0 of 2 tasks, 0.0 MB/s"]


@pytest.fixture
def progress_lines(monkeypatch):
    """The launcher's progress lines, every 0.05 s instead of every 10 s."""
    monkeypatch.setattr(progress, "EVERY", 0.05)
    lines = []

    class Collect(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    logger = logging.getLogger("beam_jobs.progress")
    handler = Collect()
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    yield lines
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_a_run_shorter_than_a_second_is_not_said_to_be_over_under_one(tmp_path):
    # 1 MB of 2 read in 0.1 s: 10 MB/s; 0.1 s left of counting, 0.3 s of the run at least.
    _report(tmp_path, COUNTING, 100, 100.1, 20, {"0": [1.0, 0.0]})
    lines = RunProgress(str(tmp_path), [COUNTING, ENCODING], _plan(1_000_000, 1_000_000)).lines()
    assert lines == ["counting: 1.0 of 2.0 MB (50 %), 20 documents, 1 of 2 tasks, 10.0 MB/s;"
                     " under a second left of counting, over 0.3 s of the run (training not included)"]


def test_a_run_reports_while_its_one_task_is_read(tmp_path, progress_lines, monkeypatch):
    """One file, one task: lines while it is read (before, a task said nothing until it was done,
    and nothing at all came in a run shorter than 10 s). A fast machine reads the 4 MB in a few
    hundredths of a second, quicker than the launcher's thread looks: so a pass that has read
    1,000 of the 2,500 documents waits, once past the reports' interval (its report is then
    written, the task part read) and once for the launcher to see that report."""
    document = progress.PassReporter.document
    held = set()

    def held_in_the_middle(reporter, count=1):
        hold = reporter.documents >= 1000 and reporter not in held
        if hold:
            held.add(reporter)
            time.sleep(2 * reporter.every / 5)
        document(reporter, count)
        if hold:
            time.sleep(6 * progress.EVERY)

    monkeypatch.setattr(progress.PassReporter, "document", held_in_the_middle)
    text = "It was the best of times, it was the worst of times, it was the age of wisdom. " * 20
    path = tmp_path / "one.jsonl"
    path.write_text("".join(json.dumps({"text": f"{i} {text}"}) + "\n" for i in range(2500)))
    assert main(["run", "--input", str(path), "--output", str(tmp_path / "out"), "--vocab-size", "300"]) == 0
    assert progress_lines[0] == "counting: starting (1 task, 4.0 MB)"
    counting = [line for line in progress_lines if line.startswith("counting: ") and " %)" in line]
    passing = counting + [line for line in progress_lines if line.startswith("encoding: ") and " %)" in line]
    share = [int(re.search(r"\((\d+) %\)", line).group(1)) for line in passing]
    assert any(0 < s < 100 for s in share), progress_lines  # inside the one task
    assert all("of the run (training not included)" in line for line in counting if " MB/s;" in line)
    assert [line for line in progress_lines if line.startswith("counting done: 2,500 documents")]
    assert [line for line in progress_lines if line.startswith(("encoding: ", "encoding done: "))]
    assert not (tmp_path / "out" / "progress").exists()  # removed with the run


def test_the_reports_of_two_worker_processes_make_the_runs_line(tmp_path, progress_lines, monkeypatch):
    """Each worker process writes its own report; the launcher's line is their sum."""
    if not installed_outside_the_source_tree():
        pytest.skip(INSTALLED_ONLY)
    monkeypatch.chdir(tmp_path)  # the workers must not find the source tree in their cwd
    (tmp_path / "in").mkdir()
    for k in range(4):
        (tmp_path / "in" / f"part-{k}.jsonl").write_text("".join(
            json.dumps({"text": f"part {k} document {i}: " + "a few words of text " * 30}) + "\n" for i in range(300)))
    assert main(["run", "--input", str(tmp_path / "in" / "*.jsonl"), "--output", str(tmp_path / "out"),
                 "--vocab-size", "300", "--direct_num_workers=2", "--direct_running_mode=multi_processing"]) == 0
    assert [line for line in progress_lines if line.startswith("counting done: 1,200 documents")], progress_lines
    assert [line for line in progress_lines if line.startswith("encoding done: 1,200 documents")], progress_lines


def test_an_encode_only_run_says_nothing_of_pre_tokens(tmp_path, capsys):
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": f"document {i} of a few words"}) + "\n" for i in range(50)))
    assert main(["train", str(path), "-o", str(tmp_path / "tok"), "--vocab-size", "270", "-q"]) == 0
    capsys.readouterr()
    assert main(["encode", str(tmp_path / "tok"), "--output-dir", str(tmp_path / "out"), "--input", str(path)]) == 0
    err = capsys.readouterr().err
    assert "read 50 documents: 50 written" in err
    assert "pre-tokens" not in err
