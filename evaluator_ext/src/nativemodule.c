/* CPython glue for the native hand evaluator: module evaluator_ext._native.
 *
 * Argument parsing, buffers, the GIL and errors live here; the kernels (eval_kernels.c)
 * know nothing of Python. Callers are expected to be evaluator_ext/native.py, which
 * cleans card-like input first; this layer still checks everything so that garbage
 * never crashes the interpreter (ValueError / TypeError instead).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

#include "eval_kernels.h"
#include "abstraction_kernels.h"
#include "range_kernels.h"

/* Work bigger than this (hand evaluations, roughly) runs without the GIL. */
#define GIL_FREE_ABOVE 2000
/* Long calls run in chunks of about this many hand evaluations (a few milliseconds): the
 * GIL is released for each chunk and re-taken between chunks to check for signals, so
 * Ctrl-C stops them at once. Chunking splits loops, never a random stream. */
#define CHUNK_EVALS (1 << 18)

static PyObject *kernel_error(int status, const char *what)
{
    switch (status) {
    case EK_ERR_NOMEM:
        return PyErr_NoMemory();
    case EK_ERR_RANGE:
        PyErr_Format(PyExc_ValueError, "%s: a card number is out of range 0..51", what);
        break;
    case EK_ERR_DUPLICATE:
        PyErr_Format(PyExc_ValueError, "%s: a card appears twice", what);
        break;
    case EK_ERR_NO_WEIGHT:
        PyErr_Format(PyExc_ValueError,
                     "%s: weights give no weight to any holding that does not clash with the known cards", what);
        break;
    case EK_ERR_ARGUMENT:
        PyErr_Format(PyExc_ValueError, "%s: a size or count is out of range", what);
        break;
    default:
        PyErr_Format(PyExc_RuntimeError, "%s: internal error %d in the native evaluator", what, status);
    }
    return NULL;
}

/* Clean a sequence of ints 0..51 into out[]; its length must be in [min_n, max_n].
 * Returns the length, or -1 with an exception set. */
static int cards_from_sequence(PyObject *obj, uint8_t *out, int min_n, int max_n, const char *what)
{
    PyObject *seq = PySequence_Fast(obj, "cards must be a sequence of card numbers 0..51");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int result = -1;
    if (n < min_n || n > max_n) {
        if (min_n == max_n)
            PyErr_Format(PyExc_ValueError, "%s must be %d cards, got %zd", what, min_n, n);
        else
            PyErr_Format(PyExc_ValueError, "%s must be %d to %d cards, got %zd", what, min_n, max_n, n);
        goto error;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        long c = PyLong_AsLong(items[i]);
        if (c == -1 && PyErr_Occurred())
            goto error;
        if (c < 0 || c >= EK_N_CARDS) {
            PyErr_Format(PyExc_ValueError, "%s: card number %ld is out of range 0..51", what, c);
            goto error;
        }
        out[i] = (uint8_t)c;
    }
    result = (int)n;
error:
    Py_DECREF(seq);
    return result;
}

/* hole (2 cards) and board (min_board..5 cards), all distinct. */
static int parse_hole_board(PyObject *hole_obj, PyObject *board_obj, uint8_t hole[2], uint8_t board[5],
                            int min_board, int *n_board, const char *what)
{
    if (cards_from_sequence(hole_obj, hole, 2, 2, "hole") < 0)
        return -1;
    int nb = cards_from_sequence(board_obj, board, min_board, 5, "board");
    if (nb < 0)
        return -1;
    uint64_t seen = 0;
    for (int i = 0; i < 2 + nb; i++) {
        uint8_t c = i < 2 ? hole[i] : board[i - 2];
        if (seen & (UINT64_C(1) << c)) {
            PyErr_Format(PyExc_ValueError, "%s: card number %d appears twice", what, (int)c);
            return -1;
        }
        seen |= UINT64_C(1) << c;
    }
    *n_board = nb;
    return 0;
}

/* Optional weights: None, or a C-contiguous one-dimensional float64 buffer of 1326 finite
 * values in 0..1e300 (the cap keeps weighted sums finite). */
#define MAX_WEIGHT 1e300
static int get_weights(PyObject *obj, Py_buffer *view, const double **weights)
{
    *weights = NULL;
    if (obj == NULL || obj == Py_None)
        return 0;
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    if (view->itemsize != sizeof(double) || !view->format || strcmp(view->format, "d") != 0 || view->ndim != 1 ||
        !view->shape || view->shape[0] != EK_N_COMBOS || view->len != (Py_ssize_t)(EK_N_COMBOS * sizeof(double))) {
        PyErr_SetString(PyExc_ValueError, "weights must be a contiguous float64 buffer of shape (1326,)");
        PyBuffer_Release(view);
        return -1;
    }
    const double *w = view->buf;
    for (int i = 0; i < EK_N_COMBOS; i++)
        if (!(w[i] >= 0.0) || w[i] > MAX_WEIGHT) {
            /* PyErr_Format has no %g: format the number with Python's own repr. */
            char *text = PyOS_double_to_string(w[i], 'r', 0, 0, NULL);
            if (text) {
                PyErr_Format(PyExc_ValueError, "weights must be finite numbers in 0..1e300 (entry %d is %s)", i, text);
                PyMem_Free(text);
            }
            PyBuffer_Release(view);
            return -1;
        }
    *weights = w;
    return 1;
}

/* An int in low..high from a Python int (no bool, no wrap-around: out of range is a
 * ValueError naming the bounds, never a silently truncated value). */
static int get_u64(PyObject *obj, const char *what, unsigned long long low, unsigned long long high,
                   unsigned long long *out)
{
    if (!PyLong_Check(obj) || PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, got %.100s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow = 0, out_of_range = 0;
    unsigned long long value = 0;
    long long small = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (small == -1 && !overflow && PyErr_Occurred())
        return -1;
    if (overflow < 0 || (!overflow && small < 0)) {
        out_of_range = 1; /* negative */
    } else if (!overflow) {
        value = (unsigned long long)small;
    } else {
        value = PyLong_AsUnsignedLongLong(obj);
        if (value == (unsigned long long)-1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError))
                return -1;
            PyErr_Clear();
            out_of_range = 1; /* 2^64 or more */
        }
    }
    if (out_of_range || value < low || value > high) {
        PyErr_Format(PyExc_ValueError, "%s must be %llu..%llu, got %R", what, low, high, obj);
        return -1;
    }
    *out = value;
    return 0;
}

/* ------------------------------------------------------------------------- */

static PyObject *py_evaluate(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *obj;
    uint8_t cards[7];
    if (!PyArg_ParseTuple(args, "O:evaluate", &obj))
        return NULL;
    int n = cards_from_sequence(obj, cards, 5, 7, "evaluate");
    if (n < 0)
        return NULL;
    uint64_t seen = 0;
    for (int i = 0; i < n; i++) {
        if (seen & (UINT64_C(1) << cards[i]))
            return PyErr_Format(PyExc_ValueError, "evaluate: card number %d appears twice", (int)cards[i]);
        seen |= UINT64_C(1) << cards[i];
    }
    return PyLong_FromLong(ek_evaluate(cards, n));
}

static PyObject *py_evaluate_batch(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *cards_obj, *out_obj;
    Py_buffer cards = {0}, out = {0};
    int have_cards = 0, have_out = 0;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "OO:evaluate_batch", &cards_obj, &out_obj))
        return NULL;
    if (PyObject_GetBuffer(cards_obj, &cards, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        goto error;
    have_cards = 1;
    if (PyObject_GetBuffer(out_obj, &out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
        goto error;
    have_out = 1;
    if (cards.itemsize != 1 || !cards.format || strcmp(cards.format, "B") != 0 || cards.ndim != 2 ||
        cards.shape[1] < 5 || cards.shape[1] > 7) {
        PyErr_SetString(PyExc_ValueError, "evaluate_batch: cards must be a C-contiguous uint8 array of shape (n, 5..7)");
        goto error;
    }
    if (out.itemsize != 4 || !out.format || strcmp(out.format, "i") != 0 || out.ndim != 1 ||
        out.shape[0] != cards.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "evaluate_batch: out must be a C-contiguous int32 array of shape (n,)");
        goto error;
    }
    size_t rows = (size_t)cards.shape[0], bad_row = 0;
    int cols = (int)cards.shape[1], status = EK_OK;
    if (rows <= GIL_FREE_ABOVE) {
        status = ek_evaluate_batch(cards.buf, rows, cols, out.buf, &bad_row);
    } else {
        /* Chunks of CHUNK_EVALS rows without the GIL; signals are checked between them. */
        const uint8_t *in = cards.buf;
        int32_t *values = out.buf;
        for (size_t first = 0; first < rows && status == EK_OK; first += CHUNK_EVALS) {
            size_t n = rows - first < CHUNK_EVALS ? rows - first : CHUNK_EVALS;
            Py_BEGIN_ALLOW_THREADS
            status = ek_evaluate_batch(in + first * (size_t)cols, n, cols, values + first, &bad_row);
            Py_END_ALLOW_THREADS
            if (status)
                bad_row += first;
            else if (first + n < rows && PyErr_CheckSignals() < 0)
                goto error;
        }
    }
    if (status == EK_ERR_RANGE) {
        PyErr_Format(PyExc_ValueError, "evaluate_batch: row %zu has a card number outside 0..51", bad_row);
        goto error;
    }
    if (status == EK_ERR_DUPLICATE) {
        PyErr_Format(PyExc_ValueError, "evaluate_batch: row %zu has a card twice", bad_row);
        goto error;
    }
    if (status) {
        kernel_error(status, "evaluate_batch");
        goto error;
    }
    result = Py_NewRef(Py_None);
error:
    if (have_out)
        PyBuffer_Release(&out);
    if (have_cards)
        PyBuffer_Release(&cards);
    return result;
}

/* hist[] = ek_value_histogram, in parts without the GIL; signals are checked between parts.
 * Returns 0, or -1 with an exception set. */
static int histogram_interruptibly(int n_cards, uint64_t *hist, const char *what)
{
    int status = EK_OK;
    memset(hist, 0, (EK_N_VALUES + 1) * sizeof *hist);
    int parts = ek_value_histogram_parts(n_cards);
    for (int part = 0; part < parts && status == EK_OK; part++) {
        Py_BEGIN_ALLOW_THREADS
        status = ek_value_histogram_part(n_cards, part, hist);
        Py_END_ALLOW_THREADS
        if (status == EK_OK && part + 1 < parts && PyErr_CheckSignals() < 0)
            return -1;
    }
    if (status) {
        kernel_error(status, what);
        return -1;
    }
    return 0;
}

static PyObject *py_value_histogram(PyObject *Py_UNUSED(self), PyObject *args)
{
    int n_cards = 7;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "|i:value_histogram", &n_cards))
        return NULL;
    if (n_cards < 5 || n_cards > 7)
        return PyErr_Format(PyExc_ValueError, "value_histogram: n_cards must be 5, 6 or 7, got %d", n_cards);
    uint64_t *hist = PyMem_RawMalloc((EK_N_VALUES + 1) * sizeof *hist);
    if (!hist)
        return PyErr_NoMemory();
    if (histogram_interruptibly(n_cards, hist, "value_histogram") < 0)
        goto error;
    result = PyTuple_New(EK_N_VALUES + 1);
    if (!result)
        goto error;
    for (int v = 0; v <= EK_N_VALUES; v++) {
        PyObject *x = PyLong_FromUnsignedLongLong(hist[v]);
        if (!x) {
            Py_CLEAR(result);
            goto error;
        }
        PyTuple_SET_ITEM(result, v, x);
    }
error:
    PyMem_RawFree(hist);
    return result;
}

static PyObject *py_category_counts(PyObject *Py_UNUSED(self), PyObject *args)
{
    int n_cards = 7;
    if (!PyArg_ParseTuple(args, "|i:category_counts", &n_cards))
        return NULL;
    if (n_cards < 5 || n_cards > 7)
        return PyErr_Format(PyExc_ValueError, "category_counts: n_cards must be 5, 6 or 7, got %d", n_cards);
    uint64_t *hist = PyMem_RawMalloc((EK_N_VALUES + 1) * sizeof *hist);
    if (!hist)
        return PyErr_NoMemory();
    if (histogram_interruptibly(n_cards, hist, "category_counts") < 0) {
        PyMem_RawFree(hist);
        return NULL;
    }
    unsigned long long counts[EK_N_CATEGORIES] = {0};
    for (int v = 1; v <= EK_N_VALUES; v++)
        counts[ek_category(v)] += hist[v];
    PyMem_RawFree(hist);
    return Py_BuildValue("(KKKKKKKKK)", counts[0], counts[1], counts[2], counts[3], counts[4], counts[5],
                         counts[6], counts[7], counts[8]);
}

static PyObject *py_hand_strength_counts(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *hole_obj, *board_obj, *weights_obj = Py_None, *result = NULL;
    uint8_t hole[2], board[5];
    int n_board, have_weights = 0, status;
    Py_buffer view = {0};
    const double *weights;
    double out[3];
    if (!PyArg_ParseTuple(args, "OO|O:hand_strength_counts", &hole_obj, &board_obj, &weights_obj))
        return NULL;
    if (parse_hole_board(hole_obj, board_obj, hole, board, 3, &n_board, "hand_strength_counts") < 0)
        return NULL;
    have_weights = get_weights(weights_obj, &view, &weights);
    if (have_weights < 0)
        return NULL;
    /* ~1,000 evaluations: cheaper to keep the GIL than to hand it over */
    status = ek_hand_strength_counts(hole, board, n_board, weights, out);
    if (status) {
        kernel_error(status, "hand_strength_counts");
        goto error;
    }
    result = Py_BuildValue("(ddd)", out[0], out[1], out[2]);
error:
    if (have_weights)
        PyBuffer_Release(&view);
    return result;
}

static PyObject *py_potential_table(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *hole_obj, *board_obj, *weights_obj = Py_None, *result = NULL;
    uint8_t hole[2], board[5];
    int n_board, have_weights = 0, status;
    Py_buffer view = {0};
    const double *weights;
    double t[9];
    if (!PyArg_ParseTuple(args, "OO|O:potential_table", &hole_obj, &board_obj, &weights_obj))
        return NULL;
    if (parse_hole_board(hole_obj, board_obj, hole, board, 3, &n_board, "potential_table") < 0)
        return NULL;
    have_weights = get_weights(weights_obj, &view, &weights);
    if (have_weights < 0)
        return NULL;
    if (n_board < 5) {
        Py_BEGIN_ALLOW_THREADS
        status = ek_potential_table(hole, board, n_board, weights, t);
        Py_END_ALLOW_THREADS
    } else {
        status = ek_potential_table(hole, board, n_board, weights, t);
    }
    if (status) {
        kernel_error(status, "potential_table");
        goto error;
    }
    result = Py_BuildValue("((ddd)(ddd)(ddd))", t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]);
error:
    if (have_weights)
        PyBuffer_Release(&view);
    return result;
}

static PyObject *py_hand_strength_squared(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *hole_obj, *board_obj;
    uint8_t hole[2], board[5];
    int n_board, status;
    double out = 0.0;
    if (!PyArg_ParseTuple(args, "OO:hand_strength_squared", &hole_obj, &board_obj))
        return NULL;
    if (parse_hole_board(hole_obj, board_obj, hole, board, 3, &n_board, "hand_strength_squared") < 0)
        return NULL;
    if (n_board < 5) {
        Py_BEGIN_ALLOW_THREADS
        status = ek_hand_strength_squared(hole, board, n_board, &out);
        Py_END_ALLOW_THREADS
    } else {
        status = ek_hand_strength_squared(hole, board, n_board, &out);
    }
    if (status)
        return kernel_error(status, "hand_strength_squared");
    return PyFloat_FromDouble(out);
}

static PyObject *py_showdown_deals(PyObject *Py_UNUSED(self), PyObject *args)
{
    int n_board, n_opponents;
    if (!PyArg_ParseTuple(args, "ii:showdown_deals", &n_board, &n_opponents))
        return NULL;
    if (n_board < 0 || n_board > 5 || n_opponents < 1 || n_opponents > 9)
        return PyErr_Format(PyExc_ValueError, "showdown_deals: need board 0..5 and 1..9 opponents");
    return PyFloat_FromDouble(ek_showdown_deals(n_board, n_opponents));
}

static PyObject *py_showdown_exact(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *hole_obj, *board_obj;
    uint8_t hole[2], board[5];
    int n_board, n_opponents, status = EK_OK;
    uint64_t out[3] = {0, 0, 0};
    if (!PyArg_ParseTuple(args, "OOi:showdown_exact", &hole_obj, &board_obj, &n_opponents))
        return NULL;
    if (parse_hole_board(hole_obj, board_obj, hole, board, 0, &n_board, "showdown_exact") < 0)
        return NULL;
    if (n_opponents < 1 || n_opponents > 9)
        return PyErr_Format(PyExc_ValueError, "showdown_exact: n_opponents must be 1..9, got %d", n_opponents);
    double deals = ek_showdown_deals(n_board, n_opponents);
    if (deals > EK_EXACT_MAX_DEALS)
        return PyErr_Format(PyExc_ValueError,
                            "showdown_exact: %d opponents with %d board cards is more than %d deals "
                            "(use Monte Carlo)", n_opponents, n_board, (int)EK_EXACT_MAX_DEALS);
    /* One part per first card to come (a 50th of the work or less), the GIL released for
     * each; signals are checked between parts. */
    int parts = ek_showdown_exact_parts(n_board);
    for (int part = 0; part < parts && status == EK_OK; part++) {
        if (deals > GIL_FREE_ABOVE) {
            Py_BEGIN_ALLOW_THREADS
            status = ek_showdown_exact_part(hole, board, n_board, n_opponents, part, out);
            Py_END_ALLOW_THREADS
            if (status == EK_OK && part + 1 < parts && PyErr_CheckSignals() < 0)
                return NULL;
        } else {
            status = ek_showdown_exact_part(hole, board, n_board, n_opponents, part, out);
        }
    }
    if (status)
        return kernel_error(status, "showdown_exact");
    return Py_BuildValue("(KKK)", (unsigned long long)out[0], (unsigned long long)out[1],
                         (unsigned long long)out[2]);
}

static PyObject *py_showdown_monte_carlo(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *hole_obj, *board_obj, *trials_obj, *seed_obj;
    uint8_t hole[2], board[5];
    int n_board, n_opponents, status;
    unsigned long long trials, seed, chunk = 0;
    PyObject *chunk_obj = NULL;
    ek_mc_state st;
    if (!PyArg_ParseTuple(args, "OOiOO|O:showdown_monte_carlo", &hole_obj, &board_obj, &n_opponents, &trials_obj,
                          &seed_obj, &chunk_obj))
        return NULL;
    if (parse_hole_board(hole_obj, board_obj, hole, board, 0, &n_board, "showdown_monte_carlo") < 0)
        return NULL;
    if (n_opponents < 1 || n_opponents > 9)
        return PyErr_Format(PyExc_ValueError, "showdown_monte_carlo: n_opponents must be 1..9, got %d", n_opponents);
    if (get_u64(trials_obj, "trials", 1, EK_MAX_TRIALS, &trials) < 0)
        return NULL;
    if (get_u64(seed_obj, "seed", 0, UINT64_MAX, &seed) < 0)
        return NULL;
    /* chunk: trials per GIL-free step; 0 (the default) sizes it to CHUNK_EVALS evaluations. */
    if (chunk_obj && get_u64(chunk_obj, "chunk", 0, EK_MAX_TRIALS, &chunk) < 0)
        return NULL;
    if (chunk == 0)
        chunk = CHUNK_EVALS / (unsigned long long)(n_opponents + 1);
    status = ek_mc_start(&st, hole, board, n_board, n_opponents, trials, seed);
    if (status)
        return kernel_error(status, "showdown_monte_carlo");
    if (trials <= GIL_FREE_ABOVE) {
        ek_mc_step(&st, trials);
    } else {
        while (st.done < st.trials) {
            Py_BEGIN_ALLOW_THREADS
            ek_mc_step(&st, chunk);
            Py_END_ALLOW_THREADS
            if (st.done < st.trials && PyErr_CheckSignals() < 0)
                return NULL;
        }
    }
    return Py_BuildValue("(KKK)", (unsigned long long)st.count[0], (unsigned long long)st.count[1],
                         (unsigned long long)st.count[2]);
}

/* ------------------------------------------------------------------------- */
/* potential_tables: several holes on one board (self-contained helpers)       */
/* ------------------------------------------------------------------------- */

/* Up to max_n card numbers 0..51 from a sequence into out[]; the count, or -1 (exception set). */
static int pt_parse_cards(PyObject *obj, uint8_t *out, int min_n, int max_n, const char *what)
{
    PyObject *seq = PySequence_Fast(obj, "potential_tables: cards must be sequences of card numbers 0..51");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int result = -1;
    if (n < min_n || n > max_n) {
        PyErr_Format(PyExc_ValueError, "potential_tables: %s must be %d to %d cards, got %zd", what, min_n, max_n, n);
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyLong_Check(item)) {
            PyErr_Format(PyExc_TypeError, "potential_tables: %s cards must be ints", what);
            goto done;
        }
        long c = PyLong_AsLong(item);
        if (c == -1 && PyErr_Occurred())
            goto done;
        if (c < 0 || c >= EK_N_CARDS) {
            PyErr_Format(PyExc_ValueError, "potential_tables: %s card number %ld is out of range 0..51", what, c);
            goto done;
        }
        out[i] = (uint8_t)c;
    }
    result = (int)n;
done:
    Py_DECREF(seq);
    return result;
}

static PyObject *py_potential_tables(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *holes_obj, *board_obj, *weights_obj = Py_None, *holes_seq = NULL, *result = NULL;
    uint8_t board[5], *holes = NULL;
    double *tables = NULL;
    Py_buffer view = {0};
    int have_view = 0, status;
    const double *weights = NULL;
    if (!PyArg_ParseTuple(args, "OO|O:potential_tables", &holes_obj, &board_obj, &weights_obj))
        return NULL;
    int n_board = pt_parse_cards(board_obj, board, 3, 5, "board");
    if (n_board < 0)
        return NULL;
    uint64_t board_mask = 0;
    for (int i = 0; i < n_board; i++) {
        if (board_mask & (UINT64_C(1) << board[i]))
            return PyErr_Format(PyExc_ValueError, "potential_tables: board card %d appears twice", (int)board[i]);
        board_mask |= UINT64_C(1) << board[i];
    }
    holes_seq = PySequence_Fast(holes_obj, "potential_tables: holes must be a sequence of 2-card holes");
    if (!holes_seq)
        return NULL;
    Py_ssize_t n_holes = PySequence_Fast_GET_SIZE(holes_seq);
    if (n_holes < 1 || n_holes > EK_N_COMBOS) { /* ~40 KB of counters per hole */
        PyErr_Format(PyExc_ValueError, "potential_tables: need 1 to %d holes, got %zd", EK_N_COMBOS, n_holes);
        goto error;
    }
    holes = PyMem_Malloc((size_t)n_holes * 2);
    tables = PyMem_Malloc((size_t)n_holes * 9 * sizeof *tables);
    if (!holes || !tables) {
        PyErr_NoMemory();
        goto error;
    }
    for (Py_ssize_t p = 0; p < n_holes; p++) {
        uint8_t *h = holes + 2 * p;
        if (pt_parse_cards(PySequence_Fast_GET_ITEM(holes_seq, p), h, 2, 2, "hole") < 0)
            goto error;
        uint64_t m0 = UINT64_C(1) << h[0], m1 = UINT64_C(1) << h[1];
        if (h[0] == h[1] || ((m0 | m1) & board_mask)) {
            PyErr_Format(PyExc_ValueError, "potential_tables: hole %zd shares a card with itself or the board", p);
            goto error;
        }
    }
    if (weights_obj != Py_None) {
        if (PyObject_GetBuffer(weights_obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            goto error;
        have_view = 1;
        if (view.itemsize != sizeof(double) || !view.format || strcmp(view.format, "d") != 0 ||
            view.len != (Py_ssize_t)(EK_N_COMBOS * sizeof(double))) {
            PyErr_SetString(PyExc_ValueError, "potential_tables: weights must be a contiguous float64 buffer of 1326 values");
            goto error;
        }
        weights = view.buf;
        for (int i = 0; i < EK_N_COMBOS; i++)
            if (!(weights[i] >= 0.0) || weights[i] > 1e300) {
                PyErr_Format(PyExc_ValueError, "potential_tables: weights must be finite and non-negative (entry %d is %g)",
                             i, weights[i]);
                goto error;
            }
    }
    Py_BEGIN_ALLOW_THREADS
    status = ek_potential_tables(holes, (int)n_holes, board, n_board, weights, tables);
    Py_END_ALLOW_THREADS
    if (status == EK_ERR_NOMEM) {
        PyErr_NoMemory();
        goto error;
    }
    if (status == EK_ERR_NO_WEIGHT) {
        PyErr_SetString(PyExc_ValueError, "potential_tables: weights give no weight to any holding that does not clash "
                                          "with the known cards");
        goto error;
    }
    if (status) {
        PyErr_Format(PyExc_ValueError, "potential_tables: invalid cards (status %d)", status);
        goto error;
    }
    result = PyList_New(n_holes);
    if (!result)
        goto error;
    for (Py_ssize_t p = 0; p < n_holes; p++) {
        const double *t = tables + 9 * p;
        PyObject *x = Py_BuildValue("((ddd)(ddd)(ddd))", t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]);
        if (!x) {
            Py_CLEAR(result);
            goto error;
        }
        PyList_SET_ITEM(result, p, x);
    }
error:
    if (have_view)
        PyBuffer_Release(&view);
    PyMem_Free(tables);
    PyMem_Free(holes);
    Py_XDECREF(holes_seq);
    return result;
}

/* board_potential_tables: every holding of one flop or turn at once */
static PyObject *py_board_potential_tables(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *board_obj, *result = NULL;
    uint8_t board[5], *holes = NULL;
    double *tables = NULL;
    if (!PyArg_ParseTuple(args, "O:board_potential_tables", &board_obj))
        return NULL;
    int n_board = cards_from_sequence(board_obj, board, 3, 4, "board_potential_tables: board");
    if (n_board < 0)
        return NULL;
    for (int i = 0; i < n_board; i++)
        for (int k = 0; k < i; k++)
            if (board[i] == board[k])
                return PyErr_Format(PyExc_ValueError, "board_potential_tables: board card %d appears twice",
                                    (int)board[i]);
    holes = PyMem_Malloc(2 * EK_N_COMBOS);
    tables = PyMem_Malloc(9 * EK_N_COMBOS * sizeof *tables);
    if (!holes || !tables) {
        PyErr_NoMemory();
        goto error;
    }
    int n;
    Py_BEGIN_ALLOW_THREADS
    n = ek_board_potential_tables(board, n_board, holes, tables);
    Py_END_ALLOW_THREADS
    if (n < 0) {
        kernel_error(n, "board_potential_tables");
        goto error;
    }
    result = PyList_New(n);
    if (!result)
        goto error;
    for (int p = 0; p < n; p++) {
        const double *t = tables + 9 * p;
        PyObject *x = Py_BuildValue("((ii)((ddd)(ddd)(ddd)))", (int)holes[2 * p], (int)holes[2 * p + 1],
                                    t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]);
        if (!x) {
            Py_CLEAR(result);
            goto error;
        }
        PyList_SET_ITEM(result, p, x);
    }
error:
    PyMem_Free(tables);
    PyMem_Free(holes);
    return result;
}

/* ------------------------------------------------------------------------- */
/* Card abstraction kernels (abstraction_kernels.c, issue 10)                  */
/* ------------------------------------------------------------------------- */

/* A writable C-contiguous 1-D buffer of `n` items of struct format `fmt`, or -1 with an exception. */
static int out_buffer(PyObject *obj, Py_buffer *view, const char *fmt, Py_ssize_t itemsize, Py_ssize_t n,
                      const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
        return -1;
    if (view->itemsize != itemsize || !view->format || strcmp(view->format, fmt) != 0 || view->ndim != 1 ||
        view->shape[0] != n) {
        PyErr_Format(PyExc_ValueError, "%s: output arrays must be C-contiguous 1-D of %zd items ('%s')", what, n, fmt);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *py_abs_river_all(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *board_obj, *hs_obj, *values_obj;
    uint8_t board[5];
    Py_buffer hs = {0}, values = {0};
    if (!PyArg_ParseTuple(args, "OOO:abs_river_all", &board_obj, &hs_obj, &values_obj))
        return NULL;
    if (cards_from_sequence(board_obj, board, 5, 5, "board") < 0)
        return NULL;
    if (out_buffer(hs_obj, &hs, "d", 8, EK_N_COMBOS, "abs_river_all") < 0)
        return NULL;
    if (out_buffer(values_obj, &values, "i", 4, EK_N_COMBOS, "abs_river_all") < 0) {
        PyBuffer_Release(&hs);
        return NULL;
    }
    int status = ak_river_all(board, hs.buf, values.buf);
    PyBuffer_Release(&values);
    PyBuffer_Release(&hs);
    if (status)
        return kernel_error(status, "abs_river_all");
    Py_RETURN_NONE;
}

static PyObject *py_abs_board_metrics(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *board_obj, *hs_obj, *hs2_obj;
    uint8_t board[5];
    Py_buffer hs = {0}, hs2 = {0};
    if (!PyArg_ParseTuple(args, "OOO:abs_board_metrics", &board_obj, &hs_obj, &hs2_obj))
        return NULL;
    int n_board = cards_from_sequence(board_obj, board, 3, 5, "board");
    if (n_board < 0)
        return NULL;
    if (out_buffer(hs_obj, &hs, "d", 8, EK_N_COMBOS, "abs_board_metrics") < 0)
        return NULL;
    if (out_buffer(hs2_obj, &hs2, "d", 8, EK_N_COMBOS, "abs_board_metrics") < 0) {
        PyBuffer_Release(&hs);
        return NULL;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS /* a flop is ~1.3 M evaluations, tens of milliseconds */
    status = ak_board_metrics(board, n_board, hs.buf, hs2.buf);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&hs2);
    PyBuffer_Release(&hs);
    if (status)
        return kernel_error(status, "abs_board_metrics");
    Py_RETURN_NONE;
}

static PyObject *py_abs_river_accumulate(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *boards_obj, *sum_obj, *sum2_obj, *count_obj;
    Py_buffer boards = {0}, sum = {0}, sum2 = {0}, count = {0};
    PyObject *result = NULL;
    int have = 0;
    if (!PyArg_ParseTuple(args, "OOOO:abs_river_accumulate", &boards_obj, &sum_obj, &sum2_obj, &count_obj))
        return NULL;
    if (PyObject_GetBuffer(boards_obj, &boards, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    have = 1;
    if (boards.itemsize != 1 || !boards.format || strcmp(boards.format, "B") != 0 || boards.ndim != 2 ||
        boards.shape[1] != 5) {
        PyErr_SetString(PyExc_ValueError, "abs_river_accumulate: boards must be a C-contiguous uint8 array (n, 5)");
        goto error;
    }
    if (out_buffer(sum_obj, &sum, "d", 8, EK_N_COMBOS, "abs_river_accumulate") < 0)
        goto error;
    have = 2;
    if (out_buffer(sum2_obj, &sum2, "d", 8, EK_N_COMBOS, "abs_river_accumulate") < 0)
        goto error;
    have = 3;
    if (out_buffer(count_obj, &count, "d", 8, EK_N_COMBOS, "abs_river_accumulate") < 0)
        goto error;
    have = 4;
    size_t rows = (size_t)boards.shape[0];
    const size_t chunk = 256; /* ~1081 evaluations per board: a few ms per chunk */
    for (size_t first = 0; first < rows; first += chunk) {
        size_t n = rows - first < chunk ? rows - first : chunk;
        int status;
        Py_BEGIN_ALLOW_THREADS
        status = ak_river_accumulate((const uint8_t *)boards.buf + 5 * first, n, sum.buf, sum2.buf, count.buf);
        Py_END_ALLOW_THREADS
        if (status) {
            kernel_error(status, "abs_river_accumulate");
            goto error;
        }
        if (first + n < rows && PyErr_CheckSignals() < 0)
            goto error;
    }
    result = Py_NewRef(Py_None);
error:
    if (have >= 4)
        PyBuffer_Release(&count);
    if (have >= 3)
        PyBuffer_Release(&sum2);
    if (have >= 2)
        PyBuffer_Release(&sum);
    PyBuffer_Release(&boards);
    return result;
}

/* ------------------------------------------------------------------------- */
/* play against a range (range_kernels.c)                                    */
/* ------------------------------------------------------------------------- */

static PyObject *py_range_equity(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *hole_obj, *board_obj, *weights_obj, *trials_obj, *seed_obj, *eq_obj, *counted_obj;
    uint8_t hole[2], board[5];
    int n_board, status, have_weights;
    unsigned long long trials, seed;
    const double *weights = NULL;
    Py_buffer wview = {0}, eq = {0}, counted = {0};
    rk_equity *e = NULL;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "OOOOOOO:range_equity", &hole_obj, &board_obj, &weights_obj, &trials_obj, &seed_obj,
                          &eq_obj, &counted_obj))
        return NULL;
    if (parse_hole_board(hole_obj, board_obj, hole, board, 0, &n_board, "range_equity") < 0)
        return NULL;
    if (n_board == 1 || n_board == 2)
        return PyErr_Format(PyExc_ValueError, "range_equity: a board has 0, 3, 4 or 5 cards, got %d", n_board);
    if (get_u64(trials_obj, "trials", 0, EK_MAX_TRIALS, &trials) < 0)
        return NULL;
    if (get_u64(seed_obj, "seed", 0, UINT64_MAX, &seed) < 0)
        return NULL;
    have_weights = get_weights(weights_obj, &wview, &weights);
    if (have_weights < 0)
        return NULL;
    if (out_buffer(eq_obj, &eq, "d", 8, EK_N_COMBOS, "range_equity") < 0)
        goto done;
    if (out_buffer(counted_obj, &counted, "d", 8, EK_N_COMBOS, "range_equity") < 0)
        goto done;
    status = rk_equity_start(hole, board, n_board, weights, trials == 0, seed, &e);
    if (status == EK_ERR_ARGUMENT) {
        PyErr_Format(PyExc_ValueError, "range_equity: a %d-card board has more than %d runouts: give trials > 0",
                     n_board, RK_MAX_EXACT_RUNOUTS);
        goto done;
    }
    if (status) {
        kernel_error(status, "range_equity");
        goto done;
    }
    if (trials == 0) {
        Py_BEGIN_ALLOW_THREADS /* at most a flop: 1,081 runouts */
        rk_equity_exact(e);
        Py_END_ALLOW_THREADS
    } else {
        /* chunks of about CHUNK_EVALS evaluations; one random stream across them */
        unsigned long long per = (unsigned long long)rk_equity_holdings(e) + 1;
        unsigned long long chunk = CHUNK_EVALS / per ? CHUNK_EVALS / per : 1, done = 0;
        while (done < trials) {
            unsigned long long n = trials - done < chunk ? trials - done : chunk;
            Py_BEGIN_ALLOW_THREADS
            rk_equity_sample(e, n);
            Py_END_ALLOW_THREADS
            done += n;
            if (done < trials && PyErr_CheckSignals() < 0)
                goto done;
        }
    }
    rk_equity_finish(e, eq.buf, counted.buf);
    e = NULL;
    result = Py_NewRef(Py_None);
done:
    if (e)
        rk_equity_free(e);
    if (counted.obj)
        PyBuffer_Release(&counted);
    if (eq.obj)
        PyBuffer_Release(&eq);
    if (have_weights > 0)
        PyBuffer_Release(&wview);
    return result;
}

static PyObject *py_range_update(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *weights_obj, *likelihood_obj, *dead_obj;
    Py_buffer w = {0}, lk = {0};
    uint8_t dead[EK_N_CARDS];
    uint64_t mask = 0;
    double total = 0.0;
    if (!PyArg_ParseTuple(args, "OOO:range_update", &weights_obj, &likelihood_obj, &dead_obj))
        return NULL;
    int n_dead = cards_from_sequence(dead_obj, dead, 0, EK_N_CARDS, "dead cards");
    if (n_dead < 0)
        return NULL;
    for (int i = 0; i < n_dead; i++)
        mask |= UINT64_C(1) << dead[i];
    if (out_buffer(weights_obj, &w, "d", 8, EK_N_COMBOS, "range_update") < 0)
        return NULL;
    if (PyObject_GetBuffer(likelihood_obj, &lk, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&w);
        return NULL;
    }
    int status = EK_ERR_ARGUMENT;
    if (lk.itemsize == 8 && lk.format && strcmp(lk.format, "d") == 0 && lk.ndim == 1 && lk.shape &&
        lk.shape[0] == EK_N_COMBOS)
        status = rk_range_update(w.buf, lk.buf, mask, &total);
    PyBuffer_Release(&lk);
    PyBuffer_Release(&w);
    if (status)
        return PyErr_Format(PyExc_ValueError, "range_update: the likelihoods must be a contiguous float64 array of "
                            "1326 numbers in 0..1");
    return PyFloat_FromDouble(total);
}

static PyObject *py_tables_agree(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(args))
{
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = ek_tables_agree();
    Py_END_ALLOW_THREADS
    if (status < 0)
        return kernel_error(status, "tables_agree");
    return PyBool_FromLong(status);
}

/* ------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"tables_agree", py_tables_agree, METH_NOARGS,
     "tables_agree() -> bool: whether the lookup tables compiled in (built with the extension) equal tables "
     "built now from first principles (~10 ms)."},
    {"evaluate", py_evaluate, METH_VARARGS,
     "evaluate(cards) -> int: value 1..7462 of 5-7 distinct card numbers."},
    {"evaluate_batch", py_evaluate_batch, METH_VARARGS,
     "evaluate_batch(cards, out) -> None: cards uint8 (n, 5..7) C-contiguous; fills int32 out (n,)."},
    {"value_histogram", py_value_histogram, METH_VARARGS,
     "value_histogram(n_cards=7) -> tuple: number of n-card hands with each value (index 0 unused)."},
    {"category_counts", py_category_counts, METH_VARARGS,
     "category_counts(n_cards=7) -> 9-tuple: n-card hands per category, high card first."},
    {"hand_strength_counts", py_hand_strength_counts, METH_VARARGS,
     "hand_strength_counts(hole, board, weights=None) -> (ahead, tied, behind) counts or weight sums."},
    {"potential_table", py_potential_table, METH_VARARGS,
     "potential_table(hole, board, weights=None) -> 3x3 tuple of floats (rows now, columns later)."},
    {"hand_strength_squared", py_hand_strength_squared, METH_VARARGS,
     "hand_strength_squared(hole, board) -> float: E[HS^2] over the runouts."},
    {"showdown_deals", py_showdown_deals, METH_VARARGS,
     "showdown_deals(n_board, n_opponents) -> float: deals an exact enumeration visits."},
    {"showdown_exact", py_showdown_exact, METH_VARARGS,
     "showdown_exact(hole, board, n_opponents) -> (win, tie, lose) deal counts (at most EXACT_MAX_DEALS deals)."},
    {"showdown_monte_carlo", py_showdown_monte_carlo, METH_VARARGS,
     "showdown_monte_carlo(hole, board, n_opponents, trials, seed, chunk=0) -> (win, tie, lose) trial counts.\n"
     "trials 1..MAX_TRIALS, seed 0..2**64-1; runs in steps of `chunk` trials (0: a few ms of work)\n"
     "between which Ctrl-C is seen; the counts do not depend on `chunk`."},
    {"potential_tables", py_potential_tables, METH_VARARGS,
     "potential_tables(holes, board, weights=None) -> list of 3x3 tuples: potential_table of each hole "
     "(1..1326 2-card sequences) on one board, enumerated once for all of them."},
    {"board_potential_tables", py_board_potential_tables, METH_VARARGS,
     "board_potential_tables(board) -> list of ((low, high), 3x3 tuple): the unweighted potential_table of "
     "every holding disjoint from a 3- or 4-card board, in increasing order of (low, high), computed jointly."},
    {"abs_river_all", py_abs_river_all, METH_VARARGS,
     "abs_river_all(board5, hs, values) -> None: river HS (float64 hs[1326], -1 clashing) and hand values "
     "(int32 values[1326], 0 clashing) of every holding."},
    {"abs_board_metrics", py_abs_board_metrics, METH_VARARGS,
     "abs_board_metrics(board, hs, hs2) -> None: E[HS] and E[HS^2] over every runout of a 3..5-card board, "
     "for every holding (float64 [1326], -1 clashing)."},
    {"range_equity", py_range_equity, METH_VARARGS,
     "range_equity(hole, board, weights, trials, seed, eq, counted) -> None: equity against every holding of a "
     "range (1326), exact (trials 0) or over sampled runouts; fills float64 eq and counted (1326)."},
    {"range_update", py_range_update, METH_VARARGS,
     "range_update(weights, likelihood, dead) -> float: weights *= likelihood, 0 for holdings using a dead "
     "card; the new total."},
    {"abs_river_accumulate", py_abs_river_accumulate, METH_VARARGS,
     "abs_river_accumulate(boards, sum_hs, sum_hs2, count) -> None: add every holding's river HS, HS^2 and 1 "
     "over uint8 boards (n, 5); interruptible."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT,
    "_native",
    "Native hold'em hand evaluator kernels (use evaluator_ext.native, which cleans card-like input).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__native(void)
{
    int status = ek_init();
    if (status)
        return kernel_error(status, "evaluator_ext._native init");
    PyObject *m = PyModule_Create(&moddef);
    if (!m)
        return NULL;
    if (PyModule_AddIntConstant(m, "N_VALUES", EK_N_VALUES) < 0 ||
        PyModule_AddIntConstant(m, "EXACT_MAX_DEALS", (long)EK_EXACT_MAX_DEALS) < 0 ||
        PyModule_AddIntConstant(m, "MAX_TRIALS", (long)EK_MAX_TRIALS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
