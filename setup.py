"""Build the Cython hot loops in ext/ into tokfx._<name> extension modules."""
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

HERE = Path(__file__).parent

extensions = [
    Extension(
        f"tokfx.{pyx.stem}",
        [str(pyx.relative_to(HERE))],
        language="c++",
        # fp-contract off: no fused multiply-add, so float sums (the SaGe loss) equal their
        # pure-Python twins to the last bit on every platform (clang contracts by default).
        extra_compile_args=["-O3", "-std=c++17", "-ffp-contract=off"],
    )
    for pyx in sorted((HERE / "ext").glob("*.pyx"))
]

setup(
    packages=find_packages(include=["tokfx", "tokfx.*", "beam_jobs"]) + ["tokfx.schemas"],
    # schemas/ is language-neutral and lives at the top level; tokfx/schemas links to it so
    # that it ships inside the package and Tokenizer.load finds it wherever tokfx is installed.
    package_data={"tokfx.schemas": ["*.json"], "tokfx.data": ["sample/*"]},
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False,
                             "cdivision": True, "initializedcheck": False},
    ),
)
