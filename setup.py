"""Declares the compiled engine; all other metadata lives in pyproject.toml.

Set BYTEPAIR_NO_EXTENSIONS=1 to install the pure-Python engine only.
"""
import os

from setuptools import Extension, setup

ext_modules = []
if os.environ.get("BYTEPAIR_NO_EXTENSIONS", "") in ("", "0"):
    from Cython.Build import cythonize

    ext_modules = cythonize(
        [
            Extension(
                f"bytepair.{stage}.{name}",
                [f"cython/bytepair/{stage}/{name}.pyx"],
                language="c++",
                extra_compile_args=["-O3", "-std=c++17"],
            )
            # Each compiled module sits in its pipeline stage, as the Python modules do.
            for stage, name in (("split", "_split"), ("split", "_wordsplit"), ("learn", "_engine"),
                                ("learn", "_words"), ("model", "_encode"))
        ],
        include_path=["cython"],
        compiler_directives={"language_level": "3"},
    )

setup(ext_modules=ext_modules)
