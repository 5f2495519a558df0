/* CPython glue for the exact retrieval aggregates: module evaluator_ext._retrieval.
 *
 * Buffers, checks, the GIL and errors live here; the kernel (retrieval_kernels.c) knows
 * nothing of Python. The caller is cbr/retrieval/aggregate.py, which builds the layout and
 * the program; this layer still checks every dtype, size and index so that bad input raises
 * TypeError / ValueError instead of crashing. The scan runs without the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <string.h>

#include "retrieval_kernels.h"

#define N_BUFS 16

typedef struct {
    Py_buffer bufs[N_BUFS];
    int n_bufs;
} views;

static void release(views *v)
{
    for (int i = 0; i < v->n_bufs; i++)
        PyBuffer_Release(&v->bufs[i]);
    v->n_bufs = 0;
}

/* A C-contiguous view of `obj` with items of struct code `code` and size `itemsize`; its item
 * count goes to *count. Returns the data or NULL with an exception set. */
static void *get_array(views *v, PyObject *obj, char code, Py_ssize_t itemsize, int writable, const char *what,
                       Py_ssize_t *count)
{
    Py_buffer *view = &v->bufs[v->n_bufs];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "scan: %s must be a C-contiguous%s array", what, writable ? " writable" : "");
        return NULL;
    }
    v->n_bufs++;
    const char *fmt = view->format ? view->format : "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@')
        fmt++;
    int ok = view->itemsize == itemsize && strlen(fmt) == 1 &&
             (*fmt == code || (code == 'q' && itemsize == 8 && *fmt == 'l'));
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "scan: %s has the wrong dtype (format %s, item size %zd)", what, fmt,
                     view->itemsize);
        return NULL;
    }
    *count = view->len / itemsize;
    return view->buf;
}

static PyObject *fail(views *v, const char *message)
{
    release(v);
    PyErr_Format(PyExc_ValueError, "scan: %s", message);
    return NULL;
}

static PyObject *triple_of(const double x[3])
{
    return Py_BuildValue("(ddd)", x[0], x[1], x[2]);
}

/* What scan and scan_rows return for a kernel's status and totals (or the ValueError it means). */
static PyObject *scan_result(const char *name, const char *ranged, int status, int64_t n_top, const rk_totals *tot)
{
    if (status == RK_ERR_CODE)
        return PyErr_Format(PyExc_ValueError, "%s: an action code is outside 0..2", name);
    if (status)
        return PyErr_Format(PyExc_ValueError, "%s: %s is out of range", name, ranged);
    return Py_BuildValue("(LLLNNNNd)", (long long)n_top, (long long)tot->hits, (long long)tot->scanned,
                         triple_of(tot->count), triple_of(tot->pos_sim), triple_of(tot->known),
                         triple_of(tot->outcome), tot->sim_sum);
}

static PyObject *py_scan(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *free_o, *ids_o, *gstart_o, *gcodes_o, *tables_o, *offsets_o, *kind_o, *index_o, *fq_o, *frange_o, *fw_o, *codes_o, *outc_o,
        *top_ids_o, *top_sims_o;
    int sort_free, by_row;
    double total, threshold;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOiddOOpOO:scan", &free_o, &ids_o, &gstart_o, &gcodes_o, &tables_o,
                          &offsets_o, &kind_o,
                          &index_o, &fq_o, &frange_o, &fw_o, &sort_free, &total, &threshold, &codes_o, &outc_o,
                          &by_row, &top_ids_o, &top_sims_o))
        return NULL;
    views v = {.n_bufs = 0};
    Py_ssize_t n_free_vals, n_rows, n_gstart, n_gcodes, n_tables, n_offsets, n_kind, n_index, n_fq, n_frange, n_fw, n_codes, n_out = 0,
                                                                                                  n_tid, n_tsim;
    rk_layout lay;
    rk_program p;
    const double *outcomes = NULL;
    lay.free = get_array(&v, free_o, 'f', 4, 0, "free rows (float32)", &n_free_vals);
    if (!lay.free) goto error;
    lay.ids = get_array(&v, ids_o, 'q', 8, 0, "ids (int64)", &n_rows);
    if (!lay.ids) goto error;
    lay.gstart = get_array(&v, gstart_o, 'q', 8, 0, "group starts (int64)", &n_gstart);
    if (!lay.gstart) goto error;
    lay.gcodes = get_array(&v, gcodes_o, 'i', 4, 0, "group codes (int32)", &n_gcodes);
    if (!lay.gcodes) goto error;
    lay.tables = get_array(&v, tables_o, 'd', 8, 0, "key tables (float64)", &n_tables);
    if (!lay.tables) goto error;
    lay.offsets = get_array(&v, offsets_o, 'q', 8, 0, "key table offsets (int64)", &n_offsets);
    if (!lay.offsets) goto error;
    p.kind = get_array(&v, kind_o, 'b', 1, 0, "program kinds (int8)", &n_kind);
    if (!p.kind) goto error;
    p.index = get_array(&v, index_o, 'i', 4, 0, "program indexes (int32)", &n_index);
    if (!p.index) goto error;
    p.fq = get_array(&v, fq_o, 'd', 8, 0, "free query values (float64)", &n_fq);
    if (!p.fq) goto error;
    p.frange = get_array(&v, frange_o, 'd', 8, 0, "free ranges (float64)", &n_frange);
    if (!p.frange) goto error;
    p.fw = get_array(&v, fw_o, 'd', 8, 0, "free weights (float64)", &n_fw);
    if (!p.fw) goto error;
    const int8_t *codes = get_array(&v, codes_o, 'b', 1, 0, "action codes (int8)", &n_codes);
    if (!codes) goto error;
    if (outc_o != Py_None) {
        outcomes = get_array(&v, outc_o, 'd', 8, 0, "outcomes (float64)", &n_out);
        if (!outcomes) goto error;
    }
    int64_t *top_ids = get_array(&v, top_ids_o, 'q', 8, 1, "top ids (int64)", &n_tid);
    if (!top_ids) goto error;
    double *top_sims = get_array(&v, top_sims_o, 'd', 8, 1, "top similarities (float64)", &n_tsim);
    if (!top_sims) goto error;

    if (n_gstart < 1)
        return fail(&v, "group starts must hold at least one offset");
    lay.n_rows = n_rows;
    lay.n_groups = n_gstart - 1;
    if (n_fq != n_frange || n_fq != n_fw)
        return fail(&v, "free query values, ranges and weights differ in length");
    if (n_fq > 64 || n_offsets < 1 || n_offsets > 257)
        return fail(&v, "too many columns");
    p.n_free = (int32_t)n_fq;
    p.n_key = (int32_t)(n_offsets - 1);
    if (lay.offsets[0] != 0 || lay.offsets[p.n_key] != (int64_t)n_tables)
        return fail(&v, "key table offsets must run from 0 to the tables' length");
    if ((int64_t)n_free_vals != (int64_t)n_rows * p.n_free)
        return fail(&v, "free rows must hold (rows, free columns) values");
    if ((int64_t)n_gcodes != lay.n_groups * (int64_t)p.n_key)
        return fail(&v, "group codes must hold (groups, key columns) values");
    if (n_kind != n_index || n_kind < 1 || n_kind > 256)
        return fail(&v, "program kinds and indexes must have the same length 1..256");
    p.n = (int32_t)n_kind;
    if (lay.gstart[0] != 0 || lay.gstart[lay.n_groups] != (int64_t)n_rows)
        return fail(&v, "group starts must run from 0 to the number of rows");
    for (Py_ssize_t i = 0; i < n_fq; i++)
        if (!(p.frange[i] > 0.0) || !isfinite(p.frange[i]) || !isfinite(p.fq[i]) || !isfinite(p.fw[i]) ||
            p.fw[i] < 0.0)
            return fail(&v, "free ranges must be positive, query values and weights finite");
    if (!(total > 0.0) || !isfinite(total) || !isfinite(threshold))
        return fail(&v, "the weight sum must be positive and the threshold finite");
    if (outcomes && n_out < n_codes)
        return fail(&v, "fewer outcomes than action codes");
    if (by_row && n_codes != n_rows)
        return fail(&v, "labels by layout row must hold one action code per row");
    if (n_codes < n_rows)
        return fail(&v, "fewer action codes than layout rows");
    if (n_tid != n_tsim || n_tid < 1)
        return fail(&v, "top ids and similarities must have the same length >= 1");
    p.sort_free = sort_free;
    p.total = total;
    p.threshold = threshold;

    rk_totals tot;
    int64_t n_top = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = rk_scan(&lay, &p, codes, n_codes, outcomes, by_row, n_tid, top_ids, top_sims, &n_top, &tot);
    Py_END_ALLOW_THREADS
    release(&v);
    return scan_result("scan", "a group offset, case id or program entry", status, n_top, &tot);
error:
    release(&v);
    return NULL;
}

static PyObject *py_scan_rows(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *rows_o, *gcodes_o, *tables_o, *offsets_o, *kind_o, *index_o, *q_o, *range_o, *w_o, *codes_o, *outc_o,
        *top_ids_o, *top_sims_o;
    int d;
    long long first_id;
    double total, threshold;
    if (!PyArg_ParseTuple(args, "OiLOOOOOOOOddOOOO:scan_rows", &rows_o, &d, &first_id, &gcodes_o, &tables_o,
                          &offsets_o, &kind_o, &index_o, &q_o, &range_o, &w_o, &total, &threshold, &codes_o,
                          &outc_o, &top_ids_o, &top_sims_o))
        return NULL;
    views v = {.n_bufs = 0};
    Py_ssize_t n_vals, n_gcodes, n_tables, n_offsets, n_kind, n_index, n_q, n_range, n_w, n_codes, n_out = 0, n_tid,
        n_tsim;
    const double *outcomes = NULL;
    const float *rows = get_array(&v, rows_o, 'f', 4, 0, "rows (float32)", &n_vals);
    if (!rows) goto error;
    const int32_t *gcodes = get_array(&v, gcodes_o, 'i', 4, 0, "key codes (int32)", &n_gcodes);
    if (!gcodes) goto error;
    const double *tables = get_array(&v, tables_o, 'd', 8, 0, "key tables (float64)", &n_tables);
    if (!tables) goto error;
    const int64_t *offsets = get_array(&v, offsets_o, 'q', 8, 0, "key table offsets (int64)", &n_offsets);
    if (!offsets) goto error;
    const int8_t *kind = get_array(&v, kind_o, 'b', 1, 0, "program kinds (int8)", &n_kind);
    if (!kind) goto error;
    const int32_t *index = get_array(&v, index_o, 'i', 4, 0, "program indexes (int32)", &n_index);
    if (!index) goto error;
    const double *q = get_array(&v, q_o, 'd', 8, 0, "query values (float64)", &n_q);
    if (!q) goto error;
    const double *range = get_array(&v, range_o, 'd', 8, 0, "ranges (float64)", &n_range);
    if (!range) goto error;
    const double *w = get_array(&v, w_o, 'd', 8, 0, "weights (float64)", &n_w);
    if (!w) goto error;
    const int8_t *codes = get_array(&v, codes_o, 'b', 1, 0, "action codes (int8)", &n_codes);
    if (!codes) goto error;
    if (outc_o != Py_None) {
        outcomes = get_array(&v, outc_o, 'd', 8, 0, "outcomes (float64)", &n_out);
        if (!outcomes) goto error;
    }
    int64_t *top_ids = get_array(&v, top_ids_o, 'q', 8, 1, "top ids (int64)", &n_tid);
    if (!top_ids) goto error;
    double *top_sims = get_array(&v, top_sims_o, 'd', 8, 1, "top similarities (float64)", &n_tsim);
    if (!top_sims) goto error;

    if (d < 1 || n_vals % d != 0)
        return fail(&v, "rows must hold (rows, d) values with d >= 1");
    int64_t n_rows = (int64_t)(n_vals / d);
    if (n_offsets < 1 || n_offsets > 257)
        return fail(&v, "too many key columns");
    int32_t n_key = (int32_t)(n_offsets - 1);
    if (offsets[0] != 0 || offsets[n_key] != (int64_t)n_tables)
        return fail(&v, "key table offsets must run from 0 to the tables' length");
    for (int32_t i = 0; i < n_key; i++)
        if (offsets[i + 1] < offsets[i])
            return fail(&v, "key table offsets must not decrease");
    if ((int64_t)n_gcodes != n_rows * (int64_t)n_key)
        return fail(&v, "key codes must hold (rows, key columns) values");
    if (n_kind != n_index || n_kind != n_q || n_kind != n_range || n_kind != n_w || n_kind < 1 || n_kind > 256)
        return fail(&v, "program kinds, indexes, query values, ranges and weights must have the same length 1..256");
    for (Py_ssize_t j = 0; j < n_kind; j++)
        if (kind[j] == 1 && (!(range[j] > 0.0) || !isfinite(range[j]) || !isfinite(q[j]) || !isfinite(w[j]) ||
                             w[j] < 0.0))
            return fail(&v, "ranges must be positive, query values and weights finite");
    if (!(total > 0.0) || !isfinite(total) || !isfinite(threshold))
        return fail(&v, "the weight sum must be positive and the threshold finite");
    if (outcomes && n_out < n_codes)
        return fail(&v, "fewer outcomes than action codes");
    if (first_id < 0 || first_id + n_rows > (int64_t)n_codes)
        return fail(&v, "fewer action codes than case ids");
    if (n_tid != n_tsim || n_tid < 1)
        return fail(&v, "top ids and similarities must have the same length >= 1");

    rk_totals tot;
    int64_t n_top = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = rk_scan_rows(rows, n_rows, d, (int64_t)first_id, gcodes, n_key, tables, offsets, kind, index, q, range, w,
                          (int32_t)n_kind, total, threshold, codes, n_codes, outcomes, n_tid, top_ids, top_sims,
                          &n_top, &tot);
    Py_END_ALLOW_THREADS
    release(&v);
    return scan_result("scan_rows", "a key code or program entry", status, n_top, &tot);
error:
    release(&v);
    return NULL;
}

static PyMethodDef methods[] = {
    {"scan", py_scan, METH_VARARGS,
     "scan(free, ids, gstart, gcodes, tables, offsets, kind, index, fq, frange, fw, sort_free, total, threshold,\n"
     "     codes, outcomes, by_row, top_ids, top_sims) -> (n_top, hits, scanned, count, pos_sim, known, outcome, sim_sum):\n"
     "the exact aggregates of the rows at or above the threshold over a grouped layout (labels by case id,\n"
     "or by layout row with by_row; see\n"
     "cbr/retrieval/aggregate.py); fills top_ids/top_sims (similarity descending, then id ascending)."},
    {"scan_rows", py_scan_rows, METH_VARARGS,
     "scan_rows(rows, d, first_id, gcodes, tables, offsets, kind, index, q, range, w, total, threshold, codes,\n"
     "          outcomes, top_ids, top_sims) -> (n_top, hits, scanned, count, pos_sim, known, outcome, sim_sum):\n"
     "scan's aggregates over plain rows (case ids first_id..), each scored (cbr.retrieval.aggregate.RawTail)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "_retrieval",
    "Exact retrieval aggregates over a grouped case layout (use cbr.retrieval.aggregate).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__retrieval(void)
{
    return PyModule_Create(&moddef);
}
