/* The fold and showdown sweeps (see sweep_kernels.h). Each entry point dispatches once to
 * a copy specialised for two-card or one-card holdings (and for a scatter or not), so the
 * inner loops carry no such branch. */
#include "sweep_kernels.h"

#include <string.h>

/* Two-card holdings: the sums into card b[i] are kept in a register along a run of equal
 * b[i] (in combo order b is the higher card, so runs are long) and stored when it ends: the
 * same additions in the same order, without a chain through memory from one holding to the
 * next (a[i] < b[i], so card a[i] is never the one in the register). */
static inline void card_sums(int n, const uint8_t *a, const uint8_t *b, const int one, const double *q, sw_sums *s)
{
    double total = 0.0;
    memset(s->card, 0, sizeof s->card);
    if (one) {
        for (int i = 0; i < n; i++) {
            total += q[i];
            s->card[a[i]] += q[i];
        }
    } else if (n > 0) {
        int cur = b[0];
        double run = 0.0;
        for (int i = 0; i < n; i++) {
            if (b[i] != cur) {
                s->card[cur] = run;
                cur = b[i];
                run = s->card[cur];
            }
            total += q[i];
            s->card[a[i]] += q[i];
            run += q[i];
        }
        s->card[cur] = run;
    }
    s->total = total;
}

void sw_card_sums(int n, const uint8_t *a, const uint8_t *b, int one, const double *q, sw_sums *s)
{
    if (one)
        card_sums(n, a, b, 1, q, s);
    else
        card_sums(n, a, b, 0, q, s);
}

static inline void fold(int n, const uint8_t *a, const uint8_t *b, const int one, const double *q, const sw_sums *s,
                        double scale, double *out)
{
    const double total = s->total;
    for (int i = 0; i < n; i++)
        out[i] = scale * (one ? total - s->card[a[i]] : total - s->card[a[i]] - s->card[b[i]] + q[i]);
}

void sw_fold(int n, const uint8_t *a, const uint8_t *b, int one, const double *q, const sw_sums *s, double scale,
             double *out)
{
    if (one)
        fold(n, a, b, 1, q, s, scale, out);
    else
        fold(n, a, b, 0, q, s, scale, out);
}

/* One pass by groups writes 2 win + tie of each holding (in sorted order, to tmp) while it
 * takes the total and, in below, the sums per card (below[c] is added to in index order, so at
 * the end it is sw_card_sums' card[c] bit for bit); a second pass subtracts the compatible
 * reach and scales. */
static inline void showdown(int n, const uint8_t *a, const uint8_t *b, const int one, const int16_t *group_start,
                            int n_groups, const double *q, double scale, const int16_t *to, double *out, sw_sums *s)
{
    double below[52] = {0}, group[52] = {0}, below_total = 0.0, total = 0.0;
    double tmp[SW_MAX_HOLDINGS];
    double *part = to ? tmp : out;
    for (int g = 0; g < n_groups; g++) {
        const int i = group_start[g], j = group_start[g + 1];
        double in_group = 0.0;
        if (one)
            for (int t = i; t < j; t++) {
                total += q[t];
                in_group += q[t];
                group[a[t]] += q[t];
            }
        else { /* group[b[t]] in a register along a run of equal b[t] (see card_sums) */
            int cur = b[i];
            double run = group[cur];
            for (int t = i; t < j; t++) {
                if (b[t] != cur) {
                    group[cur] = run;
                    cur = b[t];
                    run = group[cur];
                }
                total += q[t];
                in_group += q[t];
                group[a[t]] += q[t];
                run += q[t];
            }
            group[cur] = run;
        }
        for (int t = i; t < j; t++) {
            const int x = a[t], y = b[t];
            double win, tie;
            if (one) {
                win = below_total - below[x];
                tie = in_group - group[x];
            } else {
                win = below_total - below[x] - below[y];
                tie = in_group - group[x] - group[y] + q[t];
            }
            part[t] = 2.0 * win + tie;
        }
        if (one)
            for (int t = i; t < j; t++) {
                below[a[t]] += q[t];
                group[a[t]] = 0.0;
            }
        else {
            int cur = b[i];
            double run = below[cur];
            for (int t = i; t < j; t++) {
                if (b[t] != cur) {
                    below[cur] = run;
                    cur = b[t];
                    run = below[cur];
                }
                below[a[t]] += q[t];
                run += q[t];
            }
            below[cur] = run;
            for (int t = i; t < j; t++)
                group[a[t]] = group[b[t]] = 0.0;
        }
        below_total += in_group;
    }
    /* below now holds the sums per card */
    for (int t = 0; t < n; t++) {
        const double compatible = one ? total - below[a[t]] : total - below[a[t]] - below[b[t]] + q[t];
        out[to ? to[t] : t] = scale * (part[t] - compatible); /* win - (compatible - win - tie) */
    }
    if (s) {
        s->total = total;
        memcpy(s->card, below, sizeof below);
    }
}

void sw_showdown(int n, const uint8_t *a, const uint8_t *b, int one, const int16_t *group_start, int n_groups,
                 const double *q, double scale, const int16_t *to, double *out, sw_sums *s)
{
    if (one)
        showdown(n, a, b, 1, group_start, n_groups, q, scale, to, out, s);
    else if (to)
        showdown(n, a, b, 0, group_start, n_groups, q, scale, to, out, s);
    else
        showdown(n, a, b, 0, group_start, n_groups, q, scale, NULL, out, s);
}
