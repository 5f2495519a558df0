#include "eval_kernels.h"
