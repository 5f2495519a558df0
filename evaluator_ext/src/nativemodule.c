#define PY_SSIZE_T_CLEAN
#include <Python.h>
static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_native", "placeholder", -1, NULL};
PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&moddef); }
