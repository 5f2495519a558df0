/* Robust counter-strategies by external-sampling MCCFR (restricted Nash responses, Johanson,
 * Zinkevich and Bowling 2007; data-biased responses, Johanson and Bowling 2009) on the game
 * of mccfr_kernels.h: plain C11, no Python.h. The caller is cbr/cfr/counter.py.
 */
#ifndef RNR_KERNELS_H
#define RNR_KERNELS_H

#include <stdint.h>

#include "mccfr_kernels.h"

/* The opponent's model, laid out like the regrets (g->offset, rows of n_children):
 * probs[row + a] its action probabilities, conf[row] (the row's first entry) the chance that
 * the restricted opponent plays the model at that information set (1 everywhere: a restricted
 * Nash response; P_max n / (n + c): a data-biased one). */
typedef struct {
    const float *probs;
    const float *conf;
    double p; /* the chance, drawn per iteration and seat, that the opponent is restricted */
} mc_model;

/* Iterations first .. first + iterations - 1 of the restricted game: each deals as mc_run
 * does, then for each seat e of the exploiter (tables regret/avg) walks for both players
 * with the opponent at seat 1 - e either restricted (probability p: at each information
 * set it plays the model with probability conf, else its own regret matching) or free (its
 * own tables opp_regret/opp_avg). With p = 0 both pairs of tables follow mc_run's exactly. */
int mc_rnr_run(const mc_game *g, const mc_model *model, double *regret, double *avg, double *opp_regret,
               double *opp_avg, int64_t first, int64_t iterations, uint64_t seed, int threads,
               volatile int64_t *done);

#endif
