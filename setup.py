"""Declares the compiled modules; all other metadata lives in pyproject.toml.

Set BYTEPAIR_NO_EXTENSIONS=1 to install the pure-Python modules only.

Before compiling, the code-point class table of the compiled splitters is
made with the ``regex`` module of the build environment and written as a C
header (``cython/bytepair/split/_charclasses.h``), so that importing the
package does not scan every code point with ``regex``.
"""
import importlib.util
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
CLASSES_HEADER = os.path.join("cython", "bytepair", "split", "_charclasses.h")


def write_class_table() -> None:
    # Loaded by path: the package cannot be imported before it is built.
    path = os.path.join(HERE, "src", "bytepair", "split", "charclasses.py")
    spec = importlib.util.spec_from_file_location("_bytepair_charclasses", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_header(os.path.join(HERE, CLASSES_HEADER))


# The splitters' `cdef inline` helpers are inlined wherever they are used (GCC
# and Clang): left to itself GCC kept the scanners and UTF-8 decoding as calls
# in the per-piece loop, and splitting alone was 1.1-1.4x slower (benches/split_throughput.py).
ALWAYS_INLINE = [] if sys.platform == "win32" else [("CYTHON_INLINE", "inline __attribute__((always_inline))")]

ext_modules = []
if os.environ.get("BYTEPAIR_NO_EXTENSIONS", "") in ("", "0"):
    from Cython.Build import cythonize

    write_class_table()
    ext_modules = cythonize(
        [
            Extension(
                f"bytepair.{stage}.{name}",
                [f"cython/bytepair/{stage}/{name}.pyx"],
                language="c++",
                extra_compile_args=["-O3", "-std=c++17"],
                depends={"_split": [CLASSES_HEADER],
                         "_spm_loop": ["cython/bytepair/learn/_spm_loop.h"]}.get(name, []),
                define_macros=ALWAYS_INLINE if name == "_split" else [],
            )
            # Each compiled module sits in its pipeline stage, as the Python modules do.
            for stage, name in (("split", "_split"), ("split", "_wordsplit"), ("counts", "_runs"),
                                ("learn", "_engine"), ("learn", "_parity"), ("learn", "_words"),
                                ("learn", "_spm_loop"), ("counts", "_spm_count"),
                                ("model", "_encode"), ("model", "_spm_encode"), ("formats", "_ranks"))
        ],
        include_path=["cython"],
        compiler_directives={"language_level": "3"},
        nthreads=os.cpu_count() or 1,
    )


class ParallelBuild(build_ext):
    """Compiles the modules side by side, one per core (``-j`` still chooses): one after
    the other they took over 4 minutes of a fresh install."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1


setup(ext_modules=ext_modules, cmdclass={"build_ext": ParallelBuild})
