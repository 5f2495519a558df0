/* Re-solving the river (see resolve_kernels.h).
 *
 * Everything works in the board's sorted order (holdings by 7-card value, ascending): a
 * reach, value or table row i is the holding b->combo[i]. Tables come in and go out in
 * combo order (the RV layout), 1326 rows a decision node.
 *
 * The walks are recursive over the subgame (a limit river has 27 nodes and a depth of 9)
 * with one value and one reach buffer per node: a node has one parent, so its buffers are
 * written by that parent only.
 *
 * Speed without changing a result (every sum keeps its order, so a solve's tables are the
 * same bit for bit as before these were added):
 * - the work space (board, buffers, tables) is kept for the next call (one spare, taken and
 *   given back atomically, so concurrent calls each get their own), and the board's sort with
 *   it: the gadget's best response and the solve that follows sort the board once;
 * - the terminal children of a node of the walking player see the same opponent reach: the
 *   showdown is swept first and leaves its total and sums per card for the fold beside it;
 * - regret matching at a node of the player being updated is left out: its regrets have not
 *   changed since the other player's walk matched them (the first walk matches all);
 * - regret matching has no branch in its loops (both sides computed, then selected).
 */
#define _POSIX_C_SOURCE 199309L
#include "resolve_kernels.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval_kernels.h"
#include "sweep_kernels.h"

/* The walks' vector loops in an AVX2 copy too, picked at load time on a CPU that has it
 * (gcc on x86-64 Linux). Elementwise adds, multiplies and divides are the same IEEE
 * operations at any width (no fused multiply-adds: -ffp-contract=off), so the results are. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define RV_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define RV_CLONES
#endif

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
    b->cards = used;
    uint16_t value[RV_MAX_HOLDINGS];
    for (int i = 0; i < n; i++) {
        int at = count[keys[i] >> 11]++;
        int j = (int)(keys[i] & 2047);
        int combo = cmb[j];
        b->combo[at] = (int16_t)combo;
        b->pos[combo] = (int16_t)at;
        value[at] = (uint16_t)(keys[i] >> 11);
    }
    /* cards of each sorted holding (combo = hi (hi - 1) / 2 + lo), and the groups of equal value */
    int g = 0;
    for (int i = 0; i < n; i++) {
        int h = b->combo[i], hi = 1;
        while ((hi + 1) * hi / 2 <= h)
            hi++;
        b->hi[i] = (uint8_t)hi;
        b->lo[i] = (uint8_t)(h - hi * (hi - 1) / 2);
        if (i == 0 || value[i] != value[i - 1])
            b->group_start[g++] = (int16_t)i;
    }
    b->group_start[g] = (int16_t)n;
    b->n_groups = g;
    return RV_OK;
}

static void fold_sorted(const rv_board *b, const double *q, const sw_sums *s, double scale, double *out)
{
    sw_fold(b->n, b->lo, b->hi, 0, q, s, scale, out);
}

/* s: NULL, or where the sweep leaves the sums of q (for a fold against the same reach) */
static void showdown_sorted(const rv_board *b, const double *q, double scale, double *out, sw_sums *s)
{
    sw_showdown(b->n, b->lo, b->hi, 0, b->group_start, b->n_groups, q, scale, NULL, out, s);
}

static void sums_of(const rv_board *b, const double *q, sw_sums *s)
{
    sw_card_sums(b->n, b->lo, b->hi, 0, q, s);
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
        sw_sums sums;
        for (int i = 0; i < b->n; i++)
            q[i] = reach[b->combo[i]];
        showdown_sorted(b, q, 1.0, s, &sums);
        fold_sorted(b, q, &sums, 1.0, f);
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
    int have_board; /* b holds the sort of board b.cards */
    int n;
    int all; /* match every node (the first walk of a solve), not just the other player's */
    int64_t off[RV_MAX_NODES]; /* a decision node's table in sorted layout (n rows) */
    int64_t off_rv[RV_MAX_NODES]; /* ... and in the RV layout (1326 rows) */
    int64_t size;
    size_t cap_nodes, cap_table; /* the doubles the buffers below hold */
    double *val, *reach; /* n_nodes x n each */
    double *regret, *avg, *sigma, *fixed; /* size each (sorted layout, action-major per node) */
    double scratch[2 * RV_MAX_HOLDINGS];
} rv_work;

static _Atomic(rv_work *) spare_work = NULL;

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

/* Give w back as the spare (or free it when another call gave one back first). */
static void work_done(rv_work *w)
{
    rv_work *expected = NULL;
    if (w && !atomic_compare_exchange_strong(&spare_work, &expected, w))
        work_free(w);
}

/* A work space for tree t and board: the spare when there is one, with regret and avg
 * zeroed (the other buffers are written before they are read). */
static rv_work *work_new(const rv_tree *t, const uint8_t board[5], int *status)
{
    int64_t rv_size;
    *status = rv_tree_check(t, &rv_size);
    if (*status)
        return NULL;
    uint64_t used = 0;
    for (int i = 0; i < 5; i++) {
        if (board[i] > 51 || (used >> board[i]) & 1) {
            *status = RV_ERR_ARGUMENT;
            return NULL;
        }
        used |= UINT64_C(1) << board[i];
    }
    rv_work *w = atomic_exchange(&spare_work, NULL);
    if (!w && !(w = calloc(1, sizeof *w))) {
        *status = RV_ERR_NOMEM;
        return NULL;
    }
    w->t = t;
    if (!w->have_board || w->b.cards != used) {
        w->have_board = 0;
        if ((*status = rv_board_init(&w->b, board)) != RV_OK) {
            work_done(w);
            return NULL;
        }
        w->have_board = 1;
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
    if (nodes > w->cap_nodes) {
        free(w->val);
        free(w->reach);
        w->val = malloc(nodes * sizeof(double));
        w->reach = malloc(nodes * sizeof(double));
        w->cap_nodes = w->val && w->reach ? nodes : 0;
    }
    if (table > w->cap_table) {
        free(w->regret);
        free(w->avg);
        free(w->sigma);
        free(w->fixed);
        w->regret = malloc(table * sizeof(double));
        w->avg = malloc(table * sizeof(double));
        w->sigma = malloc(table * sizeof(double));
        w->fixed = malloc(table * sizeof(double));
        w->cap_table = w->regret && w->avg && w->sigma && w->fixed ? table : 0;
    }
    if (!w->cap_nodes || !w->cap_table) {
        work_free(w);
        *status = RV_ERR_NOMEM;
        return NULL;
    }
    memset(w->regret, 0, table * sizeof(double));
    memset(w->avg, 0, table * sizeof(double));
    w->all = 1;
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

/* The sums of one opponent reach, once taken (by a showdown's sweep or for a fold). */
typedef struct {
    int have;
    sw_sums s;
} q_sums;

/* A terminal's values for player p's holdings against the other's reach q (qs: the sums of
 * q, shared by the terminals that see the same q; or NULL). */
static void terminal(const rv_work *w, int node, int p, const double *q, q_sums *qs, double *out)
{
    const rv_tree *t = w->t;
    const double stake = t->stake[node];
    if (t->kind[node] == RV_FOLD) {
        q_sums own = {.have = 0};
        if (!qs)
            qs = &own;
        if (!qs->have) {
            sums_of(&w->b, q, &qs->s);
            qs->have = 1;
        }
        fold_sorted(&w->b, q, &qs->s, t->player[node] == p ? -stake : stake, out);
    } else {
        showdown_sorted(&w->b, q, stake, out, qs && !qs->have ? &qs->s : NULL);
        if (qs)
            qs->have = 1;
    }
}

/* The order in which a node of the walking player visits its children: showdowns first (a
 * fold after them reuses the showdown's sums of the same reach). */
static int visit_order(const rv_tree *t, int node, int order[RV_MAX_ACTIONS])
{
    const int k = t->n_children[node];
    const int32_t *kids = t->child_index + t->child_start[node];
    int m = 0;
    for (int a = 0; a < k; a++)
        if (t->kind[kids[a]] == RV_SHOWDOWN)
            order[m++] = a;
    for (int a = 0; a < k; a++)
        if (t->kind[kids[a]] != RV_SHOWDOWN)
            order[m++] = a;
    return k;
}

/* Values of player p's holdings with the other's reach q: p best-responds (br) or plays
 * the fixed table too; the other plays the fixed table. Tables in sorted layout are
 * action-major: row a of a node is s[a * n .. a * n + n). */
static void eval_walk(rv_work *w, int node, int p, int br, const double *q, double *out)
{
    const rv_tree *t = w->t;
    const int n = w->n;
    if (t->kind[node] != RV_DECISION) {
        terminal(w, node, p, q, NULL, out);
        return;
    }
    const int k = t->n_children[node];
    const int32_t *kids = t->child_index + t->child_start[node];
    const double *s = w->fixed + w->off[node];
    if (t->player[node] == p) {
        q_sums shared = {.have = 0};
        int order[RV_MAX_ACTIONS];
        visit_order(t, node, order);
        for (int o = 0; o < k; o++) {
            const int a = order[o];
            double *va = w->val + (size_t)kids[a] * n;
            if (t->kind[kids[a]] != RV_DECISION)
                terminal(w, kids[a], p, q, &shared, va);
            else
                eval_walk(w, kids[a], p, br, q, va);
        }
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
    work_done(w);
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
    work_done(w);
    return RV_OK;
}

/* Regret matching+ at a node: sigma from the (non-negative) regrets, uniform when none.
 * Both sides of each choice are computed and one selected, so the loops have no branch
 * (the same doubles as choosing first: r * (1 / sum), not r / sum). */
RV_CLONES static void match(rv_work *w, int node)
{
    const int k = w->t->n_children[node], n = w->n;
    const double *r = w->regret + w->off[node];
    double *s = w->sigma + w->off[node];
    double *sum = w->scratch, *inv = w->scratch + RV_MAX_HOLDINGS;
    for (int i = 0; i < n; i++)
        sum[i] = r[i];
    for (int a = 1; a < k; a++)
        for (int i = 0; i < n; i++)
            sum[i] += r[(size_t)a * n + i];
    for (int i = 0; i < n; i++) /* 1 / 0 is inf, never selected */
        inv[i] = 1.0 / sum[i];
    for (int i = 0; i < n; i++)
        inv[i] = sum[i] > 0.0 ? inv[i] : 0.0;
    const double uniform = 1.0 / k;
    for (int a = 0; a < k; a++) {
        double *sa = s + (size_t)a * n;
        const double *ra = r + (size_t)a * n;
        for (int i = 0; i < n; i++)
            sa[i] = ra[i] * inv[i];
        for (int i = 0; i < n; i++)
            sa[i] = inv[i] > 0.0 ? sa[i] : uniform;
    }
}

/* One CFR+ update of player p: q the other's reach (s: its sums, or NULL), own p's reach
 * inside the subgame, weight the averaging weight of this iteration; out: p's
 * counterfactual values. */
RV_CLONES static void cfr_walk(rv_work *w, int node, int p, const double *q, q_sums *qs, const double *own, double weight,
                     double *out)
{
    const rv_tree *t = w->t;
    const int n = w->n;
    if (t->kind[node] != RV_DECISION) {
        terminal(w, node, p, q, qs, out);
        return;
    }
    const int k = t->n_children[node];
    const int32_t *kids = t->child_index + t->child_start[node];
    if (w->all || t->player[node] != p)
        match(w, node);
    const double *s = w->sigma + w->off[node];
    if (t->player[node] == p) {
        q_sums shared = {.have = 0};
        int order[RV_MAX_ACTIONS];
        visit_order(t, node, order);
        for (int o = 0; o < k; o++) {
            const int a = order[o];
            double *r = w->reach + (size_t)kids[a] * n;
            const double *sa = s + (size_t)a * n;
            for (int i = 0; i < n; i++)
                r[i] = own[i] * sa[i];
            cfr_walk(w, kids[a], p, q, t->kind[kids[a]] != RV_DECISION ? &shared : NULL, r, weight,
                     w->val + (size_t)kids[a] * n);
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
        cfr_walk(w, kids[a], p, r, NULL, own, weight, v);
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
               const double *opp_values, int gadget, double mix, int iterations, double budget_seconds,
               double *avg, double *regret, int *done, double *bound)
{
    if (us < 0 || us > 1 || iterations < 1 || gadget < RV_GADGET_NONE || gadget > RV_GADGET_MARGIN ||
        (gadget == RV_GADGET_NONE && !reach_opp) || (gadget != RV_GADGET_NONE && !opp_values) || !(mix >= 0.0) ||
        mix > 1.0 || (mix > 0.0 && (gadget != RV_GADGET_MARGIN || !reach_opp)))
        return RV_ERR_ARGUMENT;
    const double start = now_seconds();
    int status;
    rv_work *w = work_new(t, board, &status);
    if (!w)
        return status;
    const int n = w->n, opp = 1 - us;
    double ru[RV_MAX_HOLDINGS], g[RV_MAX_HOLDINGS], target[RV_MAX_HOLDINGS], ones[RV_MAX_HOLDINGS];
    double v[RV_MAX_HOLDINGS], r_follow[RV_MAX_HOLDINGS], r_stop[RV_MAX_HOLDINGS];
    double range[RV_MAX_HOLDINGS], entry[RV_MAX_HOLDINGS]; /* mix: the range over the holdings; our opponent */
    to_sorted(w, reach_us, ru);
    double range_sum = 0.0;
    for (int i = 0; i < n; i++)
        range_sum += range[i] = mix > 0.0 ? reach_opp[w->b.combo[i]] : 0.0;
    for (int i = 0; i < n; i++)
        range[i] = range_sum > 0.0 ? range[i] / range_sum : 1.0 / n;
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
        cfr_walk(w, 0, opp, ru, NULL, ones, weight, v);
        w->all = 0;
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
        /* us, against the opponent's entering reach (mix: its range with chance mix, else its choice) */
        if (mix > 0.0) {
            for (int i = 0; i < n; i++)
                entry[i] = mix * range[i] + (1.0 - mix) * g[i];
        }
        cfr_walk(w, 0, us, mix > 0.0 ? entry : g, NULL, ones, weight, v);
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
    double q_us = 0.0, q_opp = 0.0, worst = 0.0, dealt = 0.0;
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
        if (gadget == RV_GADGET_MARGIN) {
            worst = theirs > worst ? theirs : worst;
            dealt += range[i] * theirs;
        }
        else if (gadget == RV_GADGET_CFRD)
            q_opp += theirs + (r_follow[i] > r_stop[i] ? r_follow[i] : r_stop[i]);
        else
            q_opp += g[i] * theirs;
    }
    if (gadget == RV_GADGET_MARGIN) {
        double m = 0.0;
        for (int i = 0; i < n; i++)
            m = r_follow[i] > m ? r_follow[i] : m;
        q_opp = (1.0 - mix) * (m + worst) + mix * dealt; /* mix: the dealt branch adds its range's regret */
    }
    const double q_sum = q_us + q_opp;
    table_out(w, w->avg, avg);
    table_out(w, w->regret, regret);
    *done = it;
    *bound = 2.0 * q_sum / (it + 1.0);
    work_done(w);
    return RV_OK;
}

int rv_normalise(const rv_tree *t, const double *avg, const double *regret, const double *fallback, double *out)
{
    int64_t size;
    int status = rv_tree_check(t, &size);
    if (status)
        return status;
    int64_t off = 0;
    for (int node = 0; node < t->n_nodes; node++) {
        if (t->kind[node] != RV_DECISION)
            continue;
        const int k = t->n_children[node];
        const double uniform = 1.0 / k;
        for (int h = 0; h < RV_N_COMBOS; h++, off += k) {
            const double *rows[3] = {avg + off, regret + off, fallback + off};
            const double *use = NULL;
            double sum = 0.0;
            for (int j = 0; j < 3 && !use; j++) { /* the sum in action order, as numpy's */
                sum = rows[j][0];
                for (int a = 1; a < k; a++)
                    sum += rows[j][a];
                if (sum > 0.0)
                    use = rows[j];
            }
            for (int a = 0; a < k; a++)
                out[off + a] = use ? use[a] / sum : uniform;
        }
    }
    return RV_OK;
}
