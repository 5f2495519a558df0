/* The evaluator's lookup tables and how they are built: plain C11, no Python.h.
 *
 * ek_build_tables() computes the tables that eval_kernels.c looks hands up in (see
 * eval_kernels.h for the keys): the perfect hash of every 5-, 6- and 7-card rank multiset
 * (hash-and-displace: a multiplier and one displacement per bucket) with each multiset's
 * value, and the value of every 13-bit flush rank mask. Building them takes ~10 ms, so the
 * build runs it once (gen_eval_tables.c, called by setup.py) and compiles the result into
 * the extensions as eval_tables_data.h; ek_tables_agree() (eval_kernels.c) rebuilds them to
 * check that the compiled tables are these.
 *
 * Example (C):
 *     static ek_tables t;
 *     ek_build_tables(&t);   // EK_OK; t.rank_value, t.disp, t.mult, t.flush_value
 */
#ifndef EVAL_TABLES_H
#define EVAL_TABLES_H

#include <stdint.h>

#define HASH_BUCKET_BITS 15
#define HASH_SLOT_BITS 17
#define HASH_BUCKETS (1u << HASH_BUCKET_BITS)
#define HASH_SLOTS (1u << HASH_SLOT_BITS)

typedef struct {
    uint64_t mult;                    /* the hash multiplier */
    uint16_t disp[HASH_BUCKETS];      /* displacement of each bucket */
    uint16_t rank_value[HASH_SLOTS];  /* value by perfect hash of the rank-multiset sum */
    uint16_t flush_value[8192];       /* value by 13-bit rank mask of the flush suit */
} ek_tables;

/* 5^rank: a card's share of the rank-multiset sum. */
extern const uint32_t EK_POW5[13];

/* qsort comparator of uint32_t. */
int ek_cmp_u32(const void *a, const void *b);

/* Fill *t (EK_OK, EK_ERR_NOMEM, or EK_ERR_INTERNAL for a bug). Deterministic. */
int ek_build_tables(ek_tables *t);

#endif
