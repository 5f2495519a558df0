/* Vector-form CFR+ (Tammelin 2014; Bowling et al. 2015) over a PsOpti-style bucket game.
 *
 * The chance model (cbr.abstraction.game.BucketGame): each player's bucket sequence is drawn
 * on its own (prior, then one transition table per street) and a showdown compares strength
 * classes. An information set is (betting node, own bucket sequence); every walk carries,
 * for each player, a vector indexed by that player's sequences on the node's street:
 *  - the opponent's reach: chance probability of its sequence times its own action
 *    probabilities (so the traverser's values are sums over opponent sequences);
 *  - the traverser's reach (chance times own actions), used only to weight the average;
 * and returns the traverser's value vector v[seq] = sum_o reach_o[o] * E[u | seq, o], where
 * the traverser's own future chance is averaged out at chance nodes. This v is the
 * counterfactual value of the information set divided by the chance probability of the
 * traverser's own sequence, a positive factor constant over iterations, so regret matching+
 * picks the same strategies as with true counterfactual values.
 *
 * Terminals cost O(sequences x classes): a fold pays +-stake times the opponent's total
 * reach; a showdown aggregates the opponent's reach by class (R), takes W = equity R, and
 * v[i] = stake * (2 cls[i] . W - sum R).
 *
 * A subtree that neither player reaches (the opponent's reach all zero and, in training,
 * the traverser's too) is skipped: its values are 0 and nothing in it would change.
 *
 * CFR+: regrets are floored at 0 after each update, updates alternate (player 0 then player
 * 1, the second pass sees the first's new regrets), and the average strategy is weighted by
 * the iteration number t (linear averaging). Everything is deterministic: chance is
 * enumerated, the order of every sum is fixed.
 *
 * Regrets and averages are doubles: float32 rounds each addition to its sum's spacing, and
 * with the linear weight t an average's sum grows like t^2 while its additions grow like t,
 * so float32 would add the t-th one with a relative error up to about 3e-8 t (3e-4 at
 * t = 10,000), and lose additions of rows reached rarely altogether.
 */
#include "cfr_kernels.h"

#include <stdlib.h>
#include <string.h>

enum { MODE_TRAIN = 0, MODE_BR = 1, MODE_EVAL = 2 };

typedef struct {
    const cfr_game *g;
    double *regret;
    const double *avg_in; /* BR / EVAL */
    double *avg_out;      /* TRAIN */
    int trav;
    int mode;
    double weight;
} walk_ctx;

/* Strategy of rows [0, len) of a table with A actions: regret matching (positive parts) or
 * the normalised average; a row with no positive entry is uniform. */
static void strategy(const double *table, int64_t len, int a_count, double *out)
{
    for (int64_t i = 0; i < len; i++) {
        const double *row = table + i * a_count;
        double *o = out + i * a_count;
        double sum = 0.0;
        for (int a = 0; a < a_count; a++) {
            double x = row[a] > 0.0 ? row[a] : 0.0;
            o[a] = x;
            sum += x;
        }
        if (sum > 0.0) {
            for (int a = 0; a < a_count; a++)
                o[a] /= sum;
        } else {
            for (int a = 0; a < a_count; a++)
                o[a] = 1.0 / a_count;
        }
    }
}

static int64_t node_need(const cfr_game *g, int node)
{
    int s = g->street[node];
    int64_t len = g->seqs[s];
    switch (g->kind[node]) {
    case CFR_DECISION:
        return len * (2 * (int64_t)g->n_children[node] + 1);
    case CFR_CHANCE:
        return 3 * len * g->nb;
    case CFR_SHOWDOWN:
        return 2 * (int64_t)g->nc;
    default:
        return 0;
    }
}

int64_t cfr_workspace_size(const cfr_game *g)
{
    /* children come after their parents: one backward pass gives each node's deepest need */
    int64_t *need = malloc(sizeof(int64_t) * (size_t)g->n_nodes);
    if (!need)
        return -1;
    for (int n = g->n_nodes - 1; n >= 0; n--) {
        int64_t deepest = 0;
        for (int c = 0; c < g->n_children[n]; c++) {
            int64_t x = need[g->child_index[g->child_start[n] + c]];
            if (x > deepest)
                deepest = x;
        }
        need[n] = node_need(g, n) + deepest;
    }
    int64_t total = need[0];
    free(need);
    return total;
}

static void walk(const walk_ctx *cx, int node, const double *reach_t, const double *reach_o, double *v, double *ws)
{
    const cfr_game *g = cx->g;
    int s = g->street[node];
    int64_t len = g->seqs[s];
    int kind = g->kind[node];

    if (kind == CFR_FOLD) {
        double total = 0.0;
        for (int64_t i = 0; i < len; i++)
            total += reach_o[i];
        double x = (g->player[node] == cx->trav ? -g->stake[node] : g->stake[node]) * total;
        for (int64_t i = 0; i < len; i++)
            v[i] = x;
        return;
    }
    if (kind == CFR_SHOWDOWN) {
        int nc = g->nc;
        const double *cls = g->cls[s];
        double *r = ws, *w = ws + nc;
        double total = 0.0;
        memset(r, 0, sizeof(double) * (size_t)nc);
        for (int64_t o = 0; o < len; o++) {
            double x = reach_o[o];
            if (x == 0.0)
                continue;
            total += x;
            const double *row = cls + o * nc;
            for (int c = 0; c < nc; c++)
                r[c] += x * row[c];
        }
        for (int c = 0; c < nc; c++) {
            double acc = 0.0;
            const double *eq = g->equity + (int64_t)c * nc;
            for (int d = 0; d < nc; d++)
                acc += eq[d] * r[d];
            w[c] = acc;
        }
        double stake = g->stake[node];
        for (int64_t i = 0; i < len; i++) {
            const double *row = cls + i * nc;
            double acc = 0.0;
            for (int c = 0; c < nc; c++)
                acc += row[c] * w[c];
            v[i] = stake * (2.0 * acc - total);
        }
        return;
    }
    /* Pruning: with no opponent reach every value below is 0 (regrets do not move), and in
     * training, with no traverser reach either, no average changes: skip the subtree. */
    int live = 0;
    for (int64_t i = 0; i < len && !live; i++)
        live = reach_o[i] != 0.0 || (cx->mode == MODE_TRAIN && reach_t[i] != 0.0);
    if (!live) {
        memset(v, 0, sizeof(double) * (size_t)len);
        return;
    }
    const int32_t *kids = g->child_index + g->child_start[node];
    if (kind == CFR_CHANCE) {
        int nb = g->nb;
        int64_t len2 = len * nb;
        const double *tr = g->trans[s];
        double *rt = ws, *ro = ws + len2, *v2 = ws + 2 * len2;
        for (int64_t q = 0; q < len; q++) {
            for (int b = 0; b < nb; b++) {
                double p = tr[q * nb + b];
                rt[q * nb + b] = reach_t[q] * p;
                ro[q * nb + b] = reach_o[q] * p;
            }
        }
        walk(cx, kids[0], rt, ro, v2, ws + 3 * len2);
        for (int64_t q = 0; q < len; q++) {
            double acc = 0.0;
            for (int b = 0; b < nb; b++)
                acc += tr[q * nb + b] * v2[q * nb + b];
            v[q] = acc;
        }
        return;
    }
    /* decision node */
    int a_count = g->n_children[node];
    int actor = g->player[node];
    double *sigma = ws, *child_reach = ws + len * a_count, *va = child_reach + len;
    double *rest = va + len * a_count;
    const double *avg_table = cx->avg_in ? cx->avg_in + g->offset[node] : NULL;
    double *reg = cx->regret ? cx->regret + g->offset[node] : NULL;
    if (cx->mode == MODE_TRAIN)
        strategy(reg, len, a_count, sigma);
    else
        strategy(avg_table, len, a_count, sigma);

    if (actor != cx->trav) {
        for (int64_t i = 0; i < len; i++)
            v[i] = 0.0;
        for (int a = 0; a < a_count; a++) {
            for (int64_t i = 0; i < len; i++)
                child_reach[i] = reach_o[i] * sigma[i * a_count + a];
            walk(cx, kids[a], reach_t, child_reach, va, rest);
            for (int64_t i = 0; i < len; i++)
                v[i] += va[i];
        }
        return;
    }
    for (int a = 0; a < a_count; a++) {
        const double *rt = reach_t;
        if (cx->mode == MODE_TRAIN) {
            for (int64_t i = 0; i < len; i++)
                child_reach[i] = reach_t[i] * sigma[i * a_count + a];
            rt = child_reach;
        }
        walk(cx, kids[a], rt, reach_o, va + a * len, rest);
    }
    if (cx->mode == MODE_BR) {
        for (int64_t i = 0; i < len; i++) {
            double best = va[i];
            for (int a = 1; a < a_count; a++)
                if (va[a * len + i] > best)
                    best = va[a * len + i];
            v[i] = best;
        }
        return;
    }
    for (int64_t i = 0; i < len; i++) {
        double acc = 0.0;
        for (int a = 0; a < a_count; a++)
            acc += sigma[i * a_count + a] * va[a * len + i];
        v[i] = acc;
    }
    if (cx->mode != MODE_TRAIN)
        return;
    double *avg = cx->avg_out + g->offset[node];
    for (int64_t i = 0; i < len; i++) {
        for (int a = 0; a < a_count; a++) {
            int64_t k = i * a_count + a;
            double r = reg[k] + va[a * len + i] - v[i];
            reg[k] = r > 0.0 ? r : 0.0;
            avg[k] += cx->weight * reach_t[i] * sigma[k];
        }
    }
}

static int root_walk(const walk_ctx *cx, double *ws, double *value)
{
    const cfr_game *g = cx->g;
    int nb = g->nb;
    /* root vectors live in front of the walk's workspace */
    double *rt = ws, *ro = ws + nb, *v = ws + 2 * nb;
    for (int b = 0; b < nb; b++)
        rt[b] = ro[b] = g->prior[b];
    walk(cx, 0, rt, ro, v, ws + 3 * nb);
    double acc = 0.0;
    for (int b = 0; b < nb; b++)
        acc += g->prior[b] * v[b];
    if (value)
        *value = acc;
    return CFR_OK;
}

int cfr_iterate(const cfr_game *g, double *regret, double *avg, int64_t t, double *ws)
{
    for (int p = 0; p < 2; p++) {
        walk_ctx cx = {g, regret, NULL, avg, p, MODE_TRAIN, (double)t};
        root_walk(&cx, ws, NULL);
    }
    return CFR_OK;
}

int cfr_value(const cfr_game *g, const double *avg, int player, int best_response, double *ws, double *value)
{
    walk_ctx cx = {g, NULL, avg, NULL, player, best_response ? MODE_BR : MODE_EVAL, 0.0};
    return root_walk(&cx, ws, value);
}
