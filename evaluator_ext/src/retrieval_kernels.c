/* Exact retrieval aggregates over a grouped case layout: see retrieval_kernels.h.
 *
 * Exactness: each row's similarity is the sequence of float64 operations numpy performs in
 * cbr.similarity.similarity_into (the first weighted term starts the sum, then one addition
 * per column in column order, then one division by the weight sum; a linear term is
 * w * max(1 - |x - q| / range, 0)). Built with -std=c11, floating-point contraction is off
 * (no fused multiply-add), so every operation rounds as numpy's does and the bits agree.
 * Pruning never changes an answer: IEEE rounding is monotone, so raising one term never lowers
 * the computed sum; a group's bound (every free term at its maximum, the weight) and a
 * window's bound (every free term but the sort column's at its maximum) are therefore upper
 * bounds of the computed similarity of every row they cover, bit for bit, not approximately.
 */
#include "retrieval_kernels.h"

#include <math.h>
#include <stddef.h>

static inline double linear_term(double x, double q, double range, double w)
{
    double d = fabs(x - q);
    d = d / range;
    d = 1.0 - d;
    if (d < 0.0) /* np.maximum(out, 0.0); finite inputs give no NaN */
        d = 0.0;
    return d * w;
}

#define RK_MAX_COLS 256
#define RK_AHEAD 16
#define RK_CHUNK 1024
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch((p), 0, 0)
#else
#define PREFETCH(p) ((void)(p))
#endif
#define RK_MAX_FREE 64

/* One group's program for this query: the sum of the key terms before the first free column
 * (added in column order, as numpy adds them), then per remaining weighted column either a
 * key term (free index -1) or a free column. */
typedef struct {
    double prefix;
    int32_t first;          /* the first program entry not in the prefix */
    double val[RK_MAX_COLS];
    int32_t fidx[RK_MAX_COLS];
} group_prog;

static int prepare_group(const rk_layout *lay, const rk_program *p, int64_t g, group_prog *gp)
{
    const int32_t *gc = lay->gcodes + g * (int64_t)p->n_key;
    int32_t j = 0;
    double acc = 0.0;
    for (; j < p->n && p->kind[j] == 0; j++) {
        int32_t i = p->index[j];
        int64_t at = lay->offsets[i] + gc[i];
        if (gc[i] < 0 || at >= lay->offsets[i + 1])
            return RK_ERR_ARGUMENT;
        acc = j == 0 ? lay->tables[at] : acc + lay->tables[at];
    }
    gp->prefix = acc;
    gp->first = j;
    for (; j < p->n; j++) {
        int32_t i = p->index[j];
        if (p->kind[j] == 0) {
            int64_t at = lay->offsets[i] + gc[i];
            if (gc[i] < 0 || at >= lay->offsets[i + 1])
                return RK_ERR_ARGUMENT;
            gp->val[j] = lay->tables[at];
            gp->fidx[j] = -1;
        } else {
            gp->val[j] = 0.0;
            gp->fidx[j] = i;
        }
    }
    return RK_OK;
}

/* The similarity given the free terms ft[]: the group's program summed in column order. */
static inline double program_sum(const rk_program *p, const group_prog *gp, const double *ft)
{
    double acc = gp->prefix;
    for (int32_t j = gp->first; j < p->n; j++) {
        double term = gp->fidx[j] >= 0 ? ft[gp->fidx[j]] : gp->val[j];
        acc = j == 0 ? term : acc + term;
    }
    return acc / p->total;
}

/* The bound of row r: every free term at its maximum (the weight) but the sort column's. */
static inline double window_bound(const rk_layout *lay, const rk_program *p, const group_prog *gp, int64_t r,
                                  double *ft)
{
    int32_t sc = p->sort_free;
    ft[sc] = linear_term((double)lay->free[(int64_t)sc * lay->n_rows + r], p->fq[sc], p->frange[sc], p->fw[sc]);
    double s = program_sum(p, gp, ft);
    ft[sc] = p->fw[sc];
    return s;
}

/* Whether (s1, id1) ranks after (s2, id2): lower similarity, or equal and larger id. */
static inline int worse(double s1, int64_t id1, double s2, int64_t id2)
{
    return s1 < s2 || (s1 == s2 && id1 > id2);
}

/* The top list: a binary heap of capacity k whose root is the worst entry kept. */
static void sift_down(int64_t *ids, double *sims, int64_t n, int64_t i)
{
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && worse(sims[l], ids[l], sims[w], ids[w]))
            w = l;
        if (r < n && worse(sims[r], ids[r], sims[w], ids[w]))
            w = r;
        if (w == i)
            return;
        double ts = sims[i];
        int64_t ti = ids[i];
        sims[i] = sims[w];
        ids[i] = ids[w];
        sims[w] = ts;
        ids[w] = ti;
        i = w;
    }
}

static inline void offer(int64_t k, int64_t *ids, double *sims, int64_t *n, double s, int64_t id)
{
    int64_t m = *n;
    if (m == k) {
        if (!worse(sims[0], ids[0], s, id))
            return; /* not better than the worst kept */
        sims[0] = s;
        ids[0] = id;
        sift_down(ids, sims, m, 0);
        return;
    }
    int64_t i = m;
    (*n)++;
    while (i > 0) {
        int64_t parent = (i - 1) / 2;
        if (!worse(s, id, sims[parent], ids[parent]))
            break;
        sims[i] = sims[parent];
        ids[i] = ids[parent];
        i = parent;
    }
    sims[i] = s;
    ids[i] = id;
}

/* Sort the heap into similarity descending, then id ascending (heap sort: pop the worst to the end). */
static void finish_top(int64_t *ids, double *sims, int64_t n)
{
    for (int64_t m = n - 1; m > 0; m--) {
        double ts = sims[0];
        int64_t ti = ids[0];
        sims[0] = sims[m];
        ids[0] = ids[m];
        sims[m] = ts;
        ids[m] = ti;
        sift_down(ids, sims, m, 0);
    }
}

/* The per-action sums of the hits of one scan. */
typedef struct {
    double count[3], pos_sim[3], known[3], outcome[3], sim_sum;
} hit_sums;

/* Count one hit of similarity `sim` with the label at `at`: RK_ERR_CODE for a bad action code. */
static inline int add_hit(hit_sums *h, const int8_t *codes, const double *outcomes, int64_t at, double sim)
{
    int c = codes[at];
    if (c < 0 || c > 2)
        return RK_ERR_CODE;
    h->count[c] += 1.0;
    h->pos_sim[c] += sim > 0.0 ? sim : 0.0;
    h->sim_sum += sim;
    if (outcomes) {
        double o = outcomes[at];
        if (o == o) {
            h->known[c] += 1.0;
            h->outcome[c] += o;
        }
    }
    return RK_OK;
}

static void store_totals(const hit_sums *h, rk_totals *tot)
{
    for (int a = 0; a < 3; a++) {
        tot->count[a] = h->count[a];
        tot->pos_sim[a] = h->pos_sim[a];
        tot->known[a] = h->known[a];
        tot->outcome[a] = h->outcome[a];
        tot->hits += (int64_t)h->count[a];
    }
    tot->sim_sum = h->sim_sum;
}

int rk_scan(const rk_layout *lay, const rk_program *p, const int8_t *codes, int64_t n_codes,
            const double *outcomes, int by_row, int64_t k, int64_t *top_ids, double *top_sims, int64_t *n_top,
            rk_totals *tot)
{
    const double t = p->threshold;
    const int32_t sc = p->sort_free, nf = p->n_free;
    *n_top = 0;
    for (int a = 0; a < 3; a++)
        tot->count[a] = tot->pos_sim[a] = tot->known[a] = tot->outcome[a] = 0.0;
    tot->sim_sum = 0.0;
    tot->hits = tot->scanned = 0;
    if (p->n < 1 || p->n > RK_MAX_COLS || nf > RK_MAX_FREE || k < 1 || (nf > 0 && (sc < 0 || sc >= nf)))
        return RK_ERR_ARGUMENT;
    for (int32_t j = 0; j < p->n; j++) {
        int32_t lim = p->kind[j] == 0 ? p->n_key : nf;
        if ((p->kind[j] != 0 && p->kind[j] != 1) || p->index[j] < 0 || p->index[j] >= lim)
            return RK_ERR_ARGUMENT;
    }
    for (int32_t i = 0; i < p->n_key; i++)
        if (lay->offsets[i] < 0 || lay->offsets[i + 1] < lay->offsets[i])
            return RK_ERR_ARGUMENT;
    group_prog gp;
    double fmax[RK_MAX_FREE], ft[RK_MAX_FREE], sims[RK_CHUNK], acc[RK_CHUNK];
    int32_t pos[RK_CHUNK];
    hit_sums hs = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, 0.0};
    const double total = p->total;
    for (int32_t i = 0; i < nf; i++)
        fmax[i] = p->fw[i];
    for (int64_t g = 0; g < lay->n_groups; g++) {
        int64_t gs = lay->gstart[g], ge = lay->gstart[g + 1];
        if (gs < 0 || ge < gs || ge > lay->n_rows)
            return RK_ERR_ARGUMENT;
        if (gs == ge)
            continue;
        if (prepare_group(lay, p, g, &gp))
            return RK_ERR_ARGUMENT;
        if (program_sum(p, &gp, fmax) < t)
            continue; /* even a perfect match of the free columns stays below the threshold */
        int64_t lo = gs, hi = ge;
        if (nf > 0) {
            const double q = p->fq[sc];
            for (int32_t i = 0; i < nf; i++)
                ft[i] = fmax[i];
            /* m: the first row whose sort value is >= q (rows ascend by it) */
            int64_t a = gs, b = ge;
            while (a < b) {
                int64_t mid = a + (b - a) / 2;
                if ((double)lay->free[(int64_t)sc * lay->n_rows + mid] < q)
                    a = mid + 1;
                else
                    b = mid;
            }
            int64_t m = a;
            /* below q the bound rises with the row: the first row reaching t */
            a = gs, b = m;
            while (a < b) {
                int64_t mid = a + (b - a) / 2;
                if (window_bound(lay, p, &gp, mid, ft) >= t)
                    b = mid;
                else
                    a = mid + 1;
            }
            lo = a;
            /* from q on it falls: the first row below t */
            a = m, b = ge;
            while (a < b) {
                int64_t mid = a + (b - a) / 2;
                if (window_bound(lay, p, &gp, mid, ft) >= t)
                    a = mid + 1;
                else
                    b = mid;
            }
            hi = a;
        }
        tot->scanned += hi - lo;
        /* In chunks: score every row (no data-dependent branch, so the out-of-order core
         * overlaps rows), keep the hits' positions branch-free, then count the hits. */
        for (int64_t c0 = lo; c0 < hi; c0 += RK_CHUNK) {
            int64_t c1 = c0 + RK_CHUNK < hi ? c0 + RK_CHUNK : hi;
            int32_t len = (int32_t)(c1 - c0), nh = 0;
            /* column by column over the chunk, in the program's order (vectorisable loops;
             * SIMD arithmetic rounds exactly as scalar) */
            if (gp.first == p->n) /* no free column: every row of the group scores the prefix */
                for (int32_t r = 0; r < len; r++)
                    acc[r] = gp.prefix;
            for (int32_t j = gp.first; j < p->n; j++) {
                int32_t fi = gp.fidx[j];
                if (fi >= 0) {
                    const float *col = lay->free + (int64_t)fi * lay->n_rows + c0;
                    const double q = p->fq[fi], range = p->frange[fi], w = p->fw[fi];
                    if (j == 0) {
                        for (int32_t r = 0; r < len; r++)
                            acc[r] = linear_term((double)col[r], q, range, w);
                    } else if (j == gp.first) {
                        const double prefix = gp.prefix;
                        for (int32_t r = 0; r < len; r++)
                            acc[r] = prefix + linear_term((double)col[r], q, range, w);
                    } else {
                        for (int32_t r = 0; r < len; r++)
                            acc[r] = acc[r] + linear_term((double)col[r], q, range, w);
                    }
                } else {
                    const double v = gp.val[j];
                    for (int32_t r = 0; r < len; r++)
                        acc[r] = acc[r] + v;
                }
            }
            for (int32_t r = 0; r < len; r++)
                acc[r] = acc[r] / total;
            for (int32_t r = 0; r < len; r++) {
                double sim = acc[r];
                sims[nh] = sim;
                pos[nh] = r;
                nh += sim >= t;
            }
            for (int32_t h = 0; h < nh; h++) {
                int64_t row = c0 + pos[h];
                int64_t at = by_row ? row : lay->ids[row]; /* where this case's labels are */
                if (!by_row && h + RK_AHEAD < nh) { /* labels read by case id: fetch them early */
                    int64_t ahead = lay->ids[c0 + pos[h + RK_AHEAD]];
                    if (ahead >= 0 && ahead < n_codes) {
                        PREFETCH(codes + ahead);
                        if (outcomes)
                            PREFETCH(outcomes + ahead);
                    }
                }
                double sim = sims[h];
                if (at < 0 || at >= n_codes)
                    return RK_ERR_ARGUMENT;
                if (add_hit(&hs, codes, outcomes, at, sim) != RK_OK)
                    return RK_ERR_CODE;
                if (*n_top < k || sim >= top_sims[0]) /* else it cannot enter the top */
                    offer(k, top_ids, top_sims, n_top, sim, lay->ids[row]);
            }
        }
    }
    store_totals(&hs, tot);
    finish_top(top_ids, top_sims, *n_top);
    return RK_OK;
}

int rk_scan_rows(const float *rows, int64_t n_rows, int32_t d, int64_t first_id, const int32_t *gcodes, int32_t n_key,
                 const double *tables, const int64_t *offsets, const int8_t *kind, const int32_t *index,
                 const double *q, const double *range, const double *w, int32_t n, double total, double threshold,
                 const int8_t *codes, int64_t n_codes, const double *outcomes, int64_t k, int64_t *top_ids,
                 double *top_sims, int64_t *n_top, rk_totals *tot)
{
    *n_top = 0;
    for (int a = 0; a < 3; a++)
        tot->count[a] = tot->pos_sim[a] = tot->known[a] = tot->outcome[a] = 0.0;
    tot->sim_sum = 0.0;
    tot->hits = tot->scanned = 0;
    if (n < 1 || k < 1 || n_rows < 0 || first_id < 0 || first_id + n_rows > n_codes)
        return RK_ERR_ARGUMENT;
    for (int32_t j = 0; j < n; j++) {
        int32_t lim = kind[j] == 0 ? n_key : d;
        if ((kind[j] != 0 && kind[j] != 1) || index[j] < 0 || index[j] >= lim)
            return RK_ERR_ARGUMENT;
    }
    hit_sums hs = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, 0.0};
    for (int64_t r = 0; r < n_rows; r++) {
        const float *row = rows + r * (int64_t)d;
        const int32_t *gc = gcodes + r * (int64_t)n_key;
        double acc = 0.0;
        for (int32_t j = 0; j < n; j++) {
            int32_t i = index[j];
            double term;
            if (kind[j] == 0) {
                int64_t at = offsets[i] + gc[i];
                if (gc[i] < 0 || at >= offsets[i + 1])
                    return RK_ERR_ARGUMENT;
                term = tables[at];
            } else {
                term = linear_term((double)row[i], q[j], range[j], w[j]);
            }
            acc = j == 0 ? term : acc + term;
        }
        double sim = acc / total;
        if (!(sim >= threshold))
            continue;
        int64_t id = first_id + r;
        if (add_hit(&hs, codes, outcomes, id, sim) != RK_OK)
            return RK_ERR_CODE;
        if (*n_top < k || sim >= top_sims[0])
            offer(k, top_ids, top_sims, n_top, sim, id);
    }
    store_totals(&hs, tot);
    tot->scanned = n_rows;
    finish_top(top_ids, top_sims, *n_top);
    return RK_OK;
}
