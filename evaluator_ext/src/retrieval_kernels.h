/* Exact CASPER retrieval aggregates over a grouped case layout (cbr/retrieval/aggregate.py).
 *
 * Cases are stored grouped by their "key" columns (discrete features: the same key, the same
 * local similarities for any query) and, inside a group, sorted by one "free" column (a
 * linear measure). A query's global similarity is evaluated with exactly the operations of
 * cbr.similarity.similarity_into (float64, column order, the same roundings), so its bits
 * equal numpy's; whole groups whose upper bound is below the threshold are skipped and inside
 * a group only the window of the sort column that can reach the threshold is scanned.
 */
#ifndef RETRIEVAL_KERNELS_H
#define RETRIEVAL_KERNELS_H

#include <stdint.h>

#define RK_OK 0
#define RK_ERR_ARGUMENT 1   /* a size, index or program entry out of range */
#define RK_ERR_CODE 2       /* an action code outside 0..2 */

/* One weighted column of the similarity, in column order: kind 0 = key column `index`
 * (its term, weight already applied, comes from the group's row of key_terms), kind 1 = free
 * column `index` (linear: w * max(1 - |x - q| / range, 0), computed per row). */
typedef struct {
    const int8_t *kind;
    const int32_t *index;
    int32_t n;              /* weighted columns */
    const double *fq;       /* per free column: query value (the float32 query as double) */
    const double *frange;   /* per free column: high - low */
    const double *fw;       /* per free column: weight */
    int32_t n_free;
    int32_t n_key;
    int32_t sort_free;      /* the free column rows are sorted by inside a group */
    double total;           /* sum of the weights */
    double threshold;
} rk_program;

typedef struct {
    const float *free;      /* (n_free, n_rows): the layout rows' free columns, column by column */
    const int64_t *ids;     /* (n_rows,) case id of each layout row */
    int64_t n_rows;
    const int64_t *gstart;  /* (n_groups + 1,) group offsets into the layout */
    int64_t n_groups;
    const int32_t *gcodes;  /* (n_groups, n_key) each group's value number per key column */
    const double *tables;   /* this query's key-column terms: column i's values at offsets[i].. */
    const int64_t *offsets; /* (n_key + 1,) where each key column's table starts in `tables` */
} rk_layout;

/* What a query's hits add up to; counts are exact integers held in doubles. */
typedef struct {
    double count[3];        /* hits per action code */
    double pos_sim[3];      /* sum of max(similarity, 0) per action code */
    double known[3];        /* hits with a known (non-NaN) outcome per action code */
    double outcome[3];      /* sum of those outcomes per action code */
    double sim_sum;         /* sum of the hits' similarities */
    int64_t hits;
    int64_t scanned;        /* rows whose similarity was computed */
} rk_totals;

/* Scan the layout for one query: every row with similarity >= threshold is counted into
 * `totals` (its action code and, if outcomes is not NULL, its outcome: codes[id] and
 * outcomes[id] by case id, or with by_row codes[row] and outcomes[row] by layout row) and
 * offered to the top-k list (top_ids/top_sims, similarity descending then id ascending;
 * *n_top its length). Label indexes must be < n_codes. Returns RK_OK or an RK_ERR_* code. */
int rk_scan(const rk_layout *lay, const rk_program *p, const int8_t *codes, int64_t n_codes,
            const double *outcomes, int by_row, int64_t k, int64_t *top_ids, double *top_sims, int64_t *n_top,
            rk_totals *totals);

/* The few cases appended since the layouts, scored one by one (no grouping, no pruning): rows
 * (n_rows, d) row-major float32 with case ids first_id.., each similarity the same float64
 * operations as above, in program order: entry j of the n entries is key column index[j]
 * (its term tables[offsets[i] + gcodes[r * n_key + i]], weight applied) when kind[j] == 0,
 * else the linear term of rows column index[j] with query value q[j], range[j], weight w[j].
 * Labels codes[id] / outcomes[id] by case id (< n_codes). Totals and the top list as rk_scan.
 * Returns RK_OK or an RK_ERR_* code. */
int rk_scan_rows(const float *rows, int64_t n_rows, int32_t d, int64_t first_id, const int32_t *gcodes, int32_t n_key,
                 const double *tables, const int64_t *offsets, const int8_t *kind, const int32_t *index,
                 const double *q, const double *range, const double *w, int32_t n, double total, double threshold,
                 const int8_t *codes, int64_t n_codes, const double *outcomes, int64_t k, int64_t *top_ids,
                 double *top_sims, int64_t *n_top, rk_totals *tot);

#endif
