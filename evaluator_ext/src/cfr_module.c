/* CPython glue for the CFR solver: module evaluator_ext._cfr.
 *
 * Buffers, checks, the GIL and errors live here; the kernels (cfr_kernels.c) know nothing
 * of Python. The caller is cbr/cfr/solver.py, which builds the arrays; this layer still
 * checks every size, index and dtype so that a bad tree or game raises ValueError instead
 * of crashing. Iterations run without the GIL, one at a time: between two iterations the
 * GIL is taken back to check for signals, so Ctrl-C stops a run within one iteration, and
 * the number of finished iterations is written to a caller's counter as it goes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "cfr_kernels.h"

#define N_TREE 8
#define N_GAME 9 /* prior, trans x3, cls x4, equity */

typedef struct {
    cfr_game g;
    Py_buffer bufs[N_TREE + N_GAME];
    int n_bufs;
    int64_t table_len; /* entries the offsets address */
} parsed;

static void release(parsed *p)
{
    for (int i = 0; i < p->n_bufs; i++)
        PyBuffer_Release(&p->bufs[i]);
    p->n_bufs = 0;
}

/* Get a C-contiguous 1-D view of `obj` with items of `format` (a struct code) and size
 * `itemsize`; its element count goes to *count. Returns the data or NULL with an error. */
static void *get_array(parsed *p, PyObject *obj, const char *formats, Py_ssize_t itemsize, int writable,
                       const char *what, Py_ssize_t *count)
{
    Py_buffer *view = &p->bufs[p->n_bufs];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s array", what, writable ? " writable" : "");
        return NULL;
    }
    p->n_bufs++;
    const char *fmt = view->format ? view->format : "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@')
        fmt++;
    if (view->itemsize != itemsize || strlen(fmt) != 1 || !strchr(formats, *fmt)) {
        PyErr_Format(PyExc_ValueError, "%s has the wrong dtype (format %s, item size %zd)", what, fmt,
                     view->itemsize);
        return NULL;
    }
    *count = view->len / itemsize;
    return view->buf;
}

static int fail(const char *message, int node)
{
    PyErr_Format(PyExc_ValueError, "cfr: bad betting tree at node %d: %s", node, message);
    return -1;
}

/* Parse (tree tuple, game tuple, table length) into p->g and check it; 0 or -1. */
static int parse(PyObject *tree, PyObject *game, int64_t table_len, parsed *p)
{
    memset(p, 0, sizeof(*p));
    p->table_len = table_len;
    cfr_game *g = &p->g;
    if (!PyTuple_Check(tree) || PyTuple_GET_SIZE(tree) != N_TREE) {
        PyErr_SetString(PyExc_TypeError, "tree must be a tuple (kind, player, street, child_start, n_children, "
                                         "child_index, stake, offset)");
        return -1;
    }
    if (!PyTuple_Check(game) || PyTuple_GET_SIZE(game) != N_GAME + 1) {
        PyErr_SetString(PyExc_TypeError, "game must be a tuple (n_buckets, prior, trans0..2, cls0..3, equity)");
        return -1;
    }
    Py_ssize_t n, m, k;
    if (!(g->kind = get_array(p, PyTuple_GET_ITEM(tree, 0), "bB", 1, 0, "kind", &n)))
        return -1;
    if (n < 1 || n > INT32_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "cfr: the tree needs at least one node");
        return -1;
    }
    g->n_nodes = (int32_t)n;
    if (!(g->player = get_array(p, PyTuple_GET_ITEM(tree, 1), "bB", 1, 0, "player", &k)) || k != n)
        goto size;
    if (!(g->street = get_array(p, PyTuple_GET_ITEM(tree, 2), "bB", 1, 0, "street", &k)) || k != n)
        goto size;
    if (!(g->child_start = get_array(p, PyTuple_GET_ITEM(tree, 3), "iil", 4, 0, "child_start", &k)) || k != n)
        goto size;
    if (!(g->n_children = get_array(p, PyTuple_GET_ITEM(tree, 4), "iil", 4, 0, "n_children", &k)) || k != n)
        goto size;
    if (!(g->child_index = get_array(p, PyTuple_GET_ITEM(tree, 5), "iil", 4, 0, "child_index", &m)))
        goto size;
    if (!(g->stake = get_array(p, PyTuple_GET_ITEM(tree, 6), "d", 8, 0, "stake", &k)) || k != n)
        goto size;
    if (!(g->offset = get_array(p, PyTuple_GET_ITEM(tree, 7), "qlL", 8, 0, "offset", &k)) || k != n)
        goto size;

    long nb = PyLong_AsLong(PyTuple_GET_ITEM(game, 0));
    if (nb == -1 && PyErr_Occurred())
        return -1;
    if (nb < 1 || nb > 170) { /* 170**4 sequences still index with int64 */
        PyErr_Format(PyExc_ValueError, "cfr: n_buckets must be 1..170, got %ld", nb);
        return -1;
    }
    g->nb = (int32_t)nb;
    g->seqs[0] = nb;
    for (int s = 1; s < 4; s++)
        g->seqs[s] = g->seqs[s - 1] * nb;
    if (!(g->prior = get_array(p, PyTuple_GET_ITEM(game, 1), "d", 8, 0, "prior", &k)) || k != nb)
        goto game_size;
    for (int s = 0; s < 3; s++)
        if (!(g->trans[s] = get_array(p, PyTuple_GET_ITEM(game, 2 + s), "d", 8, 0, "transitions", &k)) ||
            k != g->seqs[s] * nb)
            goto game_size;
    Py_ssize_t c3;
    if (!(g->cls[3] = get_array(p, PyTuple_GET_ITEM(game, 8), "d", 8, 0, "classes", &c3)))
        return -1;
    if (c3 == 0 || c3 % g->seqs[3] != 0 || c3 / g->seqs[3] > 100000)
        goto game_size;
    g->nc = (int32_t)(c3 / g->seqs[3]);
    for (int s = 0; s < 3; s++)
        if (!(g->cls[s] = get_array(p, PyTuple_GET_ITEM(game, 5 + s), "d", 8, 0, "classes", &k)) ||
            k != g->seqs[s] * g->nc)
            goto game_size;
    if (!(g->equity = get_array(p, PyTuple_GET_ITEM(game, 9), "d", 8, 0, "equity", &k)) ||
        k != (Py_ssize_t)g->nc * g->nc)
        goto game_size;

    for (int32_t i = 0; i < g->n_nodes; i++) {
        int kind = g->kind[i], s = g->street[i], nch = g->n_children[i], first = g->child_start[i];
        if (kind < 0 || kind > 3)
            return fail("unknown node kind", i);
        if (s < 0 || s > 3)
            return fail("street out of 0..3", i);
        if (nch < 0 || nch > 64 || first < 0 || (int64_t)first + nch > m)
            return fail("children out of range", i);
        for (int c = 0; c < nch; c++) {
            int32_t child = g->child_index[first + c];
            if (child <= i || child >= g->n_nodes)
                return fail("a child must come after its parent", i);
            int cs = g->street[child];
            if (kind == CFR_CHANCE ? cs != s + 1 : cs != s)
                return fail("a child is on the wrong street", i);
        }
        switch (kind) {
        case CFR_DECISION:
            if (g->player[i] != 0 && g->player[i] != 1)
                return fail("a decision node's player must be 0 or 1", i);
            if (nch < 1)
                return fail("a decision node needs actions", i);
            if (g->offset[i] < 0 || g->offset[i] + g->seqs[s] * nch > table_len)
                return fail("its table lies outside the regret array", i);
            break;
        case CFR_CHANCE:
            if (nch != 1 || s == 3)
                return fail("a chance node has one child and comes before the river", i);
            break;
        case CFR_FOLD:
            if (g->player[i] != 0 && g->player[i] != 1)
                return fail("a fold node names the folder, 0 or 1", i);
            /* fall through */
        default:
            if (nch != 0)
                return fail("a terminal has no children", i);
        }
    }
    if (g->kind[0] == CFR_FOLD || g->street[0] != 0)
        return fail("the root must be a pre-flop node", 0);
    return 0;
size:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "cfr: the tree's arrays must all have one entry per node");
    return -1;
game_size:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "cfr: the bucket game's arrays have the wrong sizes");
    return -1;
}

static double *workspace(const cfr_game *g)
{
    int64_t need = cfr_workspace_size(g);
    if (need < 0)
        return NULL;
    need += 3 * (int64_t)g->nb + 16;
    return malloc(sizeof(double) * (size_t)need);
}

PyDoc_STRVAR(iterate_doc,
             "iterate(tree, game, regret, avg, t0, n, done) -> None\n\n"
             "Run CFR+ iterations t0 .. t0+n-1 (t0 >= 1) on float64 tables regret and avg, in place;\n"
             "done[0] (an int64 array) counts the finished ones. Stops with KeyboardInterrupt\n"
             "between iterations at Ctrl-C.");

static PyObject *py_iterate(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree, *game, *regret_obj, *avg_obj, *done_obj;
    long long t0, n;
    if (!PyArg_ParseTuple(args, "OOOOLLO:iterate", &tree, &game, &regret_obj, &avg_obj, &t0, &n, &done_obj))
        return NULL;
    if (t0 < 1 || n < 0 || t0 > (1LL << 40)) {
        PyErr_SetString(PyExc_ValueError, "iterate: t0 must be >= 1 and n >= 0");
        return NULL;
    }
    parsed p;
    Py_buffer rb = {0}, ab = {0}, db = {0};
    double *ws = NULL;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(regret_obj, &rb, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0 ||
        PyObject_GetBuffer(avg_obj, &ab, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0 ||
        PyObject_GetBuffer(done_obj, &db, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "iterate: regret, avg and done must be writable C-contiguous arrays");
        goto done_buffers;
    }
    if (rb.itemsize != 8 || ab.itemsize != 8 || !rb.format || !ab.format || strchr(rb.format, 'd') == NULL ||
        strchr(ab.format, 'd') == NULL || rb.len != ab.len) {
        PyErr_SetString(PyExc_ValueError, "iterate: regret and avg must be float64 arrays of the same size");
        goto done_buffers;
    }
    if (db.itemsize != 8 || db.len < 8) {
        PyErr_SetString(PyExc_ValueError, "iterate: done must be an int64 array of length >= 1");
        goto done_buffers;
    }
    if (parse(tree, game, rb.len / 8, &p) < 0)
        goto done_parsed;
    ws = workspace(&p.g);
    if (!ws) {
        PyErr_NoMemory();
        goto done_parsed;
    }
    int64_t *done = (int64_t *)db.buf;
    *done = 0;
    for (long long i = 0; i < n; i++) {
        if (PyErr_CheckSignals() < 0)
            goto done_parsed;
        Py_BEGIN_ALLOW_THREADS
        cfr_iterate(&p.g, (double *)rb.buf, (double *)ab.buf, t0 + i, ws);
        Py_END_ALLOW_THREADS
        *done = i + 1;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done_parsed:
    release(&p);
done_buffers:
    free(ws);
    if (rb.obj)
        PyBuffer_Release(&rb);
    if (ab.obj)
        PyBuffer_Release(&ab);
    if (db.obj)
        PyBuffer_Release(&db);
    return result;
}

PyDoc_STRVAR(value_doc,
             "value(tree, game, avg, player, best_response) -> float\n\n"
             "Expected chips per game of `player` when it plays a best response (or its own\n"
             "average strategy) against the opponent's average strategy in avg (float64).");

static PyObject *py_value(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree, *game, *avg_obj;
    int player, best;
    if (!PyArg_ParseTuple(args, "OOOip:value", &tree, &game, &avg_obj, &player, &best))
        return NULL;
    if (player != 0 && player != 1) {
        PyErr_SetString(PyExc_ValueError, "value: player must be 0 or 1");
        return NULL;
    }
    Py_buffer ab = {0};
    parsed p;
    double *ws = NULL, value = 0.0;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(avg_obj, &ab, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "value: avg must be a C-contiguous float64 array");
        return NULL;
    }
    if (ab.itemsize != 8 || !ab.format || strchr(ab.format, 'd') == NULL) {
        PyErr_SetString(PyExc_ValueError, "value: avg must be a float64 array");
        PyBuffer_Release(&ab);
        return NULL;
    }
    if (parse(tree, game, ab.len / 8, &p) < 0)
        goto out;
    ws = workspace(&p.g);
    if (!ws) {
        PyErr_NoMemory();
        goto out;
    }
    Py_BEGIN_ALLOW_THREADS
    cfr_value(&p.g, (const double *)ab.buf, player, best, ws, &value);
    Py_END_ALLOW_THREADS
    result = PyFloat_FromDouble(value);
out:
    release(&p);
    free(ws);
    PyBuffer_Release(&ab);
    return result;
}

static PyMethodDef methods[] = {
    {"iterate", py_iterate, METH_VARARGS, iterate_doc},
    {"value", py_value, METH_VARARGS, value_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT,
    "evaluator_ext._cfr",
    "Vector-form CFR+ and exact best response over a bucket game (see cbr/cfr/solver.py).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__cfr(void)
{
    PyObject *m = PyModule_Create(&moddef);
    if (!m)
        return NULL;
    if (PyModule_AddIntConstant(m, "ABI", 2) < 0) { /* 2: float64 tables */
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
