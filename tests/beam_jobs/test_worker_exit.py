"""A local worker process that exits stops the run: before, Beam's FnApiRunner waited for its
answers for ever, and `tokfx encode --output-dir` with multi_processing workers started in a
source folder without built extensions hung (beam_jobs.local_workers)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import beam_jobs
import tokfx

EOT = "<|endoftext|>"


def test_a_worker_that_cannot_import_tokfx_fails_the_run_in_one_line(tmp_path):
    # The worker's working directory holds tokfx's source without its compiled cores, which
    # Python puts first on the worker's path; the launcher (-P) keeps its own off it.
    source = tmp_path / "checkout"
    shutil.copytree(Path(tokfx.__file__).parent, source / "tokfx",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    tokfx.train(["the cat sat on the mat"] * 3, vocab_size=260, special_tokens=[EOT]).save(tmp_path / "tok")
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text(json.dumps({"text": "the cat sat on the mat"}) + "\n")
    path = os.pathsep.join(dict.fromkeys(str(Path(m.__file__).parents[1]) for m in (tokfx, beam_jobs)))
    result = subprocess.run(
        [sys.executable, "-P", "-m", "tokfx.cli", "encode", str(tmp_path / "tok"), str(corpus),
         "--output-dir", str(tmp_path / "out"), "--direct_num_workers=1", "--direct_running_mode=multi_processing"],
        cwd=source, env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, timeout=180)
    lines = [line for line in result.stderr.splitlines() if line.startswith("tokfx: error: ")]
    assert result.returncode == 2, result.stderr
    assert lines[-1] == ("tokfx: error: a worker process exited with status 1 before the run ended"
                         " (its own error, if it wrote one, is above)"), result.stderr
    assert lines[0].startswith("tokfx: error: a worker process cannot import tokfx: No module named 'tokfx._")
    assert "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "out" / "manifest.json").exists()
