"""Build the native hand evaluator, the CFR solvers, the river re-solver and the retrieval kernel as plain setuptools Extensions (CPython C API)."""
import subprocess
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SRC = "evaluator_ext/src"


class BuildExt(build_ext):
    """Build the evaluator's lookup tables before the extensions: compile and run
    gen_eval_tables.c (with eval_tables.c, the table code the extensions link too), which
    writes eval_tables_data.h into the build directory; the extensions compile it in, so
    importing the evaluator does not spend ~10 ms building them."""

    def build_extensions(self) -> None:
        work = Path(self.build_temp) / "eval_tables"
        work.mkdir(parents=True, exist_ok=True)
        objects = self.compiler.compile([f"{SRC}/gen_eval_tables.c", f"{SRC}/eval_tables.c"], output_dir=str(work),
                                        include_dirs=[SRC], extra_postargs=["-O2", "-std=c11"])
        self.compiler.link_executable(objects, "gen_eval_tables", output_dir=str(work))
        program = self.compiler.executable_filename("gen_eval_tables", output_dir=str(work))
        subprocess.run([program, str(work / "eval_tables_data.h")], check=True)
        for ext in self.extensions:
            ext.include_dirs.append(str(work))
        super().build_extensions()


TABLE_SOURCES = [f"{SRC}/eval_tables.h", f"{SRC}/gen_eval_tables.c"]

setup(
    cmdclass={"build_ext": BuildExt},
    ext_modules=[
        Extension(
            "evaluator_ext._native",
            sources=[
                "evaluator_ext/src/eval_kernels.c",
                "evaluator_ext/src/eval_tables.c",
                "evaluator_ext/src/nativemodule.c",
                "evaluator_ext/src/abstraction_kernels.c",
                "evaluator_ext/src/range_kernels.c",
            ],
            depends=["evaluator_ext/src/eval_kernels.h", "evaluator_ext/src/abstraction_kernels.h",
                     "evaluator_ext/src/range_kernels.h", "evaluator_ext/src/xoshiro.h", *TABLE_SOURCES],
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
                "evaluator_ext/src/eval_tables.c",
                "evaluator_ext/src/mccfr_kernels.c",
                "evaluator_ext/src/rnr_kernels.c",
                "evaluator_ext/src/pcs_kernels.c",
                "evaluator_ext/src/sweep_kernels.c",
                "evaluator_ext/src/mccfr_module.c",
            ],
            depends=["evaluator_ext/src/eval_kernels.h", "evaluator_ext/src/mccfr_kernels.h",
                     "evaluator_ext/src/rnr_kernels.h", "evaluator_ext/src/pcs_kernels.h", "evaluator_ext/src/mccfr_walk.h",
                     "evaluator_ext/src/xoshiro.h", "evaluator_ext/src/sweep_kernels.h",
                     *TABLE_SOURCES],
            include_dirs=["evaluator_ext/src"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-pthread"],
            extra_link_args=["-pthread"],
            optional=False,
        ),
        # re-solving the river at decision time (issue 37): cbr/cfr/resolve.py
        Extension(
            "evaluator_ext._resolve",
            sources=[
                "evaluator_ext/src/eval_kernels.c",
                "evaluator_ext/src/eval_tables.c",
                "evaluator_ext/src/resolve_kernels.c",
                "evaluator_ext/src/sweep_kernels.c",
                "evaluator_ext/src/resolve_module.c",
            ],
            depends=["evaluator_ext/src/eval_kernels.h", "evaluator_ext/src/resolve_kernels.h",
                     "evaluator_ext/src/sweep_kernels.h", *TABLE_SOURCES],
            include_dirs=["evaluator_ext/src"],
            # no fused multiply-adds: a solve's tables are fixed bit for bit (tests/cfr/test_resolve.py)
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-ffp-contract=off"],
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
