/* Native kernels for play against a range: the showdown equity of one holding against
 * every holding of an opponent's range, and the Bayesian update of a range's weights.
 * Plain C11, no Python.h; builds on eval_kernels (call ek_init() first).
 *
 * Holdings are indexed 0..1325 in colex order (hi*(hi-1)/2 + lo, hi > lo), as everywhere in
 * the evaluator. A range is 1326 non-negative weights; a holding with weight 0, or one that
 * shares a card with the hero's hole cards or the board, is outside it.
 *
 * Equity of the hero against holding h: over the runouts of the board (the cards still to
 * come, dealt from the deck without the hero's cards and the board), the share won plus half
 * the share tied, counting for h only the runouts that do not use one of h's cards (card
 * removal). Exact enumeration (trials == 0) or `trials` runouts drawn with a seeded
 * xoshiro256** generator (the same seed gives the same runouts).
 *
 * Example (C):
 *     uint8_t hole[2] = {51, 50}, board[3] = {0, 5, 10};   // AsAh on 2c 3d 4h
 *     double w[1326], eq[1326], n[1326];
 *     for (int i = 0; i < 1326; i++) w[i] = 1.0;
 *     ek_init();
 *     rk_range_equity(hole, board, 3, w, 0, 0, eq, n);       // eq[h]: AA's equity vs h
 */
#ifndef RANGE_KERNELS_H
#define RANGE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Most runouts an exact call enumerates (a flop has 1,081; a pre-flop board 2,118,760). */
#define RK_MAX_EXACT_RUNOUTS 20000

/* Equity of `hole` against every holding of the range `weights` (1326; NULL: every holding)
 * on a board of n_board (0, 3, 4 or 5) cards. eq[h] = (wins + ties / 2) / counted[h]; holdings
 * outside the range, or never counted (sampling), get eq = -1 and counted = 0.
 * trials == 0: every runout (EK_ERR_ARGUMENT when there are more than RK_MAX_EXACT_RUNOUTS);
 * trials > 0: that many sampled runouts (at most 10^9). Returns EK_OK or a negative status
 * (range, duplicate cards; EK_ERR_NO_WEIGHT when no holding of the range is left).
 * The same work in steps (to release and re-take a lock between chunks of sampling):
 * rk_equity_start, rk_equity_exact or rk_equity_sample (repeatedly: one random stream),
 * rk_equity_finish. */
int rk_range_equity(const uint8_t hole[2], const uint8_t *board, int n_board, const double *weights,
                    uint64_t trials, uint64_t seed, double *eq, double *counted);

typedef struct rk_equity rk_equity;
/* Check the cards, list the range's holdings; *out is freed by rk_equity_finish (or
 * rk_equity_free on an error path). exact != 0 refuses boards with too many runouts. */
int rk_equity_start(const uint8_t hole[2], const uint8_t *board, int n_board, const double *weights,
                    int exact, uint64_t seed, rk_equity **out);
/* Runouts an exact enumeration visits; hand evaluations per runout (the holdings + 1). */
double rk_equity_runouts(const rk_equity *e);
int rk_equity_holdings(const rk_equity *e);
void rk_equity_exact(rk_equity *e);
void rk_equity_sample(rk_equity *e, uint64_t trials);
void rk_equity_finish(rk_equity *e, double *eq, double *counted);
void rk_equity_free(rk_equity *e);

/* Bayes' rule on a range: weights[h] *= likelihood[h], then 0 for every holding that uses
 * a card of `dead` (bit c set: card c is known elsewhere). Returns the new total weight
 * through *total. Likelihoods must be finite and in 0..1 (EK_ERR_ARGUMENT otherwise, the
 * weights untouched). */
int rk_range_update(double *weights, const double *likelihood, uint64_t dead, double *total);

#endif /* RANGE_KERNELS_H */
