/* CPython glue for the imperfect-recall abstraction and MCCFR: module evaluator_ext._mccfr.
 *
 * Buffers, checks and the GIL live here; the kernels (mccfr_kernels.c) know nothing of
 * Python. Callers: cbr/abstraction/distribution.py and cbr/cfr/mccfr.py, which own the
 * arrays (numpy) and pass them as buffers; every size, dtype, card and index is checked
 * here so that a bad argument raises ValueError instead of crashing. Long calls run
 * without the GIL (the callers make them in chunks and check for Ctrl-C between).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

#include "mccfr_kernels.h"
#include "pcs_kernels.h"
#include "rnr_kernels.h"

#define MAX_BUFS 24 /* a run with an OCHS river holds 17: two tables, 7 card tables, 8 tree arrays */

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

/* A C-contiguous view of obj with items of one of `formats` and `itemsize` bytes. */
static void *get(views *v, PyObject *obj, const char *formats, Py_ssize_t itemsize, int writable, const char *what,
                 Py_ssize_t *count)
{
    if (v->n >= MAX_BUFS) {
        PyErr_Format(PyExc_RuntimeError, "%s: more than %d buffers in one call", what, MAX_BUFS);
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
    if (view->itemsize != itemsize || strlen(fmt) != 1 || !strchr(formats, *fmt)) {
        PyErr_Format(PyExc_ValueError, "%s has the wrong dtype (format %s, item size %zd)", what, fmt, view->itemsize);
        return NULL;
    }
    *count = view->len / itemsize;
    return view->buf;
}

/* Cards from a bytes-like of n distinct cards 0..51 into out; 0 or -1 with ValueError. */
static int cards_of(PyObject *obj, int lo, int hi, uint8_t *out, int *n_out, const char *what)
{
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, PyBUF_SIMPLE) < 0)
        return -1;
    int ok = b.len >= lo && b.len <= hi;
    uint64_t seen = 0;
    for (Py_ssize_t i = 0; ok && i < b.len; i++) {
        uint8_t c = ((const uint8_t *)b.buf)[i];
        if (c > 51 || (seen >> c) & 1)
            ok = 0;
        else {
            seen |= UINT64_C(1) << c;
            out[i] = c;
        }
    }
    *n_out = (int)b.len;
    PyBuffer_Release(&b);
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "%s must be %d to %d distinct cards 0..51", what, lo, hi);
        return -1;
    }
    return 0;
}

static PyObject *py_river_hs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *board_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OO", &board_obj, &out_obj))
        return NULL;
    uint8_t board[5];
    int n;
    if (cards_of(board_obj, 5, 5, board, &n, "a river board") < 0)
        return NULL;
    views v = {.n = 0};
    Py_ssize_t count;
    double *out = get(&v, out_obj, "d", 8, 1, "out", &count);
    if (out && count != MC_N_COMBOS) {
        PyErr_SetString(PyExc_ValueError, "out must hold 1326 float64");
        out = NULL;
    }
    if (out) {
        Py_BEGIN_ALLOW_THREADS mc_river_hs_all(board, out);
        Py_END_ALLOW_THREADS
    }
    release(&v);
    if (!out)
        return NULL;
    Py_RETURN_NONE;
}

/* The opponent clusters (uint8[1326]) and the wanted count k of an OCHS call: the data or
 * NULL with ValueError. */
static const uint8_t *clusters_of(views *v, PyObject *obj, int k)
{
    Py_ssize_t n;
    const uint8_t *cl = get(v, obj, "B", 1, 0, "clusters", &n);
    if (!cl)
        return NULL;
    if (n != MC_N_COMBOS || k < 1 || k > MC_MAX_CLUSTERS) {
        PyErr_Format(PyExc_ValueError, "clusters must be 1326 uint8 and k 1..%d", MC_MAX_CLUSTERS);
        return NULL;
    }
    for (int c = 0; c < MC_N_COMBOS; c++)
        if (cl[c] >= k) {
            PyErr_Format(PyExc_ValueError, "clusters must be 0..k-1 (k = %d), combo %d has %d", k, c, cl[c]);
            return NULL;
        }
    return cl;
}

static PyObject *py_river_ochs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *board_obj, *cl_obj, *out_obj;
    int k;
    if (!PyArg_ParseTuple(args, "OOiO", &board_obj, &cl_obj, &k, &out_obj))
        return NULL;
    uint8_t board[5];
    int n;
    if (cards_of(board_obj, 5, 5, board, &n, "a river board") < 0)
        return NULL;
    views v = {.n = 0};
    Py_ssize_t count;
    const uint8_t *cl = clusters_of(&v, cl_obj, k);
    double *out = cl ? get(&v, out_obj, "d", 8, 1, "out", &count) : NULL;
    if (out && count != (Py_ssize_t)MC_N_COMBOS * k) {
        PyErr_SetString(PyExc_ValueError, "out must hold 1326 x k float64");
        out = NULL;
    }
    if (out) {
        Py_BEGIN_ALLOW_THREADS mc_river_ochs_all(board, cl, k, out);
        Py_END_ALLOW_THREADS
    }
    release(&v);
    if (!out)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_river_ochs_one(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *hole_obj, *board_obj, *cl_obj, *out_obj;
    int k;
    if (!PyArg_ParseTuple(args, "OOOiO", &hole_obj, &board_obj, &cl_obj, &k, &out_obj))
        return NULL;
    uint8_t hole[2], board[5];
    int nh, n;
    if (cards_of(hole_obj, 2, 2, hole, &nh, "a hole") < 0 || cards_of(board_obj, 5, 5, board, &n, "a river board") < 0)
        return NULL;
    for (int i = 0; i < 5; i++)
        if (board[i] == hole[0] || board[i] == hole[1])
            return PyErr_Format(PyExc_ValueError, "the hole and the board share a card");
    views v = {.n = 0};
    Py_ssize_t count;
    const uint8_t *cl = clusters_of(&v, cl_obj, k);
    double *out = cl ? get(&v, out_obj, "d", 8, 1, "out", &count) : NULL;
    if (out && count != k) {
        PyErr_SetString(PyExc_ValueError, "out must hold k float64");
        out = NULL;
    }
    if (out)
        mc_river_ochs_one(hole, board, cl, k, out);
    release(&v);
    if (!out)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_river_ochs_buckets(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *board_obj, *cl_obj, *cent_obj, *out_obj;
    int k;
    if (!PyArg_ParseTuple(args, "OOiOO", &board_obj, &cl_obj, &k, &cent_obj, &out_obj))
        return NULL;
    uint8_t board[5];
    int n;
    if (cards_of(board_obj, 5, 5, board, &n, "a river board") < 0)
        return NULL;
    views v = {.n = 0};
    Py_ssize_t nc, no;
    const uint8_t *cl = clusters_of(&v, cl_obj, k);
    const double *cent = cl ? get(&v, cent_obj, "d", 8, 0, "centroids", &nc) : NULL;
    uint16_t *out = cent ? get(&v, out_obj, "H", 2, 1, "out", &no) : NULL;
    int status = MC_ERR_ARGUMENT;
    if (out && nc % k == 0 && nc > 0 && nc / k <= 65535 && no == MC_N_COMBOS) {
        Py_BEGIN_ALLOW_THREADS status = mc_river_ochs_buckets(board, cl, k, cent, (int)(nc / k), out);
        Py_END_ALLOW_THREADS
    } else if (out) {
        PyErr_SetString(PyExc_ValueError, "centroids must be n x k float64 (n <= 65535), out 1326 uint16");
    }
    release(&v);
    if (PyErr_Occurred())
        return NULL;
    if (status == MC_ERR_NOMEM)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* A flop or turn board and a bin count from a call's arguments; 0 or -1 with ValueError. */
static int board_and_bins(PyObject *board_obj, int n_bins, uint8_t board[5], int *n)
{
    if (cards_of(board_obj, 3, 4, board, n, "a flop or turn board") < 0)
        return -1;
    if (n_bins < 1 || n_bins > 1000) {
        PyErr_Format(PyExc_ValueError, "n_bins must be 1..1000, got %d", n_bins);
        return -1;
    }
    return 0;
}

static PyObject *py_board_histograms(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *board_obj, *out_obj;
    int n_bins;
    if (!PyArg_ParseTuple(args, "OiO", &board_obj, &n_bins, &out_obj))
        return NULL;
    uint8_t board[5];
    int n;
    if (board_and_bins(board_obj, n_bins, board, &n) < 0)
        return NULL;
    views v = {.n = 0};
    Py_ssize_t count;
    uint16_t *out = get(&v, out_obj, "H", 2, 1, "out", &count);
    if (out && count != (Py_ssize_t)MC_N_COMBOS * n_bins) {
        PyErr_SetString(PyExc_ValueError, "out must hold 1326 x n_bins uint16");
        out = NULL;
    }
    if (out) {
        Py_BEGIN_ALLOW_THREADS mc_board_histograms(board, n, n_bins, out);
        Py_END_ALLOW_THREADS
    }
    release(&v);
    if (!out)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_board_buckets(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *board_obj, *cent_obj, *out_obj;
    int n_bins;
    if (!PyArg_ParseTuple(args, "OiOO", &board_obj, &n_bins, &cent_obj, &out_obj))
        return NULL;
    uint8_t board[5];
    int n;
    if (board_and_bins(board_obj, n_bins, board, &n) < 0)
        return NULL;
    views v = {.n = 0};
    Py_ssize_t nc, no;
    const float *cent = get(&v, cent_obj, "f", 4, 0, "centroids", &nc);
    uint16_t *out = cent ? get(&v, out_obj, "H", 2, 1, "out", &no) : NULL;
    int status = MC_ERR_ARGUMENT;
    if (out && nc % n_bins == 0 && nc > 0 && nc / n_bins <= 65535 && no == MC_N_COMBOS) {
        int k = (int)(nc / n_bins);
        Py_BEGIN_ALLOW_THREADS status = mc_board_buckets(board, n, n_bins, cent, k, out);
        Py_END_ALLOW_THREADS
    } else if (out) {
        PyErr_SetString(PyExc_ValueError, "centroids must be k x n_bins float32 (k <= 65535), out 1326 uint16");
    }
    release(&v);
    if (PyErr_Occurred())
        return NULL;
    if (status == MC_ERR_NOMEM)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *py_assign_l1(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *pts_obj, *cent_obj, *out_obj, *dist_obj;
    int d;
    if (!PyArg_ParseTuple(args, "OOiOO", &pts_obj, &cent_obj, &d, &out_obj, &dist_obj))
        return NULL;
    if (d < 1)
        return PyErr_Format(PyExc_ValueError, "d must be >= 1, got %d", d);
    views v = {.n = 0};
    Py_ssize_t np_, nc, no, nd = 0;
    const float *pts = get(&v, pts_obj, "f", 4, 0, "points", &np_);
    const float *cent = pts ? get(&v, cent_obj, "f", 4, 0, "centroids", &nc) : NULL;
    int32_t *out = cent ? get(&v, out_obj, "i", 4, 1, "out", &no) : NULL;
    float *dist = NULL;
    if (out && dist_obj != Py_None)
        dist = get(&v, dist_obj, "f", 4, 1, "dist", &nd);
    if (out && !PyErr_Occurred()) {
        int64_t n = np_ / d;
        if (np_ % d || nc % d || nc == 0 || nc / d > INT32_MAX || no != n || (dist && nd != n)) {
            PyErr_SetString(PyExc_ValueError, "points n x d, centroids k x d (k >= 1), out and dist n entries");
        } else {
            Py_BEGIN_ALLOW_THREADS mc_assign_l1(pts, n, cent, (int)(nc / d), d, out, dist);
            Py_END_ALLOW_THREADS
        }
    }
    release(&v);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

#define N_TREE 8

/* tree: (kind, player, street, child_start, n_children, child_index, stake, offset);
 * tables: ((b0, b1, b2, b3), preflop uint8[1326], flop uint16[22100*1326],
 * turn uint16[270725*1326], river_edges float64[b3-1]), or with an OCHS river
 * (..., river_edges float64[0], river_cluster uint8[1326], river_centroids float64[b3*k]);
 * table_len: regret/avg length. */
static int parse_tree(PyObject *tree, int64_t table_len, views *v, mc_game *g);

/* The bucket counts (a 4-tuple, each 1..65535) into g->n_buckets. */
static int parse_buckets(PyObject *nb, mc_game *g)
{
    if (!PyTuple_Check(nb) || PyTuple_GET_SIZE(nb) != 4) {
        PyErr_SetString(PyExc_TypeError, "the bucket counts must be a 4-tuple");
        return -1;
    }
    for (int s = 0; s < 4; s++) {
        long b = PyLong_AsLong(PyTuple_GET_ITEM(nb, s));
        if (b == -1 && PyErr_Occurred())
            return -1;
        if (b < 1 || b > 65535) {
            PyErr_Format(PyExc_ValueError, "mccfr: street %d has %ld buckets (1..65535)", s, b);
            return -1;
        }
        g->n_buckets[s] = (int32_t)b;
    }
    return 0;
}

static int parse_game(PyObject *tree, PyObject *tables, int64_t table_len, views *v, mc_game *g, int check_tables)
{
    memset(g, 0, sizeof(*g));
    if (!PyTuple_Check(tree) || PyTuple_GET_SIZE(tree) != N_TREE || !PyTuple_Check(tables) ||
        (PyTuple_GET_SIZE(tables) != 5 && PyTuple_GET_SIZE(tables) != 7)) {
        PyErr_SetString(PyExc_TypeError, "tree must be an 8-tuple and tables a 5- or 7-tuple (see mccfr_module.c)");
        return -1;
    }
    int ochs = PyTuple_GET_SIZE(tables) == 7;
    if (parse_buckets(PyTuple_GET_ITEM(tables, 0), g) < 0)
        return -1;
    Py_ssize_t np_, nf, nt, ne;
    if (!(g->preflop = get(v, PyTuple_GET_ITEM(tables, 1), "B", 1, 0, "preflop", &np_)) ||
        !(g->flop = get(v, PyTuple_GET_ITEM(tables, 2), "H", 2, 0, "flop", &nf)) ||
        !(g->turn = get(v, PyTuple_GET_ITEM(tables, 3), "H", 2, 0, "turn", &nt)) ||
        !(g->river_edges = get(v, PyTuple_GET_ITEM(tables, 4), "d", 8, 0, "river_edges", &ne)))
        return -1;
    if (np_ != MC_N_COMBOS || nf != (Py_ssize_t)22100 * MC_N_COMBOS || nt != (Py_ssize_t)270725 * MC_N_COMBOS ||
        ne != (ochs ? 0 : g->n_buckets[3] - 1)) {
        PyErr_SetString(PyExc_ValueError, "mccfr: table sizes: preflop 1326, flop 22100x1326, turn 270725x1326, "
                                          "river_edges b3-1 (none with an OCHS river)");
        return -1;
    }
    if (ochs) {
        Py_ssize_t ncl, nce;
        if (!(g->river_cluster = get(v, PyTuple_GET_ITEM(tables, 5), "B", 1, 0, "river_cluster", &ncl)) ||
            !(g->river_centroids = get(v, PyTuple_GET_ITEM(tables, 6), "d", 8, 0, "river_centroids", &nce)))
            return -1;
        Py_ssize_t k = nce / g->n_buckets[3];
        if (ncl != MC_N_COMBOS || nce % g->n_buckets[3] || k < 1 || k > MC_MAX_CLUSTERS) {
            PyErr_Format(PyExc_ValueError, "mccfr: an OCHS river needs 1326 clusters and b3 x k centroids, "
                                           "k 1..%d", MC_MAX_CLUSTERS);
            return -1;
        }
        g->ochs_k = (int32_t)k;
        for (Py_ssize_t i = 0; i < ncl; i++)
            if (g->river_cluster[i] >= k) {
                PyErr_SetString(PyExc_ValueError, "mccfr: an opponent cluster is out of range");
                return -1;
            }
    }
    /* every bucket in range, so that a walk never indexes outside its table */
    for (Py_ssize_t i = 0; check_tables && i < np_; i++)
        if (g->preflop[i] >= g->n_buckets[0]) {
            PyErr_SetString(PyExc_ValueError, "mccfr: a pre-flop class is out of range");
            return -1;
        }
    for (Py_ssize_t i = 0; check_tables && i < nf; i++)
        if (g->flop[i] >= g->n_buckets[1] && g->flop[i] != MC_NO_BUCKET) {
            PyErr_SetString(PyExc_ValueError, "mccfr: a flop bucket is out of range");
            return -1;
        }
    for (Py_ssize_t i = 0; check_tables && i < nt; i++)
        if (g->turn[i] >= g->n_buckets[2] && g->turn[i] != MC_NO_BUCKET) {
            PyErr_SetString(PyExc_ValueError, "mccfr: a turn bucket is out of range");
            return -1;
        }
    return parse_tree(tree, table_len, v, g);
}

/* The betting tree (an N_TREE-tuple) into g, checked: kinds, players, streets, children in
 * order, and every decision node's table inside table_len entries (g->n_buckets set). */
static int parse_tree(PyObject *tree, int64_t table_len, views *v, mc_game *g)
{
    if (!PyTuple_Check(tree) || PyTuple_GET_SIZE(tree) != N_TREE) {
        PyErr_SetString(PyExc_TypeError, "tree must be an 8-tuple (see mccfr_module.c)");
        return -1;
    }
    Py_ssize_t n, k, m;
    if (!(g->kind = get(v, PyTuple_GET_ITEM(tree, 0), "bB", 1, 0, "kind", &n)))
        return -1;
    if (n < 1 || n > INT32_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "mccfr: the tree needs at least one node");
        return -1;
    }
    g->n_nodes = (int32_t)n;
    if (!(g->player = get(v, PyTuple_GET_ITEM(tree, 1), "bB", 1, 0, "player", &k)) || k != n ||
        !(g->street = get(v, PyTuple_GET_ITEM(tree, 2), "bB", 1, 0, "street", &k)) || k != n ||
        !(g->child_start = get(v, PyTuple_GET_ITEM(tree, 3), "iil", 4, 0, "child_start", &k)) || k != n ||
        !(g->n_children = get(v, PyTuple_GET_ITEM(tree, 4), "iil", 4, 0, "n_children", &k)) || k != n ||
        !(g->child_index = get(v, PyTuple_GET_ITEM(tree, 5), "iil", 4, 0, "child_index", &m)) ||
        !(g->stake = get(v, PyTuple_GET_ITEM(tree, 6), "d", 8, 0, "stake", &k)) || k != n ||
        !(g->offset = get(v, PyTuple_GET_ITEM(tree, 7), "qlL", 8, 0, "offset", &k)) || k != n) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "mccfr: the tree's arrays differ in length");
        return -1;
    }
    g->table_len = table_len;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        int kind = g->kind[i];
        if (kind < 0 || kind > 3 || (kind == MC_DECISION && (g->player[i] < 0 || g->player[i] > 1)) ||
            g->street[i] < 0 || g->street[i] > 3 || g->n_children[i] < 0 || g->n_children[i] > 4 ||
            g->child_start[i] < 0 || (int64_t)g->child_start[i] + g->n_children[i] > m) {
            PyErr_Format(PyExc_ValueError, "mccfr: bad betting tree at node %d", i);
            return -1;
        }
        for (int c = 0; c < g->n_children[i]; c++) {
            int32_t child = g->child_index[g->child_start[i] + c];
            if (child <= i || child >= g->n_nodes) {
                PyErr_Format(PyExc_ValueError, "mccfr: node %d has a child out of order", i);
                return -1;
            }
        }
        if ((kind == MC_DECISION && g->n_children[i] < 1) || (kind == MC_CHANCE && g->n_children[i] != 1)) {
            PyErr_Format(PyExc_ValueError, "mccfr: node %d has the wrong number of children", i);
            return -1;
        }
        if (kind == MC_DECISION &&
            (g->offset[i] < 0 ||
             g->offset[i] + (int64_t)g->n_buckets[g->street[i]] * g->n_children[i] > table_len)) {
            PyErr_Format(PyExc_ValueError, "mccfr: node %d's table is outside the arrays", i);
            return -1;
        }
    }
    return 0;
}

static PyObject *py_run(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree, *tables, *reg_obj, *avg_obj;
    long long first, iterations;
    unsigned long long seed;
    int threads;
    if (!PyArg_ParseTuple(args, "OOOOLLKi", &tree, &tables, &reg_obj, &avg_obj, &first, &iterations, &seed,
                          &threads))
        return NULL;
    if (first < 0 || iterations < 0 || threads < 1 || threads > 64)
        return PyErr_Format(PyExc_ValueError, "iterations >= 0 and threads 1..64, got %lld and %d", iterations,
                            threads);
    views v = {.n = 0};
    Py_ssize_t nr, na;
    double *regret = get(&v, reg_obj, "d", 8, 1, "regret", &nr);
    double *avg = regret ? get(&v, avg_obj, "d", 8, 1, "avg", &na) : NULL;
    mc_game g;
    volatile int64_t done = 0;
    if (avg && nr != na)
        PyErr_SetString(PyExc_ValueError, "regret and avg differ in length");
    else if (avg && parse_game(tree, tables, nr, &v, &g, 1) == 0) {
        Py_BEGIN_ALLOW_THREADS mc_run(&g, regret, avg, first, iterations, seed, threads, &done);
        Py_END_ALLOW_THREADS
    }
    release(&v);
    if (PyErr_Occurred())
        return NULL;
    return PyLong_FromLongLong((long long)done);
}

static PyObject *py_run_deals(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree, *nb, *deals_obj, *reg_obj, *avg_obj;
    long long first, iterations;
    unsigned long long seed;
    int threads;
    if (!PyArg_ParseTuple(args, "OOOOOLLKi", &tree, &nb, &deals_obj, &reg_obj, &avg_obj, &first, &iterations, &seed,
                          &threads))
        return NULL;
    if (first < 0 || iterations < 0 || threads < 1 || threads > 64)
        return PyErr_Format(PyExc_ValueError, "iterations >= 0 and threads 1..64, got %lld and %d", iterations,
                            threads);
    views v = {.n = 0};
    Py_ssize_t nr, na, nd = 0;
    mc_game g;
    memset(&g, 0, sizeof g);
    volatile int64_t done = 0;
    double *regret = get(&v, reg_obj, "d", 8, 1, "regret", &nr);
    double *avg = regret ? get(&v, avg_obj, "d", 8, 1, "avg", &na) : NULL;
    const int32_t *deals = avg ? get(&v, deals_obj, "iil", 4, 0, "deals", &nd) : NULL;
    if (deals && nr != na)
        PyErr_SetString(PyExc_ValueError, "regret and avg differ in length");
    else if (deals && (nd < MC_DEAL_INTS || nd % MC_DEAL_INTS))
        PyErr_SetString(PyExc_ValueError, "deals must be rows of 9 int32 (buckets of players 0 and 1, winner)");
    else if (deals && parse_buckets(nb, &g) == 0 && parse_tree(tree, nr, &v, &g) == 0) {
        for (Py_ssize_t i = 0; i < nd && !PyErr_Occurred(); i++) {
            int col = (int)(i % MC_DEAL_INTS);
            if (col < 8 ? (deals[i] < 0 || deals[i] >= g.n_buckets[col % 4]) : (deals[i] < -1 || deals[i] > 1))
                PyErr_Format(PyExc_ValueError, "deal %zd: entry %d (%d) is out of range", i / MC_DEAL_INTS, col,
                             (int)deals[i]);
        }
        if (!PyErr_Occurred()) {
            Py_BEGIN_ALLOW_THREADS mc_run_deals(&g, deals, nd / MC_DEAL_INTS, regret, avg, first, iterations, seed,
                                                threads, &done);
            Py_END_ALLOW_THREADS
        }
    }
    release(&v);
    if (PyErr_Occurred())
        return NULL;
    return PyLong_FromLongLong((long long)done);
}

static PyObject *py_deal_buckets(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree, *tables, *hole_obj, *board_obj;
    if (!PyArg_ParseTuple(args, "OOOO", &tree, &tables, &hole_obj, &board_obj))
        return NULL;
    uint8_t hole[2], board[5];
    int nh, nb;
    if (cards_of(hole_obj, 2, 2, hole, &nh, "a hole") < 0 || cards_of(board_obj, 5, 5, board, &nb, "a board") < 0)
        return NULL;
    for (int i = 0; i < 5; i++)
        if (board[i] == hole[0] || board[i] == hole[1])
            return PyErr_Format(PyExc_ValueError, "the hole and the board share a card");
    views v = {.n = 0};
    mc_game g;
    PyObject *result = NULL;
    if (parse_game(tree, tables, INT64_MAX / 4, &v, &g, 0) == 0) {
        int32_t b[4];
        mc_deal_buckets(&g, hole, board, b);
        result = Py_BuildValue("(iiii)", b[0], b[1], b[2], b[3]);
    }
    release(&v);
    return result;
}

/* Iterations of run_rnr per thread between two looks for signals: the glue takes the GIL back
 * after each slice of RNR_SLICE * threads iterations (a tenth of a second or so on the shipped
 * abstraction) and runs PyErr_CheckSignals, so Ctrl-C stops a call of millions of iterations
 * at once instead of when it ends. The slices are consecutive iterations: the same tables. */
#define RNR_SLICE 1024

/* run_rnr(tree, tables, regret, avg, opp_regret, opp_avg, model_probs, model_conf, p, first,
 * iterations, seed, threads[, done]): a robust counter-strategy's iterations (rnr_kernels.h), in
 * slices with a look for signals between them; a handler's exception (KeyboardInterrupt) ends
 * the call, the iterations finished until then kept in the tables and counted in done[0]
 * (an int64 array, optional; written after every slice). */
static PyObject *py_run_rnr(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree, *tables, *obj[6], *done_obj = Py_None;
    double p;
    long long first, iterations;
    unsigned long long seed;
    int threads;
    if (!PyArg_ParseTuple(args, "OOOOOOOOdLLKi|O", &tree, &tables, &obj[0], &obj[1], &obj[2], &obj[3], &obj[4],
                          &obj[5], &p, &first, &iterations, &seed, &threads, &done_obj))
        return NULL;
    if (first < 0 || iterations < 0 || threads < 1 || threads > 64 || !(p >= 0.0 && p <= 1.0)) {
        char msg[160]; /* PyErr_Format has no %g */
        PyOS_snprintf(msg, sizeof msg, "iterations >= 0, threads 1..64 and p in [0, 1], got %lld, %d and %g",
                      iterations, threads, p);
        PyErr_SetString(PyExc_ValueError, msg);
        return NULL;
    }
    static const char *names[6] = {"regret", "avg", "opp_regret", "opp_avg", "model_probs", "model_conf"};
    views v = {.n = 0}, tv = {.n = 0}; /* the game takes up to 14 views: the tables have their own */
    void *t[6]; /* the tables float64, the model float32 */
    Py_ssize_t len[6];
    int ok = 1;
    for (int i = 0; ok && i < 6; i++) {
        t[i] = i < 4 ? get(&tv, obj[i], "d", 8, 1, names[i], &len[i]) : get(&tv, obj[i], "f", 4, 0, names[i], &len[i]);
        ok = t[i] != NULL;
        if (ok && len[i] != len[0]) {
            PyErr_Format(PyExc_ValueError, "%s differs in length from regret", names[i]);
            ok = 0;
        }
    }
    int64_t *done_out = NULL;
    if (ok && done_obj != Py_None) {
        Py_ssize_t n_done;
        done_out = get(&tv, done_obj, "lq", 8, 1, "done", &n_done);
        if (done_out && n_done < 1) {
            PyErr_SetString(PyExc_ValueError, "done must hold one int64");
            done_out = NULL;
        }
        ok = done_out != NULL;
    }
    mc_game g;
    volatile int64_t done = 0;
    if (ok && parse_game(tree, tables, len[0], &v, &g, 1) == 0) {
        mc_model model = {t[4], t[5], p};
        const long long slice = (long long)RNR_SLICE * threads;
        for (long long at = 0; at < iterations;) {
            long long n = iterations - at < slice ? iterations - at : slice;
            Py_BEGIN_ALLOW_THREADS mc_rnr_run(&g, &model, t[0], t[1], t[2], t[3], first + at, n, seed, threads,
                                              &done);
            Py_END_ALLOW_THREADS
            at += n;
            if (done_out)
                *done_out = (int64_t)at;
            if (at < iterations && PyErr_CheckSignals() < 0)
                break;
        }
    }
    release(&v);
    release(&tv);
    if (PyErr_Occurred())
        return NULL;
    return PyLong_FromLongLong((long long)done);
}

/* run_pcs(tree, tables, regret, avg, first, iterations, seed, threads): public-chance-sampling
 * MCCFR on hold'em boards (pcs_kernels.h). */
static PyObject *py_run_pcs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree, *tables, *reg_obj, *avg_obj;
    long long first, iterations;
    unsigned long long seed;
    int threads;
    if (!PyArg_ParseTuple(args, "OOOOLLKi", &tree, &tables, &reg_obj, &avg_obj, &first, &iterations, &seed,
                          &threads))
        return NULL;
    if (first < 0 || iterations < 0 || threads < 1 || threads > 64)
        return PyErr_Format(PyExc_ValueError, "iterations >= 0 and threads 1..64, got %lld and %d", iterations,
                            threads);
    views v = {.n = 0};
    Py_ssize_t nr, na;
    double *regret = get(&v, reg_obj, "d", 8, 1, "regret", &nr);
    double *avg = regret ? get(&v, avg_obj, "d", 8, 1, "avg", &na) : NULL;
    mc_game g;
    volatile int64_t done = 0;
    int status = MC_OK;
    if (avg && nr != na)
        PyErr_SetString(PyExc_ValueError, "regret and avg differ in length");
    else if (avg && parse_game(tree, tables, nr, &v, &g, 1) == 0) {
        Py_BEGIN_ALLOW_THREADS status = pcs_run(&g, NULL, regret, avg, first, iterations, seed, threads, &done);
        Py_END_ALLOW_THREADS
    }
    release(&v);
    if (PyErr_Occurred())
        return NULL;
    if (status == MC_ERR_NOMEM)
        return PyErr_NoMemory();
    return PyLong_FromLongLong((long long)done);
}

/* The small game of run_pcs_small checked: holdings of one card (a == b, each card once) or two
 * distinct cards (each pair once), cards 0..51, buckets in range (-1 on street 0: not dealt
 * with that outcome), values >= 0; 0 or -1 with ValueError. */
static int check_small(const pcs_small *s, const mc_game *g)
{
    int nh = s->n_holdings;
    if (nh < 1 || nh > PCS_MAX_HOLDINGS || s->n_public < 1) {
        PyErr_Format(PyExc_ValueError, "pcs: 1..%d holdings and at least one public outcome", PCS_MAX_HOLDINGS);
        return -1;
    }
    int one = s->cards[0] == s->cards[1];
    uint8_t seen[52 * 52];
    memset(seen, 0, sizeof seen);
    for (int h = 0; h < nh; h++) {
        int a = s->cards[2 * h], b = s->cards[2 * h + 1];
        if (a > 51 || b > 51 || (a == b) != one || seen[a * 52 + b]) {
            PyErr_Format(PyExc_ValueError, "pcs: holding %d: cards 0..51, all of one card or all of two "
                                           "distinct cards, each holding once", h);
            return -1;
        }
        seen[a * 52 + b] = seen[b * 52 + a] = 1;
    }
    for (int64_t p = 0; p < s->n_public; p++)
        for (int h = 0; h < nh; h++) {
            const int32_t *bk = s->buckets + p * 4 * nh;
            if (bk[h] < 0)
                continue;
            for (int st = 0; st < 4; st++)
                if (bk[st * nh + h] < 0 || bk[st * nh + h] >= g->n_buckets[st]) {
                    PyErr_Format(PyExc_ValueError, "pcs: outcome %lld, holding %d: street %d's bucket is out of "
                                                   "range", (long long)p, h, st);
                    return -1;
                }
            if (s->values[p * nh + h] < 0) {
                PyErr_Format(PyExc_ValueError, "pcs: outcome %lld, holding %d: a negative value", (long long)p, h);
                return -1;
            }
        }
    return 0;
}

/* run_pcs_small(tree, n_buckets, cards uint8[h*2], buckets int32[p*4*h], values int32[p*h],
 * regret, avg, first, iterations, seed, threads): the same walk on a small game's public
 * outcomes. */
static PyObject *py_run_pcs_small(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree, *nb, *cards_obj, *bk_obj, *val_obj, *reg_obj, *avg_obj;
    long long first, iterations;
    unsigned long long seed;
    int threads;
    if (!PyArg_ParseTuple(args, "OOOOOOOLLKi", &tree, &nb, &cards_obj, &bk_obj, &val_obj, &reg_obj, &avg_obj, &first,
                          &iterations, &seed, &threads))
        return NULL;
    if (first < 0 || iterations < 0 || threads < 1 || threads > 64)
        return PyErr_Format(PyExc_ValueError, "iterations >= 0 and threads 1..64, got %lld and %d", iterations,
                            threads);
    views v = {.n = 0};
    Py_ssize_t nr, na, nc = 0, nbk = 0, nv = 0;
    mc_game g;
    memset(&g, 0, sizeof g);
    volatile int64_t done = 0;
    int status = MC_OK;
    double *regret = get(&v, reg_obj, "d", 8, 1, "regret", &nr);
    double *avg = regret ? get(&v, avg_obj, "d", 8, 1, "avg", &na) : NULL;
    const uint8_t *cards = avg ? get(&v, cards_obj, "B", 1, 0, "cards", &nc) : NULL;
    const int32_t *bk = cards ? get(&v, bk_obj, "iil", 4, 0, "buckets", &nbk) : NULL;
    const int32_t *val = bk ? get(&v, val_obj, "iil", 4, 0, "values", &nv) : NULL;
    pcs_small s = {(int32_t)(nc / 2), 0, cards, bk, val};
    if (val && nr != na)
        PyErr_SetString(PyExc_ValueError, "regret and avg differ in length");
    else if (val && (nc < 2 || nc % 2 || nc / 2 > PCS_MAX_HOLDINGS || nv % (nc / 2) || nv == 0 ||
                     nbk != 4 * nv))
        PyErr_SetString(PyExc_ValueError, "pcs: cards h x 2, buckets p x 4 x h, values p x h");
    else if (val && parse_buckets(nb, &g) == 0 && parse_tree(tree, nr, &v, &g) == 0) {
        s.n_public = (int32_t)(nv / (nc / 2));
        if (check_small(&s, &g) == 0) {
            Py_BEGIN_ALLOW_THREADS status = pcs_run(&g, &s, regret, avg, first, iterations, seed, threads, &done);
            Py_END_ALLOW_THREADS
        }
    }
    release(&v);
    if (PyErr_Occurred())
        return NULL;
    if (status == MC_ERR_NOMEM)
        return PyErr_NoMemory();
    return PyLong_FromLongLong((long long)done);
}

/* pcs_board(tree, tables, board5, ro f64[1326], buckets int32[4*1326], compat f64[1326],
 * net f64[1326]): a test hook, by combo: the buckets the walk uses (-1 for combos clashing
 * with the board) and the terminal vectors against the opponent's reach ro (0 where clashing). */
static PyObject *py_pcs_board(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tree, *tables, *board_obj, *ro_obj, *bk_obj, *co_obj, *net_obj;
    if (!PyArg_ParseTuple(args, "OOOOOOO", &tree, &tables, &board_obj, &ro_obj, &bk_obj, &co_obj, &net_obj))
        return NULL;
    uint8_t board[5];
    int nb;
    if (cards_of(board_obj, 5, 5, board, &nb, "a board") < 0)
        return NULL;
    views v = {.n = 0}, bv = {.n = 0}; /* the game takes up to 15 views: the vectors have their own */
    mc_game g;
    Py_ssize_t n1, n2, n3, n4;
    const double *ro = get(&bv, ro_obj, "d", 8, 0, "ro", &n1);
    int32_t *bk = ro ? get(&bv, bk_obj, "iil", 4, 1, "buckets", &n2) : NULL;
    double *co = bk ? get(&bv, co_obj, "d", 8, 1, "compat", &n3) : NULL;
    double *net = co ? get(&bv, net_obj, "d", 8, 1, "net", &n4) : NULL;
    if (net && (n1 != MC_N_COMBOS || n2 != 4 * MC_N_COMBOS || n3 != MC_N_COMBOS || n4 != MC_N_COMBOS))
        PyErr_SetString(PyExc_ValueError, "pcs_board: ro, compat and net 1326 float64, buckets 4 x 1326 int32");
    else if (net && parse_game(tree, tables, INT64_MAX / 4, &v, &g, 0) == 0) {
        pcs_board *b = malloc(sizeof(pcs_board));
        double *r = malloc(sizeof(double) * 3 * PCS_MAX_HOLDINGS);
        if (!b || !r) {
            PyErr_NoMemory();
        } else {
            pcs_holdem_board(&g, board, b);
            for (int i = 0; i < b->n; i++)
                r[i] = ro[b->holding[i]];
            pcs_terminals(b, r, r + PCS_MAX_HOLDINGS, r + 2 * PCS_MAX_HOLDINGS);
            for (int c = 0; c < MC_N_COMBOS; c++) {
                co[c] = net[c] = 0.0;
                for (int s = 0; s < 4; s++)
                    bk[s * MC_N_COMBOS + c] = -1;
            }
            for (int i = 0; i < b->n; i++) {
                int c = b->holding[i];
                co[c] = r[PCS_MAX_HOLDINGS + i];
                net[c] = r[2 * PCS_MAX_HOLDINGS + i];
                for (int s = 0; s < 4; s++)
                    bk[s * MC_N_COMBOS + c] = b->bucket[s][i];
            }
        }
        free(b);
        free(r);
    }
    release(&v);
    release(&bv);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"river_hs", py_river_hs, METH_VARARGS, "river_hs(board5, out float64[1326]): river HS of every holding."},
    {"river_ochs", py_river_ochs, METH_VARARGS,
     "river_ochs(board5, clusters uint8[1326], k, out float64[1326*k]): every holding's HS against each cluster."},
    {"river_ochs_one", py_river_ochs_one, METH_VARARGS,
     "river_ochs_one(hole, board5, clusters uint8[1326], k, out float64[k]): one holding's, by enumeration."},
    {"river_ochs_buckets", py_river_ochs_buckets, METH_VARARGS,
     "river_ochs_buckets(board5, clusters, k, centroids float64[n*k], out uint16[1326]): nearest centroid (L2)."},
    {"board_histograms", py_board_histograms, METH_VARARGS,
     "board_histograms(board, n_bins, out uint16[1326*n_bins]): river-HS histograms over the runouts."},
    {"board_buckets", py_board_buckets, METH_VARARGS,
     "board_buckets(board, n_bins, centroids float32[k*n_bins], out uint16[1326]): nearest centroid (L1 on CDFs)."},
    {"assign_l1", py_assign_l1, METH_VARARGS,
     "assign_l1(points f32[n*d], centroids f32[k*d], d, out int32[n], dist f32[n] or None)."},
    {"run", py_run, METH_VARARGS,
     "run(tree, tables, regret f64, avg f64, first, iterations, seed, threads) -> iterations done "
     "(external-sampling MCCFR)."},
    {"run_deals", py_run_deals, METH_VARARGS,
     "run_deals(tree, n_buckets, deals int32[n*9], regret f64, avg f64, first, iterations, seed, threads) -> "
     "iterations done (the same MCCFR on a small game's table of deals)."},
    {"run_rnr", py_run_rnr, METH_VARARGS,
     "run_rnr(tree, tables, regret f64, avg f64, opp_regret f64, opp_avg f64, model_probs, model_conf, p, first, "
     "iterations, seed, threads[, done i64[1]]) -> iterations done (a robust counter-strategy, rnr_kernels.c; "
     "signals are checked between slices of iterations, done[0] counts the finished ones)."},
    {"run_pcs", py_run_pcs, METH_VARARGS,
     "run_pcs(tree, tables, regret f64, avg f64, first, iterations, seed, threads) -> iterations done "
     "(public-chance-sampling MCCFR, pcs_kernels.c)."},
    {"run_pcs_small", py_run_pcs_small, METH_VARARGS,
     "run_pcs_small(tree, n_buckets, cards u8[h*2], buckets i32[p*4*h], values i32[p*h], regret, avg, first, "
     "iterations, seed, threads) -> iterations done (the same on a small game's public outcomes)."},
    {"pcs_board", py_pcs_board, METH_VARARGS,
     "pcs_board(tree, tables, board5, ro f64[1326], buckets i32[4*1326], compat f64[1326], net f64[1326]): "
     "a test hook (the walk's buckets and terminal vectors)."},
    {"deal_buckets", py_deal_buckets, METH_VARARGS, "deal_buckets(tree, tables, hole, board5) -> 4 buckets."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "evaluator_ext._mccfr",
    "Hand-strength-distribution buckets and external-sampling MCCFR (see cbr/cfr/mccfr.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__mccfr(void)
{
    if (mc_init() != MC_OK) {
        PyErr_SetString(PyExc_RuntimeError, "evaluator_ext._mccfr: could not build the evaluator's tables");
        return NULL;
    }
    return PyModule_Create(&moddef);
}
