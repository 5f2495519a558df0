/* Native kernels for play against a range (see range_kernels.h). */
#include "range_kernels.h"

#include <stdlib.h>
#include <string.h>

#include "eval_kernels.h"
#include "xoshiro.h"

/* Holding index of two distinct cards (colex order). */
static int combo_of(int a, int b)
{
    int hi = a > b ? a : b, lo = a > b ? b : a;
    return hi * (hi - 1) / 2 + lo;
}

/* Uniform integer in 0..n-1 (n small: Lemire's multiply-shift; the bias is below 2^-50). */
static inline int rng_below(xoshiro256 *r, int n) { return (int)(((xoshiro_next(r) >> 11) * (uint64_t)n) >> 53); }

/* The work of one equity call: the known cards, the deck left, the random stream, and the
 * holdings of the range that clash with no known card, as parallel arrays. */
struct rk_equity {
    uint8_t hole[2], full[5], deck[EK_N_CARDS];
    int n_board, m;
    xoshiro256 rng;
    int n;
    int16_t idx[EK_N_COMBOS];
    uint8_t c1[EK_N_COMBOS], c2[EK_N_COMBOS];
    uint64_t mask[EK_N_COMBOS];
    double win[EK_N_COMBOS], tie[EK_N_COMBOS], count[EK_N_COMBOS];
};
typedef struct rk_equity rk_active;

/* One complete board: the hero's value against every active holding that the runout leaves
 * possible (runout: the bits of the cards dealt after the known board). */
static void score_board(const uint8_t hole[2], const uint8_t full[5], uint64_t runout, rk_active *a)
{
    uint8_t cards[7];
    memcpy(cards + 2, full, 5);
    cards[0] = hole[0];
    cards[1] = hole[1];
    const uint16_t hero = ek_evaluate(cards, 7);
    for (int i = 0; i < a->n; i++) {
        if (a->mask[i] & runout)
            continue;
        cards[0] = a->c1[i];
        cards[1] = a->c2[i];
        const uint16_t them = ek_evaluate(cards, 7);
        a->count[i] += 1.0;
        if (hero > them)
            a->win[i] += 1.0;
        else if (hero == them)
            a->tie[i] += 1.0;
    }
}

static double choose(int n, int k)
{
    double r = 1.0;
    for (int i = 0; i < k; i++)
        r = r * (double)(n - i) / (double)(i + 1);
    return r;
}

int rk_equity_start(const uint8_t hole[2], const uint8_t *board, int n_board, const double *weights,
                    int exact, uint64_t seed, rk_equity **out)
{
    *out = NULL;
    if (n_board != 0 && n_board != 3 && n_board != 4 && n_board != 5)
        return EK_ERR_ARGUMENT;
    uint64_t known = 0;
    for (int i = 0; i < 2 + n_board; i++) {
        uint8_t c = i < 2 ? hole[i] : board[i - 2];
        if (c >= EK_N_CARDS)
            return EK_ERR_RANGE;
        if (known & (UINT64_C(1) << c))
            return EK_ERR_DUPLICATE;
        known |= UINT64_C(1) << c;
    }
    rk_equity *e = malloc(sizeof *e);
    if (!e)
        return EK_ERR_NOMEM;
    e->hole[0] = hole[0];
    e->hole[1] = hole[1];
    e->n_board = n_board;
    memcpy(e->full, board, (size_t)n_board);
    e->m = 0;
    for (int c = 0; c < EK_N_CARDS; c++)
        if (!(known & (UINT64_C(1) << c)))
            e->deck[e->m++] = (uint8_t)c;
    if (exact && rk_equity_runouts(e) > RK_MAX_EXACT_RUNOUTS) {
        free(e);
        return EK_ERR_ARGUMENT;
    }
    xoshiro_seed(&e->rng, seed);
    e->n = 0;
    for (int hi = 1; hi < EK_N_CARDS; hi++)
        for (int lo = 0; lo < hi; lo++) {
            const int h = combo_of(hi, lo);
            const uint64_t mask = (UINT64_C(1) << hi) | (UINT64_C(1) << lo);
            if ((known & mask) || (weights && !(weights[h] > 0.0)))
                continue;
            const int i = e->n++;
            e->idx[i] = (int16_t)h;
            e->c1[i] = (uint8_t)hi;
            e->c2[i] = (uint8_t)lo;
            e->mask[i] = mask;
            e->win[i] = e->tie[i] = e->count[i] = 0.0;
        }
    if (e->n == 0) {
        free(e);
        return EK_ERR_NO_WEIGHT;
    }
    *out = e;
    return EK_OK;
}

double rk_equity_runouts(const rk_equity *e) { return choose(e->m, 5 - e->n_board); }

int rk_equity_holdings(const rk_equity *e) { return e->n; }

void rk_equity_exact(rk_equity *e)
{
    const int need = 5 - e->n_board, m = e->m, nb = e->n_board;
    int pick[5] = {0, 1, 2, 3, 4}; /* combinations of `need` deck cards, lexicographic */
    for (;;) {
        uint64_t runout = 0;
        for (int j = 0; j < need; j++) {
            e->full[nb + j] = e->deck[pick[j]];
            runout |= UINT64_C(1) << e->deck[pick[j]];
        }
        score_board(e->hole, e->full, runout, e);
        int j = need - 1;
        while (j >= 0 && pick[j] == m - need + j)
            j--;
        if (j < 0)
            break;
        pick[j]++;
        for (int k = j + 1; k < need; k++)
            pick[k] = pick[k - 1] + 1;
    }
}

void rk_equity_sample(rk_equity *e, uint64_t trials)
{
    const int need = 5 - e->n_board, m = e->m, nb = e->n_board;
    uint8_t *d = e->deck; /* shuffled in place: any order of the deck is as good a start */
    for (uint64_t t = 0; t < trials; t++) {
        uint64_t runout = 0;
        for (int j = 0; j < need; j++) { /* partial Fisher-Yates: the first `need` cards of a shuffle */
            const int k = j + rng_below(&e->rng, m - j);
            const uint8_t tmp = d[j];
            d[j] = d[k];
            d[k] = tmp;
            e->full[nb + j] = d[j];
            runout |= UINT64_C(1) << d[j];
        }
        score_board(e->hole, e->full, runout, e);
    }
}

void rk_equity_finish(rk_equity *e, double *eq, double *counted)
{
    for (int h = 0; h < EK_N_COMBOS; h++) {
        eq[h] = -1.0;
        counted[h] = 0.0;
    }
    for (int i = 0; i < e->n; i++) {
        const int h = e->idx[i];
        counted[h] = e->count[i];
        if (e->count[i] > 0.0)
            eq[h] = (e->win[i] + 0.5 * e->tie[i]) / e->count[i];
    }
    free(e);
}

void rk_equity_free(rk_equity *e) { free(e); }

int rk_range_equity(const uint8_t hole[2], const uint8_t *board, int n_board, const double *weights,
                    uint64_t trials, uint64_t seed, double *eq, double *counted)
{
    if (trials > UINT64_C(1000000000))
        return EK_ERR_ARGUMENT;
    rk_equity *e;
    int status = rk_equity_start(hole, board, n_board, weights, trials == 0, seed, &e);
    if (status)
        return status;
    if (trials == 0)
        rk_equity_exact(e);
    else
        rk_equity_sample(e, trials);
    rk_equity_finish(e, eq, counted);
    return EK_OK;
}

int rk_range_update(double *weights, const double *likelihood, uint64_t dead, double *total)
{
    for (int h = 0; h < EK_N_COMBOS; h++)
        if (!(likelihood[h] >= 0.0 && likelihood[h] <= 1.0))
            return EK_ERR_ARGUMENT;
    double sum = 0.0;
    for (int hi = 1; hi < EK_N_CARDS; hi++)
        for (int lo = 0; lo < hi; lo++) {
            const int h = combo_of(hi, lo);
            const uint64_t mask = (UINT64_C(1) << hi) | (UINT64_C(1) << lo);
            double w = (dead & mask) ? 0.0 : weights[h] * likelihood[h];
            weights[h] = w;
            sum += w;
        }
    *total = sum;
    return EK_OK;
}
