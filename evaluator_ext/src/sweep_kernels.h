/* Terminal values of a two-player showdown game by sweeps over one board's holdings: the
 * one copy of the fold and showdown sweeps, used by public-chance-sampling MCCFR
 * (pcs_kernels.c) and by river re-solving (resolve_kernels.c). Plain C11, no Python.h.
 *
 * The holdings are i = 0..n-1 with cards a[i] and b[i] (0..51; a[i] == b[i] for a game of
 * one-card holdings: pass one = 1). q is the opponent's reach of each holding.
 *
 * Fold: the opponent's reach compatible with holding i, the total less the reach holding
 * a[i], less the reach holding b[i], plus q[i] (the one subtracted twice); for a one-card
 * holding the total less the reach holding a[i].
 * Showdown (holdings in ascending order of hand value, in groups of equal value): the
 * reach i beats less the reach that beats it, over the compatible holdings; ties count 0.
 * A sweep by groups keeps the reach below and per card below, so that i beats
 * below - below[a] - below[b] and ties with its group less the group's holdings sharing a
 * card; what it loses to is the compatible rest.
 *
 * Every sum is taken in index order, so a caller that passes the same q gets the same
 * doubles bit for bit whichever kernel asks.
 */
#ifndef SWEEP_KERNELS_H
#define SWEEP_KERNELS_H

#include <stdint.h>

#define SW_MAX_HOLDINGS 1326

/* The total of q over holdings 0..n-1 and its sums per card, each summed in index order. */
typedef struct {
    double total;
    double card[52];
} sw_sums;

void sw_card_sums(int n, const uint8_t *a, const uint8_t *b, int one, const double *q, sw_sums *s);

/* out[i] = scale * (the reach compatible with holding i), from s = sw_card_sums(q). */
void sw_fold(int n, const uint8_t *a, const uint8_t *b, int one, const double *q, const sw_sums *s, double scale,
             double *out);

/* Holdings in ascending order of value (n <= SW_MAX_HOLDINGS); group g is group_start[g] ..
 * group_start[g + 1] - 1 (n_groups groups, group_start[n_groups] == n).
 * out[to ? to[t] : t] = scale * (the reach holding t beats - the reach that beats it). The
 * sweep takes q's sums on the way: s (unless NULL) gets sw_card_sums(q), bit for bit, for a
 * fold against the same reach. */
void sw_showdown(int n, const uint8_t *a, const uint8_t *b, int one, const int16_t *group_start, int n_groups,
                 const double *q, double scale, const int16_t *to, double *out, sw_sums *s);

#endif /* SWEEP_KERNELS_H */
