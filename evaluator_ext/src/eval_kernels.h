/* Placeholder: the native evaluator kernels (being written). */
#ifndef EVAL_KERNELS_H
#define EVAL_KERNELS_H
#endif
