"""The source distribution: what Beam's --setup_file builds and installs on every Dataflow
worker must carry the Cython sources and compile them."""
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
