"""Build the native hand evaluator as a plain setuptools Extension (CPython C API)."""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "evaluator_ext._native",
            sources=[
                "evaluator_ext/src/eval_kernels.c",
                "evaluator_ext/src/nativemodule.c",
                "evaluator_ext/src/abstraction_kernels.c",
            ],
            include_dirs=["evaluator_ext/src"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra"],
            optional=False,
        )
    ]
)
