"""README.md's table of the PathPiece paper's 18 variants: each `tokfx train` command, as
written (with a small vocabulary on a small corpus), runs and writes the tokenizer it names."""
import json
import re
import shlex
from pathlib import Path

import pytest

from conftest import fixture_path
from pipeline_corpus import run_tokfx

README = Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| (\d+) \|.*\| `(tokfx train [^`]+)` \|$")
ROWS = [(int(m[1]), m[2]) for line in README.read_text(encoding="utf-8").splitlines() if (m := ROW.match(line))]
CONSTRUCTORS = {int(m[1]): line.split("|")[2].strip()  # rank -> the vocabulary constructor column
                for line in README.read_text(encoding="utf-8").splitlines() if (m := ROW.match(line))}


def test_the_table_has_the_papers_18_rows_in_rank_order():
    assert [rank for rank, _ in ROWS] == list(range(1, 19))


@pytest.mark.parametrize("rank, command", ROWS, ids=[f"row{rank}" for rank, _ in ROWS])
def test_a_tables_command_builds_the_tokenizer_it_names(rank, command, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(fixture_path("corpus.en").read_bytes())
    given = {"corpus.txt": str(corpus), "out/": str(tmp_path / "out"), "32768": "1000"}
    argv = [given.get(arg, arg) for arg in shlex.split(command)[1:]]
    result = run_tokfx(*argv, "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "out" / "tokfx.json").read_text(encoding="utf-8"))

    def flag(name):
        return argv[argv.index(name) + 1]

    assert (doc["algorithm"], doc["pattern"]["name"], doc.get("segmenter", {"name": "bpe"})["name"]) == \
        (flag("--algorithm"), flag("--pattern"), flag("--segmenter"))
    if "--initial-vocab" in argv and flag("--initial-vocab") != "bpe":
        assert doc["params"]["initial_vocab"] == flag("--initial-vocab")
    # PathPieceR rows build with random ties (the constructor column), recorded with the seed.
    if CONSTRUCTORS[rank] == "PathPieceR":
        assert (flag("--tie-break"), doc["params"]["tie_break"], doc["params"]["seed"]) == ("random", "random", 0)
    else:
        assert "tie_break" not in doc["params"]
