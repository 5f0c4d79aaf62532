"""The import contracts of pyproject.toml ([tool.importlinter]) hold for the installed package,
and importing any tokfx module leaves Beam unimported (docs/architecture.md, Layers)."""
from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from importlinter.api import read_configuration

import tokfx

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

# Imports the modules one by one in a fresh interpreter (-I: the working directory, and so the
# source folder, stays off sys.path) and prints the first whose import brought Beam in, or null.
BEAM_PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
    if any(m.split(".")[0] in ("apache_beam", "beam_jobs") for m in sys.modules):
        print(json.dumps(name))
        break
else:
    print(json.dumps(None))
"""


def test_import_contracts_hold(tmp_path):
    # From an empty folder: lint-imports puts its working directory first on sys.path, and the
    # installed package, not the source folder, is what users import.
    result = subprocess.run([str(LINT_IMPORTS), "--config", str(PYPROJECT), "--no-cache", "--no-logo"],
                            cwd=tmp_path, capture_output=True, text=True)
    contracts = len(read_configuration(str(PYPROJECT))["contracts_options"])
    assert result.returncode == 0 and f"Contracts: {contracts} kept, 0 broken." in result.stdout, \
        result.stdout + result.stderr


def first_importing_beam(modules: list[str]) -> str | None:
    result = subprocess.run([sys.executable, "-I", "-c", BEAM_PROBE, *modules], capture_output=True, text=True)
    assert result.returncode == 0, f"importing failed:\n{result.stderr}"
    return json.loads(result.stdout)


def tokfx_modules() -> list[str]:
    """Every module of the installed tokfx, the compiled ones included; not tokfx.cli.__main__,
    which runs the command when imported."""
    return [m.name for m in pkgutil.walk_packages(tokfx.__path__, "tokfx.") if not m.name.endswith(".__main__")]


def test_the_probe_sees_beam():
    assert first_importing_beam(["tokfx.alphabet", "beam_jobs.main", "tokfx.tokenizer"]) == "beam_jobs.main"


def test_no_tokfx_module_imports_beam():
    modules = tokfx_modules()
    assert {"tokfx.cli.main", "tokfx.models.training", "tokfx._bpe_train", "tokfx.reference.sage_loss"} <= set(modules)
    assert first_importing_beam(modules) is None


# Trains Unigram over characters from texts in memory and counts a .txt file (the library's
# counting, its text reader), then prints which of the packages training never needs got
# imported: pyarrow is for Parquet (and the JSONL reader's kept fields), 28 MB at import;
# hashlib (OpenSSL) names tokenizers by their sha256, 3.5 MB; numpy is for the shard writers,
# SaGe and the evaluations, 15 MB (bench/README.md, Unigram vs sentencepiece, peak memory).
NOT_FOR_TRAINING = ("pyarrow", "hashlib", "_hashlib", "numpy")
PROBE = """
import json, sys
import tokfx, tokfx.counting
path = sys.argv[1]
with open(path, "w", encoding="utf-8") as f:
    f.write("the cat sat on the mat\\n" * 50 + "猫坐在垫子上\\n" * 50)
counts = tokfx.counting.count_pretokens_file(path, pattern="sentencepiece")
lines = [line for line in open(path, encoding="utf-8")]
tokfx.train(lines, algorithm="unigram", vocab_size=300, alphabet="chars", pattern="sentencepiece")
assert counts
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in %r)))
""" % (NOT_FOR_TRAINING,)


def modules_after(probe: str, tmp_path: Path) -> list[str]:
    """The modules of NOT_FOR_TRAINING imported by `probe`, run in a fresh interpreter that
    imports the tokfx these tests import (the installed one, or the source folder with its
    built extensions), from an empty folder."""
    env = {**os.environ, "PYTHONPATH": str(Path(tokfx.__file__).resolve().parents[1])}
    result = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "corpus.txt")], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, f"the probe failed:\n{result.stderr}"
    return json.loads(result.stdout)


@pytest.mark.parametrize("module", NOT_FOR_TRAINING)
def test_the_probe_sees_each_module(module, tmp_path):
    assert module in modules_after(PROBE.replace("import tokfx,", f"import {module}, tokfx,"), tmp_path)


def test_training_over_characters_leaves_pyarrow_hashlib_and_numpy_unimported(tmp_path):
    assert modules_after(PROBE, tmp_path) == []


def test_importing_tokfx_leaves_them_unimported(tmp_path):
    probe = "import json, sys\nimport tokfx\n" + PROBE[PROBE.index("print("):]
    assert modules_after(probe, tmp_path) == []
    assert "numpy" in modules_after(probe.replace("import tokfx", "import numpy, tokfx"), tmp_path)
