/* What the two external-sampling walks share: the teacher's MCCFR (mccfr_kernels.c) and the
 * counter-strategies' restricted walk (rnr_kernels.c). The same draws in the same order, so a
 * counter-strategy run with p = 0 is the plain run, bit for bit. */
#ifndef MCCFR_WALK_H
#define MCCFR_WALK_H

#include <stdint.h>

#include "mccfr_kernels.h"
#include "xoshiro.h"

/* A uniform double in [0, 1) from the top 53 bits. */
static inline double mc_uniform01(xoshiro256 *rng)
{
    return (double)(xoshiro_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* Regret matching over k actions into sigma; returns whether the row's regrets were ever
 * updated (not all 0): an untrained row plays uniform and adds nothing to the average. */
static inline int mc_strategy_of(const double *regret, int k, double *sigma)
{
    double sum = 0.0;
    int trained = 0;
    for (int a = 0; a < k; a++) {
        sigma[a] = regret[a] > 0.0 ? regret[a] : 0.0;
        sum += sigma[a];
        trained |= regret[a] != 0.0;
    }
    for (int a = 0; a < k; a++)
        sigma[a] = sum > 0.0 ? sigma[a] / sum : 1.0 / k;
    return trained;
}

/* An action drawn from sigma (one uniform draw). */
static inline int mc_sample(xoshiro256 *rng, const double *sigma, int k)
{
    double x = mc_uniform01(rng);
    int a = 0;
    while (a < k - 1 && x >= sigma[a]) {
        x -= sigma[a];
        a++;
    }
    return a;
}

/* A fold or showdown node's value for player me (winner: 0, 1, or -1 on a tie): 1 and *value
 * set; 0 for any other node. */
static inline int mc_terminal(const mc_game *g, int32_t node, int me, int winner, double *value)
{
    if (g->kind[node] == MC_FOLD) {
        *value = g->player[node] == me ? -g->stake[node] : g->stake[node];
        return 1;
    }
    if (g->kind[node] == MC_SHOWDOWN) {
        *value = winner < 0 ? 0.0 : (winner == me ? g->stake[node] : -g->stake[node]);
        return 1;
    }
    return 0;
}

#endif
