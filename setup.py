"""Build the native hand evaluator, the CFR solver and the retrieval kernel as plain setuptools Extensions (CPython C API)."""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "evaluator_ext._native",
            sources=[
                "evaluator_ext/src/eval_kernels.c",
                "evaluator_ext/src/nativemodule.c",
                "evaluator_ext/src/abstraction_kernels.c",
                "evaluator_ext/src/range_kernels.c",
            ],
            depends=["evaluator_ext/src/eval_kernels.h", "evaluator_ext/src/abstraction_kernels.h",
                     "evaluator_ext/src/range_kernels.h", "evaluator_ext/src/xoshiro.h"],
            include_dirs=["evaluator_ext/src"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra"],
            optional=False,
        ),
        # CFR+ over the abstract game of cbr.abstraction (issue 10): cbr/cfr/solver.py
        Extension(
            "evaluator_ext._cfr",
            sources=[
                "evaluator_ext/src/cfr_kernels.c",
                "evaluator_ext/src/cfr_module.c",
            ],
            depends=["evaluator_ext/src/cfr_kernels.h"],  # so the sdist carries the header
            include_dirs=["evaluator_ext/src"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra"],
            optional=False,
        ),
        # imperfect-recall buckets and external-sampling MCCFR on real cards (issue 18): cbr/cfr/mccfr.py
        Extension(
            "evaluator_ext._mccfr",
            sources=[
                "evaluator_ext/src/eval_kernels.c",
                "evaluator_ext/src/mccfr_kernels.c",
                "evaluator_ext/src/mccfr_module.c",
            ],
            depends=["evaluator_ext/src/eval_kernels.h", "evaluator_ext/src/mccfr_kernels.h",
                     "evaluator_ext/src/xoshiro.h"],
            include_dirs=["evaluator_ext/src"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-pthread"],
            extra_link_args=["-pthread"],
            optional=False,
        ),
        # exact retrieval aggregates over a grouped case layout: cbr/retrieval/aggregate.py
        Extension(
            "evaluator_ext._retrieval",
            sources=[
                "evaluator_ext/src/retrieval_kernels.c",
                "evaluator_ext/src/retrieval_module.c",
            ],
            depends=["evaluator_ext/src/retrieval_kernels.h"],
            include_dirs=["evaluator_ext/src"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-ffp-contract=off"],
            optional=False,
        ),
    ]
)
