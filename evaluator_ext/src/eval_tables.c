/* The evaluator's tables, built from first principles. See eval_tables.h. */
#include "eval_tables.h"

#include <stdlib.h>
#include <string.h>

#include "eval_kernels.h"
#include "xoshiro.h"

#define HASH_MAX_DISP 65536u
#define POW5 EK_POW5

const uint32_t EK_POW5[13] = {
    1u, 5u, 25u, 125u, 625u, 3125u, 15625u, 78125u, 390625u, 1953125u,
    9765625u, 48828125u, 244140625u,
};

static inline uint16_t table_lookup(const ek_tables *t, uint32_t rank_sum)
{
    uint64_t h = (uint64_t)rank_sum * t->mult;
    uint32_t bucket = (uint32_t)(h >> (64 - HASH_BUCKET_BITS));
    uint32_t slot = ((uint32_t)(h >> 32) + t->disp[bucket]) & (HASH_SLOTS - 1);
    return t->rank_value[slot];
}

static int straight_top(unsigned mask)
{
    for (int top = 12; top >= 4; top--)
        if (((mask >> (top - 4)) & 0x1Fu) == 0x1Fu)
            return top;
    if ((mask & 0x100Fu) == 0x100Fu) /* A-2-3-4-5 */
        return 3;
    return -1;
}

/* Comparable score of five cards: category << 20, then tie-break ranks in nibbles. */
static uint32_t score_of_counts5(const int count[13])
{
    int order[5], n = 0;
    for (int c = 4; c >= 1; c--)
        for (int r = 12; r >= 0; r--)
            if (count[r] == c)
                order[n++] = r;
    int first = count[order[0]], second = n > 1 ? count[order[1]] : 0;
    uint32_t cat;
    if (first == 4)
        cat = EK_QUADS;
    else if (first == 3)
        cat = second == 2 ? EK_FULL_HOUSE : EK_TRIPS;
    else if (first == 2)
        cat = second == 2 ? EK_TWO_PAIR : EK_ONE_PAIR;
    else {
        unsigned mask = 0;
        for (int i = 0; i < n; i++)
            mask |= 1u << order[i];
        int top = straight_top(mask);
        if (top >= 0)
            return ((uint32_t)EK_STRAIGHT << 20) | (uint32_t)top;
        cat = EK_HIGH_CARD;
    }
    uint32_t score = cat << 20;
    for (int i = 0; i < n; i++)
        score |= (uint32_t)order[i] << (16 - 4 * i);
    return score;
}

static uint32_t score_of_flush_mask(unsigned mask)
{
    int top = straight_top(mask);
    if (top >= 0)
        return ((uint32_t)EK_STRAIGHT_FLUSH << 20) | (uint32_t)top;
    uint32_t score = (uint32_t)EK_FLUSH << 20;
    int i = 0;
    for (int r = 12; r >= 0 && i < 5; r--)
        if (mask & (1u << r))
            score |= (uint32_t)r << (16 - 4 * i++);
    return score;
}

int ek_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint16_t dense_value(const uint32_t *sorted, uint32_t score)
{
    size_t lo = 0, hi = EK_N_VALUES;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sorted[mid] < score)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint16_t)(lo + 1);
}

/* All rank multisets of 5, 6 or 7 cards (each rank at most 4 times). */
typedef struct {
    uint32_t *key;
    uint8_t *size;
    size_t n;
} multisets;

static void collect_multisets(multisets *m, int rank, int left, uint32_t key, int size, int target)
{
    if (rank == 13) {
        if (left == 0) {
            m->key[m->n] = key;
            m->size[m->n] = (uint8_t)target;
            m->n++;
        }
        return;
    }
    for (int c = 0; c <= 4 && c <= left; c++)
        collect_multisets(m, rank + 1, left - c, key + (uint32_t)c * POW5[rank], size + c, target);
}

/* Hash-and-displace: try to place every key for multiplier `mult`. 1 on success. */
static int build_hash(ek_tables *t, const multisets *m, uint64_t mult, uint32_t *bucket_of, uint32_t *slot_of,
                      uint32_t *start, uint32_t *members, uint32_t *order, uint8_t *used)
{
    memset(start, 0, (HASH_BUCKETS + 1) * sizeof *start);
    for (size_t i = 0; i < m->n; i++) {
        uint64_t h = (uint64_t)m->key[i] * mult;
        bucket_of[i] = (uint32_t)(h >> (64 - HASH_BUCKET_BITS));
        slot_of[i] = (uint32_t)(h >> 32);
        start[bucket_of[i] + 1]++;
    }
    uint32_t largest = 0;
    for (uint32_t b = 0; b < HASH_BUCKETS; b++) {
        if (start[b + 1] > largest)
            largest = start[b + 1];
        start[b + 1] += start[b];
    }
    {   /* members grouped by bucket (counting sort) */
        uint32_t *fill = order; /* borrow as a cursor array */
        memcpy(fill, start, HASH_BUCKETS * sizeof *fill);
        for (size_t i = 0; i < m->n; i++)
            members[fill[bucket_of[i]]++] = (uint32_t)i;
    }
    /* buckets by size, largest first */
    size_t k = 0;
    for (uint32_t s = largest; s >= 1; s--)
        for (uint32_t b = 0; b < HASH_BUCKETS; b++)
            if (start[b + 1] - start[b] == s)
                order[k++] = b;
    memset(used, 0, HASH_SLOTS);
    memset(t->disp, 0, sizeof t->disp);
    for (size_t j = 0; j < k; j++) {
        uint32_t b = order[j], lo = start[b], hi = start[b + 1];
        uint32_t d;
        for (d = 0; d < HASH_MAX_DISP; d++) {
            int ok = 1;
            for (uint32_t a = lo; a < hi && ok; a++) {
                uint32_t s = (slot_of[members[a]] + d) & (HASH_SLOTS - 1);
                if (used[s])
                    ok = 0;
                for (uint32_t c = lo; c < a && ok; c++)
                    if (((slot_of[members[c]] + d) & (HASH_SLOTS - 1)) == s)
                        ok = 0;
            }
            if (ok)
                break;
        }
        if (d == HASH_MAX_DISP)
            return 0;
        t->disp[b] = (uint16_t)d;
        for (uint32_t a = lo; a < hi; a++)
            used[(slot_of[members[a]] + d) & (HASH_SLOTS - 1)] = 1;
    }
    return 1;
}

static void counts_of_key(uint32_t key, int count[13])
{
    for (int r = 0; r < 13; r++) {
        count[r] = (int)(key % 5);
        key /= 5;
    }
}

int ek_build_tables(ek_tables *t)
{
    int status = EK_ERR_NOMEM;
    multisets m = {NULL, NULL, 0};
    uint32_t *scores = NULL, *bucket_of = NULL, *slot_of = NULL, *start = NULL;
    uint32_t *members = NULL, *order = NULL;
    uint8_t *used = NULL;
    const size_t max_sets = 80000;

    m.key = malloc(max_sets * sizeof *m.key);
    m.size = malloc(max_sets);
    scores = malloc(8192 * sizeof *scores);
    bucket_of = malloc(max_sets * sizeof *bucket_of);
    slot_of = malloc(max_sets * sizeof *slot_of);
    start = malloc((HASH_BUCKETS + 1) * sizeof *start);
    members = malloc(max_sets * sizeof *members);
    order = malloc(HASH_BUCKETS * sizeof *order);
    used = malloc(HASH_SLOTS);
    if (!m.key || !m.size || !scores || !bucket_of || !slot_of || !start || !members || !order || !used)
        goto error;
    status = EK_ERR_INTERNAL;
    memset(t->rank_value, 0, sizeof t->rank_value);

    for (int size = 5; size <= 7; size++)
        collect_multisets(&m, 0, size, 0, 0, size);
    if (m.n != 6175 + 18395 + 49205)
        goto error;

    /* The 7462 classes: scores of all five-card rank multisets and all flush masks. */
    size_t n_scores = 0;
    int count[13];
    for (size_t i = 0; i < m.n; i++)
        if (m.size[i] == 5) {
            counts_of_key(m.key[i], count);
            scores[n_scores++] = score_of_counts5(count);
        }
    for (unsigned mask = 0; mask < 8192; mask++)
        if (__builtin_popcount(mask) == 5)
            scores[n_scores++] = score_of_flush_mask(mask);
    qsort(scores, n_scores, sizeof *scores, ek_cmp_u32);
    for (size_t i = 1; i < n_scores; i++)
        if (scores[i] == scores[i - 1])
            goto error;
    if (n_scores != EK_N_VALUES)
        goto error;

    for (unsigned mask = 0; mask < 8192; mask++)
        t->flush_value[mask] = __builtin_popcount(mask) >= 5 ? dense_value(scores, score_of_flush_mask(mask)) : 0;

    uint64_t seed = 20240601u;
    int placed = 0;
    for (int attempt = 0; attempt < 64 && !placed; attempt++) {
        t->mult = splitmix64(&seed) | 1u;
        placed = build_hash(t, &m, t->mult, bucket_of, slot_of, start, members, order, used);
    }
    if (!placed)
        goto error;

    /* Values by increasing size: 5 directly, 6 and 7 as the best sub-multiset one card smaller. */
    for (int size = 5; size <= 7; size++)
        for (size_t i = 0; i < m.n; i++) {
            if (m.size[i] != size)
                continue;
            counts_of_key(m.key[i], count);
            uint16_t best = 0;
            if (size == 5)
                best = dense_value(scores, score_of_counts5(count));
            else
                for (int r = 0; r < 13; r++)
                    if (count[r]) {
                        uint16_t v = table_lookup(t, m.key[i] - POW5[r]);
                        if (v > best)
                            best = v;
                    }
            uint64_t h = (uint64_t)m.key[i] * t->mult;
            uint32_t slot = ((uint32_t)(h >> 32) + t->disp[h >> (64 - HASH_BUCKET_BITS)]) & (HASH_SLOTS - 1);
            t->rank_value[slot] = best;
        }

    status = EK_OK;
error:
    free(m.key);
    free(m.size);
    free(scores);
    free(bucket_of);
    free(slot_of);
    free(start);
    free(members);
    free(order);
    free(used);
    return status;
}
