/* Re-solving the river (see resolve_kernels.h).
 *
 * Everything works in the board's sorted order (holdings by 7-card value, ascending): a
 * reach, value or table row i is the holding b->combo[i]. Tables come in and go out in
 * combo order (the RV layout), 1326 rows a decision node.
 *
 * The walks are recursive over the subgame (a limit river has 27 nodes and a depth of 9)
 * with one value and one reach buffer per node: a node has one parent, so its buffers are
 * written by that parent only.
 */
#define _POSIX_C_SOURCE 199309L
#include "resolve_kernels.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval_kernels.h"

int rv_board_init(rv_board *b, const uint8_t board[5])
{
    uint64_t used = 0;
    for (int i = 0; i < 5; i++) {
        if (board[i] > 51 || (used >> board[i]) & 1)
            return RV_ERR_ARGUMENT;
        used |= UINT64_C(1) << board[i];
    }
    uint32_t keys[RV_MAX_HOLDINGS];
    int16_t cmb[RV_MAX_HOLDINGS];
    uint8_t cards[7];
    memcpy(cards, board, 5);
    int n = 0, c = 0;
    for (int hi = 1; hi < 52; hi++)
        for (int lo = 0; lo < hi; lo++, c++) {
            b->pos[c] = -1;
            if (((used >> lo) | (used >> hi)) & 1)
                continue;
            cards[5] = (uint8_t)lo;
            cards[6] = (uint8_t)hi;
            keys[n] = ((uint32_t)ek_evaluate(cards, 7) << 11) | (uint32_t)n;
            cmb[n] = (int16_t)c;
            n++;
        }
    /* counting sort on the value (1..7462): stable, so equal values keep combo order */
    static const int n_values = EK_N_VALUES + 1;
    int count[EK_N_VALUES + 2];
    memset(count, 0, sizeof count);
    for (int i = 0; i < n; i++)
        count[(keys[i] >> 11) + 1]++;
    for (int v = 0; v < n_values; v++)
        count[v + 1] += count[v];
    b->n = n;
    for (int i = 0; i < n; i++) {
        int at = count[keys[i] >> 11]++;
        int j = (int)(keys[i] & 2047);
        int combo = cmb[j];
        b->combo[at] = (int16_t)combo;
        b->pos[combo] = (int16_t)at;
    }
    /* cards of each sorted holding, and its group of equal value */
    int hi_of[RV_N_COMBOS], lo_of[RV_N_COMBOS];
    c = 0;
    for (int hi = 1; hi < 52; hi++)
        for (int lo = 0; lo < hi; lo++, c++) {
            hi_of[c] = hi;
            lo_of[c] = lo;
        }
    uint16_t value[RV_MAX_HOLDINGS];
    for (int i = 0; i < n; i++) {
        int h = b->combo[i];
        b->lo[i] = (uint8_t)lo_of[h];
        b->hi[i] = (uint8_t)hi_of[h];
        cards[5] = b->lo[i];
        cards[6] = b->hi[i];
        value[i] = ek_evaluate(cards, 7);
    }
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && value[j] == value[i])
            j++;
        for (int t = i; t < j; t++)
            b->group_end[t] = (int16_t)j;
        i = j;
    }
    return RV_OK;
}

void rv_fold_sorted(const rv_board *b, const double *q, double *out)
{
    double card[52] = {0}, total = 0.0;
    for (int i = 0; i < b->n; i++) {
        card[b->lo[i]] += q[i];
        card[b->hi[i]] += q[i];
        total += q[i];
    }
    for (int i = 0; i < b->n; i++)
        out[i] = total - card[b->lo[i]] - card[b->hi[i]] + q[i];
}

void rv_showdown_sorted(const rv_board *b, const double *q, double *out)
{
    double card[52] = {0}, total = 0.0;
    for (int i = 0; i < b->n; i++) {
        card[b->lo[i]] += q[i];
        card[b->hi[i]] += q[i];
        total += q[i];
    }
    double below[52] = {0}, below_total = 0.0, group[52] = {0};
    for (int i = 0; i < b->n;) {
        const int j = b->group_end[i];
        double group_total = 0.0;
        for (int t = i; t < j; t++) {
            group[b->lo[t]] += q[t];
            group[b->hi[t]] += q[t];
            group_total += q[t];
        }
        for (int t = i; t < j; t++) {
            const int a = b->lo[t], c = b->hi[t];
            const double win = below_total - below[a] - below[c];
            const double tie = group_total - group[a] - group[c] + q[t];
            const double compatible = total - card[a] - card[c] + q[t];
            out[t] = 2.0 * win + tie - compatible; /* win - (compatible - win - tie) */
        }
        for (int t = i; t < j; t++) {
            below[b->lo[t]] += q[t];
            below[b->hi[t]] += q[t];
            group[b->lo[t]] = group[b->hi[t]] = 0.0;
        }
        below_total += group_total;
        i = j;
    }
}

int river_terminal_values(const uint8_t board[5], const double *reach, double *fold, double *showdown)
{
    rv_board *b = malloc(sizeof *b);
    double *buf = malloc(3 * RV_MAX_HOLDINGS * sizeof(double));
    if (!b || !buf) {
        free(b);
        free(buf);
        return RV_ERR_NOMEM;
    }
    int status = rv_board_init(b, board);
    if (status == RV_OK) {
        double *q = buf, *f = buf + RV_MAX_HOLDINGS, *s = buf + 2 * RV_MAX_HOLDINGS;
        for (int i = 0; i < b->n; i++)
            q[i] = reach[b->combo[i]];
        rv_fold_sorted(b, q, f);
        rv_showdown_sorted(b, q, s);
        for (int h = 0; h < RV_N_COMBOS; h++)
            fold[h] = showdown[h] = 0.0;
        for (int i = 0; i < b->n; i++) {
            fold[b->combo[i]] = f[i];
            showdown[b->combo[i]] = s[i];
        }
    }
    free(b);
    free(buf);
    return status;
}

int rv_tree_check(const rv_tree *t, int64_t *table_size)
{
    if (t->n_nodes < 1 || t->n_nodes > RV_MAX_NODES)
        return RV_ERR_ARGUMENT;
    int64_t size = 0;
    int parents[RV_MAX_NODES] = {0};
    for (int i = 0; i < t->n_nodes; i++) {
        const int k = t->n_children[i], s = t->child_start[i];
        if (t->kind[i] == RV_DECISION) {
            if (t->player[i] < 0 || t->player[i] > 1 || k < 1 || k > RV_MAX_ACTIONS || s < 0)
                return RV_ERR_ARGUMENT;
            for (int a = 0; a < k; a++) {
                const int c = t->child_index[s + a];
                if (c <= i || c >= t->n_nodes || parents[c]++)
                    return RV_ERR_ARGUMENT;
            }
            size += (int64_t)RV_N_COMBOS * k;
        } else if (t->kind[i] == RV_FOLD || t->kind[i] == RV_SHOWDOWN) {
            if (k != 0 || !(t->stake[i] >= 0.0) || (t->kind[i] == RV_FOLD && (t->player[i] < 0 || t->player[i] > 1)))
                return RV_ERR_ARGUMENT;
        } else
            return RV_ERR_ARGUMENT;
    }
    for (int i = 1; i < t->n_nodes; i++)
        if (parents[i] != 1)
            return RV_ERR_ARGUMENT;
    *table_size = size;
    return RV_OK;
}

/* The work space of one call: the board, per-node buffers, tables in sorted layout. */
typedef struct {
    const rv_tree *t;
    rv_board b;
    int n;
    int64_t off[RV_MAX_NODES]; /* a decision node's table in sorted layout (n rows) */
    int64_t off_rv[RV_MAX_NODES]; /* ... and in the RV layout (1326 rows) */
    int64_t size;
    double *val, *reach; /* n_nodes x n each */
    double *regret, *avg, *sigma, *fixed; /* size each (sorted layout, action-major per node) */
    double scratch[RV_MAX_HOLDINGS];
} rv_work;

static void work_free(rv_work *w)
{
    if (!w)
        return;
    free(w->val);
    free(w->reach);
    free(w->regret);
    free(w->avg);
    free(w->sigma);
    free(w->fixed);
    free(w);
}

static rv_work *work_new(const rv_tree *t, const uint8_t board[5], int *status)
{
    int64_t rv_size;
    *status = rv_tree_check(t, &rv_size);
    if (*status)
        return NULL;
    rv_work *w = calloc(1, sizeof *w);
    if (!w) {
        *status = RV_ERR_NOMEM;
        return NULL;
    }
    w->t = t;
    if ((*status = rv_board_init(&w->b, board)) != RV_OK) {
        work_free(w);
        return NULL;
    }
    w->n = w->b.n;
    int64_t off = 0, off_rv = 0;
    for (int i = 0; i < t->n_nodes; i++) {
        w->off[i] = off;
        w->off_rv[i] = off_rv;
        if (t->kind[i] == RV_DECISION) {
            off += (int64_t)w->n * t->n_children[i];
            off_rv += (int64_t)RV_N_COMBOS * t->n_children[i];
        }
    }
    w->size = off;
    const size_t nodes = (size_t)t->n_nodes * (size_t)w->n, table = (size_t)(off > 0 ? off : 1);
    w->val = malloc(nodes * sizeof(double));
    w->reach = malloc(nodes * sizeof(double));
    w->regret = calloc(table, sizeof(double));
    w->avg = calloc(table, sizeof(double));
    w->sigma = malloc(table * sizeof(double));
    w->fixed = malloc(table * sizeof(double));
    if (!w->val || !w->reach || !w->regret || !w->avg || !w->sigma || !w->fixed) {
        work_free(w);
        *status = RV_ERR_NOMEM;
        return NULL;
    }
    return w;
}

/* A reach or value vector: combo order to sorted, and back (0 on clashing combos). */
static void to_sorted(const rv_work *w, const double *combo, double *sorted)
{
    for (int i = 0; i < w->n; i++)
        sorted[i] = combo[w->b.combo[i]];
}

static void to_combo(const rv_work *w, const double *sorted, double *combo)
{
    for (int h = 0; h < RV_N_COMBOS; h++)
        combo[h] = 0.0;
    for (int i = 0; i < w->n; i++)
        combo[w->b.combo[i]] = sorted[i];
}

/* An RV-layout table into (from) the sorted layout of w. */
static void table_in(const rv_work *w, const double *rv, double *sorted)
{
    for (int node = 0; node < w->t->n_nodes; node++) {
        if (w->t->kind[node] != RV_DECISION)
            continue;
        const int k = w->t->n_children[node];
        for (int i = 0; i < w->n; i++)
            for (int a = 0; a < k; a++)
                sorted[w->off[node] + (int64_t)a * w->n + i] = rv[w->off_rv[node] + (int64_t)w->b.combo[i] * k + a];
    }
}

static void table_out(const rv_work *w, const double *sorted, double *rv)
{
    for (int node = 0; node < w->t->n_nodes; node++) {
        if (w->t->kind[node] != RV_DECISION)
            continue;
        const int k = w->t->n_children[node];
        memset(rv + w->off_rv[node], 0, sizeof(double) * (size_t)RV_N_COMBOS * (size_t)k);
        for (int i = 0; i < w->n; i++)
            for (int a = 0; a < k; a++)
                rv[w->off_rv[node] + (int64_t)w->b.combo[i] * k + a] = sorted[w->off[node] + (int64_t)a * w->n + i];
    }
}

/* A terminal's values for player p's holdings against the other's reach q. */
static void terminal(const rv_work *w, int node, int p, const double *q, double *out)
{
    const rv_tree *t = w->t;
    double scale = t->stake[node];
    if (t->kind[node] == RV_FOLD) {
        rv_fold_sorted(&w->b, q, out);
        if (t->player[node] == p)
            scale = -scale;
    } else
        rv_showdown_sorted(&w->b, q, out);
    for (int i = 0; i < w->n; i++)
        out[i] *= scale;
}

/* Values of player p's holdings with the other's reach q: p best-responds (br) or plays
 * the fixed table too; the other plays the fixed table. Tables in sorted layout are
 * action-major: row a of a node is s[a * n .. a * n + n). */
static void eval_walk(rv_work *w, int node, int p, int br, const double *q, double *out)
{
    const rv_tree *t = w->t;
    const int n = w->n;
    if (t->kind[node] != RV_DECISION) {
        terminal(w, node, p, q, out);
        return;
    }
    const int k = t->n_children[node];
    const int32_t *kids = t->child_index + t->child_start[node];
    const double *s = w->fixed + w->off[node];
    if (t->player[node] == p) {
        for (int a = 0; a < k; a++)
            eval_walk(w, kids[a], p, br, q, w->val + (size_t)kids[a] * n);
        const double *v0 = w->val + (size_t)kids[0] * n;
        for (int i = 0; i < n; i++)
            out[i] = br ? v0[i] : s[i] * v0[i];
        for (int a = 1; a < k; a++) {
            const double *va = w->val + (size_t)kids[a] * n, *sa = s + (size_t)a * n;
            if (br)
                for (int i = 0; i < n; i++)
                    out[i] = va[i] > out[i] ? va[i] : out[i];
            else
                for (int i = 0; i < n; i++)
                    out[i] += sa[i] * va[i];
        }
        return;
    }
    for (int i = 0; i < n; i++)
        out[i] = 0.0;
    for (int a = 0; a < k; a++) {
        double *r = w->reach + (size_t)kids[a] * n, *v = w->val + (size_t)kids[a] * n;
        const double *sa = s + (size_t)a * n;
        for (int i = 0; i < n; i++)
            r[i] = q[i] * sa[i];
        eval_walk(w, kids[a], p, br, r, v);
        for (int i = 0; i < n; i++)
            out[i] += v[i];
    }
}

int rv_best_response(const rv_tree *t, const uint8_t board[5], int br_player, const double *strategy,
                     const double *reach, double *values)
{
    if (br_player < 0 || br_player > 1)
        return RV_ERR_ARGUMENT;
    int status;
    rv_work *w = work_new(t, board, &status);
    if (!w)
        return status;
    double q[RV_MAX_HOLDINGS], v[RV_MAX_HOLDINGS];
    table_in(w, strategy, w->fixed);
    to_sorted(w, reach, q);
    eval_walk(w, 0, br_player, 1, q, v);
    to_combo(w, v, values);
    work_free(w);
    return RV_OK;
}

int rv_profile_values(const rv_tree *t, const uint8_t board[5], const double *strategy, const double *reach0,
                      const double *reach1, double *values0, double *values1)
{
    int status;
    rv_work *w = work_new(t, board, &status);
    if (!w)
        return status;
    double q[RV_MAX_HOLDINGS], v[RV_MAX_HOLDINGS];
    table_in(w, strategy, w->fixed);
    to_sorted(w, reach1, q);
    eval_walk(w, 0, 0, 0, q, v);
    to_combo(w, v, values0);
    to_sorted(w, reach0, q);
    eval_walk(w, 0, 1, 0, q, v);
    to_combo(w, v, values1);
    work_free(w);
    return RV_OK;
}

/* Regret matching+ at a node: sigma from the (non-negative) regrets, uniform when none. */
static void match(rv_work *w, int node)
{
    const int k = w->t->n_children[node], n = w->n;
    const double *r = w->regret + w->off[node];
    double *s = w->sigma + w->off[node];
    double *sum = w->scratch;
    for (int i = 0; i < n; i++)
        sum[i] = r[i];
    for (int a = 1; a < k; a++)
        for (int i = 0; i < n; i++)
            sum[i] += r[(size_t)a * n + i];
    for (int i = 0; i < n; i++)
        sum[i] = sum[i] > 0.0 ? 1.0 / sum[i] : 0.0;
    const double uniform = 1.0 / k;
    for (int a = 0; a < k; a++)
        for (int i = 0; i < n; i++)
            s[(size_t)a * n + i] = sum[i] > 0.0 ? r[(size_t)a * n + i] * sum[i] : uniform;
}

/* One CFR+ update of player p: q the other's reach, own p's reach inside the subgame,
 * weight the averaging weight of this iteration; out: p's counterfactual values. */
static void cfr_walk(rv_work *w, int node, int p, const double *q, const double *own, double weight, double *out)
{
    const rv_tree *t = w->t;
    const int n = w->n;
    if (t->kind[node] != RV_DECISION) {
        terminal(w, node, p, q, out);
        return;
    }
    const int k = t->n_children[node];
    const int32_t *kids = t->child_index + t->child_start[node];
    match(w, node);
    const double *s = w->sigma + w->off[node];
    if (t->player[node] == p) {
        for (int a = 0; a < k; a++) {
            double *r = w->reach + (size_t)kids[a] * n;
            const double *sa = s + (size_t)a * n;
            for (int i = 0; i < n; i++)
                r[i] = own[i] * sa[i];
            cfr_walk(w, kids[a], p, q, r, weight, w->val + (size_t)kids[a] * n);
        }
        for (int i = 0; i < n; i++)
            out[i] = 0.0;
        for (int a = 0; a < k; a++) {
            const double *va = w->val + (size_t)kids[a] * n, *sa = s + (size_t)a * n;
            for (int i = 0; i < n; i++)
                out[i] += sa[i] * va[i];
        }
        for (int a = 0; a < k; a++) {
            const double *va = w->val + (size_t)kids[a] * n, *ra = w->reach + (size_t)kids[a] * n;
            double *reg = w->regret + w->off[node] + (size_t)a * n, *avg = w->avg + w->off[node] + (size_t)a * n;
            for (int i = 0; i < n; i++) {
                const double x = reg[i] + va[i] - out[i];
                reg[i] = x > 0.0 ? x : 0.0;
                avg[i] += weight * ra[i]; /* own reach times this action's probability */
            }
        }
        return;
    }
    for (int i = 0; i < n; i++)
        out[i] = 0.0;
    for (int a = 0; a < k; a++) {
        double *r = w->reach + (size_t)kids[a] * n, *v = w->val + (size_t)kids[a] * n;
        const double *sa = s + (size_t)a * n;
        for (int i = 0; i < n; i++)
            r[i] = q[i] * sa[i];
        cfr_walk(w, kids[a], p, r, own, weight, v);
        for (int i = 0; i < n; i++)
            out[i] += v[i];
    }
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int rv_resolve(const rv_tree *t, const uint8_t board[5], int us, const double *reach_us, const double *reach_opp,
               const double *opp_values, int gadget, int iterations, double budget_seconds, double *avg,
               double *regret, int *done, double *bound)
{
    if (us < 0 || us > 1 || iterations < 1 || gadget < RV_GADGET_NONE || gadget > RV_GADGET_MARGIN ||
        (gadget == RV_GADGET_NONE && !reach_opp) || (gadget != RV_GADGET_NONE && !opp_values))
        return RV_ERR_ARGUMENT;
    const double start = now_seconds();
    int status;
    rv_work *w = work_new(t, board, &status);
    if (!w)
        return status;
    const int n = w->n, opp = 1 - us;
    double ru[RV_MAX_HOLDINGS], g[RV_MAX_HOLDINGS], target[RV_MAX_HOLDINGS], ones[RV_MAX_HOLDINGS];
    double v[RV_MAX_HOLDINGS], r_follow[RV_MAX_HOLDINGS], r_stop[RV_MAX_HOLDINGS];
    to_sorted(w, reach_us, ru);
    for (int i = 0; i < n; i++) {
        ones[i] = 1.0;
        r_follow[i] = r_stop[i] = 0.0;
        target[i] = opp_values ? opp_values[w->b.combo[i]] : 0.0;
        g[i] = gadget == RV_GADGET_NONE ? reach_opp[w->b.combo[i]] : (gadget == RV_GADGET_MARGIN ? 1.0 / n : 0.5);
    }
    int it = 0;
    while (it < iterations) {
        const double weight = (double)(it + 1);
        /* the opponent: its subgame regrets, then its gadget choice */
        cfr_walk(w, 0, opp, ru, ones, weight, v);
        if (gadget == RV_GADGET_MARGIN) {
            double root = 0.0, sum = 0.0;
            for (int i = 0; i < n; i++)
                root += g[i] * (v[i] - target[i]);
            for (int i = 0; i < n; i++) {
                const double x = r_follow[i] + (v[i] - target[i]) - root;
                r_follow[i] = x > 0.0 ? x : 0.0;
                sum += r_follow[i];
            }
            for (int i = 0; i < n; i++)
                g[i] = sum > 0.0 ? r_follow[i] / sum : 1.0 / n;
        } else if (gadget == RV_GADGET_CFRD) {
            for (int i = 0; i < n; i++) {
                const double root = g[i] * v[i] + (1.0 - g[i]) * target[i];
                const double f = r_follow[i] + v[i] - root, s = r_stop[i] + target[i] - root;
                r_follow[i] = f > 0.0 ? f : 0.0;
                r_stop[i] = s > 0.0 ? s : 0.0;
                const double sum = r_follow[i] + r_stop[i];
                g[i] = sum > 0.0 ? r_follow[i] / sum : 0.5;
            }
        }
        /* us, against the opponent's entering reach */
        cfr_walk(w, 0, us, g, ones, weight, v);
        it++;
        if (budget_seconds > 0.0 && now_seconds() - start >= budget_seconds)
            break;
    }
    /* The regret bound. A player's regret is at most the sum over its information sets of
     * the largest (CFR+) regret, each weighted by the chance of its holding: our holdings
     * are dealt with our reach (our regrets leave it out), the opponent's values include it.
     * The opponent's holdings: chosen once (margin: its gadget regret plus the worst
     * holding's), each its own game (cfrd: summed), or dealt with its range (none). With
     * linear averaging the averaged regret is at most 2 Q / (T + 1) (Q >= 0 and the weights
     * rise: Abel summation). */
    double q_us = 0.0, q_opp = 0.0, worst = 0.0;
    for (int i = 0; i < n; i++) {
        double mine = 0.0, theirs = 0.0;
        for (int node = 0; node < t->n_nodes; node++) {
            if (t->kind[node] != RV_DECISION)
                continue;
            const int k = t->n_children[node];
            const double *r = w->regret + w->off[node];
            double m = 0.0;
            for (int a = 0; a < k; a++)
                m = r[(size_t)a * n + i] > m ? r[(size_t)a * n + i] : m;
            if (t->player[node] == us)
                mine += m;
            else
                theirs += m;
        }
        q_us += ru[i] * mine;
        if (gadget == RV_GADGET_MARGIN)
            worst = theirs > worst ? theirs : worst;
        else if (gadget == RV_GADGET_CFRD)
            q_opp += theirs + (r_follow[i] > r_stop[i] ? r_follow[i] : r_stop[i]);
        else
            q_opp += g[i] * theirs;
    }
    if (gadget == RV_GADGET_MARGIN) {
        double m = 0.0;
        for (int i = 0; i < n; i++)
            m = r_follow[i] > m ? r_follow[i] : m;
        q_opp = m + worst;
    }
    const double q_sum = q_us + q_opp;
    table_out(w, w->avg, avg);
    table_out(w, w->regret, regret);
    *done = it;
    *bound = 2.0 * q_sum / (it + 1.0);
    work_free(w);
    return RV_OK;
}
