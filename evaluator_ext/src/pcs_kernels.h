/* Public-chance-sampling MCCFR (PCS; Johanson, Bard, Lanctot, Gibson and Bowling 2012,
 * "Efficient Nash equilibrium approximation through Monte Carlo counterfactual regret
 * minimization") on the game of mccfr_kernels.h: plain C11, no Python.h. The caller is
 * cbr/cfr/mccfr.py (sampling="public") and, on small games, cbr/cfr/small.py.
 *
 * An iteration samples the public chance only (the five board cards at once), then walks
 * the betting tree once per player with vectors over every holding the board leaves: each
 * player's reach per holding, a per-holding strategy from the regret row of (node, that
 * holding's bucket on the node's street), and counterfactual values per holding. A row's
 * regret gains the sum over its holdings (imperfect recall: holdings sharing a bucket share a
 * row); its average gains the strategy weighted by the walker's own reach, summed likewise.
 * Terminals cost O(n): a fold is worth the opponent's total reach compatible with the holding
 * (inclusion-exclusion over its cards), a showdown one sweep of the holdings sorted by hand
 * value with per-card sums (exact card removal, ties half). Same table layout as the
 * external-sampling walk, so checkpoints, strategies and the bots read either.
 */
#ifndef PCS_KERNELS_H
#define PCS_KERNELS_H

#include <stdint.h>

#include "mccfr_kernels.h"

#define PCS_MAX_HOLDINGS MC_N_COMBOS

/* One public chance outcome as a walk sees it: the n holdings it leaves (renumbered 0..n-1),
 * their cards (a == b for a game of one-card holdings), their bucket on each street, and
 * their order by hand value at a showdown (order[i] ascending by value[i]). */
typedef struct {
    int32_t n;
    int16_t holding[PCS_MAX_HOLDINGS]; /* the holding's number in the game (hold'em: its combo) */
    uint8_t card_a[PCS_MAX_HOLDINGS], card_b[PCS_MAX_HOLDINGS];
    int32_t bucket[4][PCS_MAX_HOLDINGS];
    int16_t order[PCS_MAX_HOLDINGS];
    uint32_t value[PCS_MAX_HOLDINGS];
    /* in that order: the cards, and the groups of equal value (group g: group_start[g] ..
     * group_start[g + 1]; filled with the runs) */
    uint8_t sorted_a[PCS_MAX_HOLDINGS], sorted_b[PCS_MAX_HOLDINGS];
    int32_t n_groups;
    int16_t group_start[PCS_MAX_HOLDINGS + 1];
    /* per street, the holdings grouped by bucket: runs r = 0..n_runs-1 of by_bucket[run_start[r]
     * .. run_start[r + 1]] share bucket run_bucket[r]  */
    int32_t n_runs[4];
    int16_t by_bucket[4][PCS_MAX_HOLDINGS], run_start[4][PCS_MAX_HOLDINGS + 1];
    int32_t run_bucket[4][PCS_MAX_HOLDINGS];
} pcs_board;

/* A small game's public chance: n_public equally likely outcomes over n_holdings holdings
 * (cards: n_holdings x 2; equal cards for one-card holdings; at most 52 distinct cards);
 * buckets: n_public x 4 x n_holdings (-1 on street 0: the holding clashes with the public
 * cards), values: n_public x n_holdings (the showdown's order; equal values tie). */
typedef struct {
    int32_t n_holdings, n_public;
    const uint8_t *cards;
    const int32_t *buckets;
    const int32_t *values;
} pcs_small;

/* The board of a hold'em deal (five distinct cards) as the walk sees it: holdings clashing
 * with any of the five have no place; buckets as mc_deal_buckets gives them. */
void pcs_holdem_board(const mc_game *g, const uint8_t board[5], pcs_board *out);

/* The two terminal vectors of a board against the opponent's reach ro[n] (renumbered
 * holdings): compat[h], the opponent's reach compatible with holding h, and net[h], the part
 * of it h beats minus the part that beats h (ties count 0). */
void pcs_terminals(const pcs_board *b, const double *ro, double *compat, double *net);

/* Iterations first .. first + iterations - 1, each a board from its own random stream seeded
 * by (seed, number) and a vector walk for each player, on `threads` threads (1 =
 * deterministic however a run is cut; more share the tables without locks). small == NULL:
 * hold'em boards from g's tables; else a public outcome of the small game (g's card tables
 * unread). *done counts finished iterations. */
int pcs_run(const mc_game *g, const pcs_small *small, double *regret, double *avg, int64_t first,
            int64_t iterations, uint64_t seed, int threads, volatile int64_t *done);

#endif
