"""The source distribution: what Beam's --setup_file builds and installs on every Dataflow
worker must carry the Cython sources and compile them."""
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(not (ROOT / "setup.py").exists(), reason="needs the source checkout")
def test_sdist_carries_the_cython_sources(tmp_path):
    built = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(tmp_path)], cwd=ROOT,
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    (archive,) = tmp_path.glob("tokfx-*.tar.gz")
    with tarfile.open(archive) as tar:
        names = {Path(name).relative_to(Path(name).parts[0]).as_posix() for name in tar.getnames()
                 if len(Path(name).parts) > 1}
    sources = {p.relative_to(ROOT).as_posix() for pattern in ("*.pyx", "*.pxd", "*.h")
               for p in (ROOT / "ext").glob(pattern)}
    assert sources and sources <= names
    assert {"tokfx/schemas/tokfx.schema.json", "tokfx/data/sample/README.md"} <= names


# PEP 263's source-encoding declaration, which Cython also looks for in a file's first two lines
# (Cython.Utils.detect_opened_file_encoding): a docstring that says "encoding: within" there
# made Cython 3.3.0 refuse to build (`LookupError: unknown encoding: within`).
_ENCODING_DECLARATION = re.compile(r"coding[:=]\s*([-\w.]+)")


def test_no_cython_source_reads_as_declaring_an_encoding():
    sources = sorted(p for pattern in ("*.pyx", "*.pxd") for p in (ROOT / "ext").glob(pattern))
    assert sources
    declaring = [f"{p.name}:{n}: {line.strip()}" for p in sources
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines()[:2], start=1)
                 if _ENCODING_DECLARATION.search(line)]
    assert declaring == []


def test_the_encoding_check_finds_the_line_that_broke_the_build():
    assert _ENCODING_DECLARATION.search('"""Byte-level BPE encoding: within each pre-token, start')


@pytest.mark.skipif(not (ROOT / "pyproject.toml").exists(), reason="needs the source checkout")
def test_the_cython_that_builds_here_is_in_the_pinned_range():
    """The range pyproject.toml pins is the one the tests run with: the Cython installed here
    (which the test extra brings) lies in the build requirement's range."""
    Cython = pytest.importorskip("Cython")
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from packaging.requirements import Requirement  # pytest's own dependency
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    (cython,) = [Requirement(r) for r in requires if Requirement(r).name == "Cython"]
    assert cython.specifier.contains(Cython.__version__), (Cython.__version__, str(cython.specifier))


@pytest.mark.skipif(not (ROOT / "setup.py").exists(), reason="needs the source checkout")
def test_the_source_folder_without_built_extensions_says_how_to_build_them(tmp_path):
    """Python run from a fresh clone's root imports the source folder, which has no compiled
    cores: one line says how to build them, not a bare `No module named 'tokfx._count_table'`."""
    shutil.copytree(ROOT / "tokfx", tmp_path / "tokfx", symlinks=True,
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    imported = subprocess.run([sys.executable, "-c", "import tokfx"], cwd=tmp_path,
                              capture_output=True, text=True)
    assert imported.returncode != 0
    last = imported.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: No module named 'tokfx._"), last
    assert "pip install -e ." in last and "python setup.py build_ext --inplace" in last, last
