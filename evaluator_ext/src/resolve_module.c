/* CPython glue for re-solving the river: module evaluator_ext._resolve.
 *
 * Buffers, checks and the GIL live here; the kernels (resolve_kernels.c) know nothing of
 * Python. Caller: cbr/cfr/resolve.py, which owns the arrays (numpy) and passes them as
 * buffers; every size, dtype, card and tree link is checked here, so a bad argument raises
 * ValueError instead of crashing. The solve runs without the GIL.
 *
 * A tree is the tuple (kind int8, player int8, child_start int32, n_children int32,
 * child_index int32, stake float64), node 0 the root (see resolve_kernels.h).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

#include "eval_kernels.h"
#include "resolve_kernels.h"

#define MAX_BUFS 16

typedef struct {
    Py_buffer bufs[MAX_BUFS];
    int n;
} views;

static void release(views *v)
{
    for (int i = 0; i < v->n; i++)
        PyBuffer_Release(&v->bufs[i]);
    v->n = 0;
}

/* A C-contiguous view of obj with items of format `format` and `itemsize` bytes, holding
 * `want` items (want < 0: any number, told through *count). NULL with an exception. */
static void *get(views *v, PyObject *obj, char format, Py_ssize_t itemsize, int writable, const char *what,
                 Py_ssize_t want, Py_ssize_t *count)
{
    if (v->n >= MAX_BUFS) {
        PyErr_SetString(PyExc_RuntimeError, "too many buffers");
        return NULL;
    }
    Py_buffer *view = &v->bufs[v->n];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s array", what, writable ? " writable" : "");
        return NULL;
    }
    v->n++;
    const char *fmt = view->format ? view->format : "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@')
        fmt++;
    int ok_format = strlen(fmt) == 1 && (*fmt == format || (format == 'i' && *fmt == 'l' && itemsize == 4));
    if (view->itemsize != itemsize || !ok_format) {
        PyErr_Format(PyExc_ValueError, "%s has the wrong dtype (format %s, item size %zd)", what, fmt, view->itemsize);
        return NULL;
    }
    Py_ssize_t n = view->len / itemsize;
    if (want >= 0 && n != want) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd items, not %zd", what, want, n);
        return NULL;
    }
    if (count)
        *count = n;
    return view->buf;
}

static int board_of(PyObject *obj, uint8_t board[5])
{
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, PyBUF_SIMPLE) < 0)
        return -1;
    int ok = b.len == 5;
    uint64_t seen = 0;
    for (Py_ssize_t i = 0; ok && i < b.len; i++) {
        uint8_t c = ((const uint8_t *)b.buf)[i];
        if (c > 51 || (seen >> c) & 1)
            ok = 0;
        else {
            seen |= UINT64_C(1) << c;
            board[i] = c;
        }
    }
    PyBuffer_Release(&b);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "a river board must be 5 distinct cards 0..51");
        return -1;
    }
    return 0;
}

/* The tree tuple into t; its strategy-table size through *size. 0, or -1 with ValueError. */
static int tree_of(views *v, PyObject *obj, rv_tree *t, int64_t *size)
{
    PyObject *kind, *player, *cs, *nc, *ci, *stake;
    if (!PyTuple_Check(obj) || !PyArg_ParseTuple(obj, "OOOOOO", &kind, &player, &cs, &nc, &ci, &stake)) {
        PyErr_SetString(PyExc_ValueError, "tree must be (kind, player, child_start, n_children, child_index, stake)");
        return -1;
    }
    Py_ssize_t n, m, total;
    if (!(t->kind = get(v, kind, 'b', 1, 0, "kind", -1, &n)))
        return -1;
    if (!(t->player = get(v, player, 'b', 1, 0, "player", n, NULL)) ||
        !(t->child_start = get(v, cs, 'i', 4, 0, "child_start", n, NULL)) ||
        !(t->n_children = get(v, nc, 'i', 4, 0, "n_children", n, NULL)) ||
        !(t->child_index = get(v, ci, 'i', 4, 0, "child_index", -1, &m)) ||
        !(t->stake = get(v, stake, 'd', 8, 0, "stake", n, NULL)))
        return -1;
    if (n < 1 || n > RV_MAX_NODES) {
        PyErr_Format(PyExc_ValueError, "a subgame has 1..%d nodes, not %zd", RV_MAX_NODES, n);
        return -1;
    }
    t->n_nodes = (int)n;
    total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (t->n_children[i] < 0 || t->child_start[i] < 0 || (Py_ssize_t)t->child_start[i] + t->n_children[i] > m) {
            PyErr_Format(PyExc_ValueError, "node %zd's children are outside child_index", i);
            return -1;
        }
        total += t->n_children[i];
    }
    (void)total;
    if (rv_tree_check(t, size) != RV_OK) {
        PyErr_SetString(PyExc_ValueError, "not a subgame tree (kinds, players, children after their parent, "
                                          "one parent each, at most 4 actions, stakes >= 0)");
        return -1;
    }
    return 0;
}

static int status_error(int status)
{
    if (status == RV_ERR_NOMEM)
        PyErr_NoMemory();
    else if (status)
        PyErr_SetString(PyExc_ValueError, "invalid argument to the re-solving kernel");
    return status ? -1 : 0;
}

static PyObject *py_terminal_values(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *board_obj, *reach_obj, *fold_obj, *sd_obj;
    if (!PyArg_ParseTuple(args, "OOOO", &board_obj, &reach_obj, &fold_obj, &sd_obj))
        return NULL;
    uint8_t board[5];
    if (board_of(board_obj, board) < 0)
        return NULL;
    views v = {.n = 0};
    const double *reach = get(&v, reach_obj, 'd', 8, 0, "reach", RV_N_COMBOS, NULL);
    double *fold = reach ? get(&v, fold_obj, 'd', 8, 1, "fold", RV_N_COMBOS, NULL) : NULL;
    double *sd = fold ? get(&v, sd_obj, 'd', 8, 1, "showdown", RV_N_COMBOS, NULL) : NULL;
    int status = 0;
    if (sd) {
        Py_BEGIN_ALLOW_THREADS status = river_terminal_values(board, reach, fold, sd);
        Py_END_ALLOW_THREADS
    }
    release(&v);
    if (!sd || status_error(status))
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_best_response(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree_obj, *board_obj, *strat_obj, *reach_obj, *out_obj;
    int br;
    if (!PyArg_ParseTuple(args, "OOiOOO", &tree_obj, &board_obj, &br, &strat_obj, &reach_obj, &out_obj))
        return NULL;
    uint8_t board[5];
    if (board_of(board_obj, board) < 0)
        return NULL;
    if (br < 0 || br > 1) {
        PyErr_SetString(PyExc_ValueError, "br_player must be 0 or 1");
        return NULL;
    }
    views v = {.n = 0};
    rv_tree t;
    int64_t size;
    int ok = tree_of(&v, tree_obj, &t, &size) == 0;
    const double *strat = ok ? get(&v, strat_obj, 'd', 8, 0, "strategy", (Py_ssize_t)size, NULL) : NULL;
    const double *reach = strat ? get(&v, reach_obj, 'd', 8, 0, "reach", RV_N_COMBOS, NULL) : NULL;
    double *out = reach ? get(&v, out_obj, 'd', 8, 1, "out", RV_N_COMBOS, NULL) : NULL;
    int status = 0;
    if (out) {
        Py_BEGIN_ALLOW_THREADS status = rv_best_response(&t, board, br, strat, reach, out);
        Py_END_ALLOW_THREADS
    }
    release(&v);
    if (!out || status_error(status))
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_profile_values(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree_obj, *board_obj, *strat_obj, *r0_obj, *r1_obj, *o0_obj, *o1_obj;
    if (!PyArg_ParseTuple(args, "OOOOOOO", &tree_obj, &board_obj, &strat_obj, &r0_obj, &r1_obj, &o0_obj, &o1_obj))
        return NULL;
    uint8_t board[5];
    if (board_of(board_obj, board) < 0)
        return NULL;
    views v = {.n = 0};
    rv_tree t;
    int64_t size;
    int ok = tree_of(&v, tree_obj, &t, &size) == 0;
    const double *strat = ok ? get(&v, strat_obj, 'd', 8, 0, "strategy", (Py_ssize_t)size, NULL) : NULL;
    const double *r0 = strat ? get(&v, r0_obj, 'd', 8, 0, "reach0", RV_N_COMBOS, NULL) : NULL;
    const double *r1 = r0 ? get(&v, r1_obj, 'd', 8, 0, "reach1", RV_N_COMBOS, NULL) : NULL;
    double *o0 = r1 ? get(&v, o0_obj, 'd', 8, 1, "values0", RV_N_COMBOS, NULL) : NULL;
    double *o1 = o0 ? get(&v, o1_obj, 'd', 8, 1, "values1", RV_N_COMBOS, NULL) : NULL;
    int status = 0;
    if (o1) {
        Py_BEGIN_ALLOW_THREADS status = rv_profile_values(&t, board, strat, r0, r1, o0, o1);
        Py_END_ALLOW_THREADS
    }
    release(&v);
    if (!o1 || status_error(status))
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_resolve(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree_obj, *board_obj, *ru_obj, *ro_obj, *ov_obj, *avg_obj, *reg_obj;
    int us, gadget, iterations;
    double budget, mix = 0.0;
    if (!PyArg_ParseTuple(args, "OOiOOOiidOO|d", &tree_obj, &board_obj, &us, &ru_obj, &ro_obj, &ov_obj, &gadget,
                          &iterations, &budget, &avg_obj, &reg_obj, &mix))
        return NULL;
    uint8_t board[5];
    if (board_of(board_obj, board) < 0)
        return NULL;
    if (us < 0 || us > 1 || gadget < RV_GADGET_NONE || gadget > RV_GADGET_MARGIN || iterations < 1 ||
        iterations > 100000000 || !(budget >= 0.0)) {
        PyErr_SetString(PyExc_ValueError, "us is 0 or 1, gadget 0..2, iterations 1..1e8, budget_seconds >= 0");
        return NULL;
    }
    if (!(mix >= 0.0 && mix <= 1.0) || (mix > 0.0 && gadget != RV_GADGET_MARGIN)) {
        PyErr_SetString(PyExc_ValueError, "mix is within 0..1, and above 0 with gadget 2 (max-margin) only");
        return NULL;
    }
    if ((gadget == RV_GADGET_NONE || mix > 0.0) == (ro_obj == Py_None) ||
        (gadget != RV_GADGET_NONE) == (ov_obj == Py_None)) {
        PyErr_SetString(PyExc_ValueError, "gadget 0 needs reach_opp (and no opp_values); a gadget needs opp_values "
                                          "(and reach_opp only with a mix above 0)");
        return NULL;
    }
    views v = {.n = 0};
    rv_tree t;
    int64_t size;
    int ok = tree_of(&v, tree_obj, &t, &size) == 0;
    const double *ru = ok ? get(&v, ru_obj, 'd', 8, 0, "reach_us", RV_N_COMBOS, NULL) : NULL;
    ok = ru != NULL;
    const double *ro = NULL, *ov = NULL;
    if (ok && ro_obj != Py_None)
        ok = (ro = get(&v, ro_obj, 'd', 8, 0, "reach_opp", RV_N_COMBOS, NULL)) != NULL;
    if (ok && ov_obj != Py_None)
        ok = (ov = get(&v, ov_obj, 'd', 8, 0, "opp_values", RV_N_COMBOS, NULL)) != NULL;
    double *avg = ok ? get(&v, avg_obj, 'd', 8, 1, "avg", (Py_ssize_t)size, NULL) : NULL;
    double *reg = avg ? get(&v, reg_obj, 'd', 8, 1, "regret", (Py_ssize_t)size, NULL) : NULL;
    int status = 0, done = 0;
    double bound = 0.0;
    if (reg) {
        Py_BEGIN_ALLOW_THREADS status =
            rv_resolve(&t, board, us, ru, ro, ov, gadget, mix, iterations, budget, avg, reg, &done, &bound);
        Py_END_ALLOW_THREADS
    }
    release(&v);
    if (!reg || status_error(status))
        return NULL;
    return Py_BuildValue("(id)", done, bound);
}

static PyObject *py_normalise(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree_obj, *avg_obj, *reg_obj, *fb_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOOOO", &tree_obj, &avg_obj, &reg_obj, &fb_obj, &out_obj))
        return NULL;
    views v = {.n = 0};
    rv_tree t;
    int64_t size;
    int ok = tree_of(&v, tree_obj, &t, &size) == 0;
    const double *avg = ok ? get(&v, avg_obj, 'd', 8, 0, "avg", (Py_ssize_t)size, NULL) : NULL;
    const double *reg = avg ? get(&v, reg_obj, 'd', 8, 0, "regret", (Py_ssize_t)size, NULL) : NULL;
    const double *fb = reg ? get(&v, fb_obj, 'd', 8, 0, "fallback", (Py_ssize_t)size, NULL) : NULL;
    double *out = fb ? get(&v, out_obj, 'd', 8, 1, "out", (Py_ssize_t)size, NULL) : NULL;
    int status = 0;
    if (out)
        status = rv_normalise(&t, avg, reg, fb, out);
    release(&v);
    if (!out || status_error(status))
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"terminal_values", py_terminal_values, METH_VARARGS,
     "terminal_values(board5, reach f64[1326], fold f64[1326], showdown f64[1326]): river_terminal_values."},
    {"best_response", py_best_response, METH_VARARGS,
     "best_response(tree, board5, br_player, strategy f64, reach f64[1326], out f64[1326]): BR values."},
    {"profile_values", py_profile_values, METH_VARARGS,
     "profile_values(tree, board5, strategy f64, reach0, reach1, values0, values1): both players' values."},
    {"resolve", py_resolve, METH_VARARGS,
     "resolve(tree, board5, us, reach_us, reach_opp|None, opp_values|None, gadget, iterations, budget_seconds, "
     "avg f64, regret f64[, mix]) -> (iterations done, regret bound): CFR+ on the re-solving gadget (mix: the "
     "chance the max-margin gadget's opponent is dealt reach_opp instead)."},
    {"normalise", py_normalise, METH_VARARGS,
     "normalise(tree, avg f64, regret f64, fallback f64, out f64): a strategy from a solve's sums."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "evaluator_ext._resolve",
    "Re-solving the river at decision time: sweeps, best responses, CFR+ with a safe gadget (cbr/cfr/resolve.py).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__resolve(void)
{
    if (ek_init() != EK_OK) {
        PyErr_SetString(PyExc_RuntimeError, "evaluator_ext._resolve: could not build the evaluator's tables");
        return NULL;
    }
    return PyModule_Create(&moddef);
}
