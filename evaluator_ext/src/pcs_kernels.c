/* Public-chance-sampling MCCFR (see pcs_kernels.h).
 *
 * The walk for player `me` carries two reach vectors over the board's holdings, me's (rm)
 * and the opponent's (ro), and returns me's counterfactual value of every holding: the sum,
 * over the opponent's holdings compatible with it, of their reach times me's payoff. At
 * me's nodes every action is walked with rm scaled by the action's probability; at the
 * opponent's, ro is scaled likewise and the values add up. A subtree where both reaches are
 * all zero changes nothing and is skipped (one where only me's reach is zero is not: its
 * regrets are weighted by the opponent's reach alone).
 *
 * The terminal sweeps are sweep_kernels.c's (one copy, shared with river re-solving).
 * Fold: the opponent's reach compatible with holding (a, b) is the total, less the holdings
 * holding a, less those holding b, plus the holding itself (the one subtracted twice); for a
 * one-card holding (a == b) the total less the holding. Showdown: the holdings sorted by hand
 * value once per board, a sweep by groups of equal value keeps the reach below and per card
 * below, so that a holding beats below - below[a] - below[b] and ties with its group less the
 * group's holdings sharing a card; what it loses to is the compatible rest.
 */
#include "pcs_kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mccfr_walk.h"
#include "sweep_kernels.h"
#include "xoshiro.h"

#define N PCS_MAX_HOLDINGS

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* The runs of holdings sharing a bucket, street by street (buckets < 2^16, holdings < 2^11),
 * and the showdown order's cards and groups of equal value. */
static void group_buckets(pcs_board *b)
{
    int g = 0;
    for (int t = 0; t < b->n; t++) {
        b->sorted_a[t] = b->card_a[b->order[t]];
        b->sorted_b[t] = b->card_b[b->order[t]];
        if (t == 0 || b->value[t] != b->value[t - 1])
            b->group_start[g++] = (int16_t)t;
    }
    b->group_start[g] = (int16_t)b->n;
    b->n_groups = g;
    uint32_t keys[PCS_MAX_HOLDINGS];
    for (int st = 0; st < 4; st++) {
        for (int i = 0; i < b->n; i++)
            keys[i] = (uint32_t)b->bucket[st][i] << 11 | (uint32_t)i;
        qsort(keys, (size_t)b->n, sizeof(uint32_t), cmp_u32);
        int r = 0;
        for (int t = 0; t < b->n; t++) {
            b->by_bucket[st][t] = (int16_t)(keys[t] & 2047);
            if (t == 0 || (keys[t] >> 11) != (keys[t - 1] >> 11)) {
                b->run_start[st][r] = (int16_t)t;
                b->run_bucket[st][r++] = (int32_t)(keys[t] >> 11);
            }
        }
        b->run_start[st][r] = (int16_t)b->n;
        b->n_runs[st] = r;
    }
}

void pcs_holdem_board(const mc_game *g, const uint8_t board[5], pcs_board *out)
{
    uint32_t keys[1081];
    int16_t combos[1081];
    int n = mc_sorted_holdings(board, keys, combos);
    double hs[MC_N_COMBOS];
    uint16_t ochs[MC_N_COMBOS];
    if (g->river_cluster)
        mc_river_ochs_buckets(board, g->river_cluster, g->ochs_k, g->river_centroids, g->n_buckets[3], ochs);
    else
        mc_river_hs_all(board, hs);
    const uint16_t *flop = g->flop + mc_board_index(board, 3) * MC_N_COMBOS;
    const uint16_t *turn = g->turn + mc_board_index(board, 4) * MC_N_COMBOS;
    uint64_t used = 0;
    for (int i = 0; i < 5; i++)
        used |= UINT64_C(1) << board[i];
    int j = 0, c = 0;
    for (int hi = 1; hi < 52; hi++)
        for (int lo = 0; lo < hi; lo++, c++) { /* combo order, as mc_sorted_holdings numbers them */
            if (((used >> lo) | (used >> hi)) & 1)
                continue;
            out->holding[j] = (int16_t)c;
            out->card_a[j] = (uint8_t)lo;
            out->card_b[j] = (uint8_t)hi;
            out->bucket[0][j] = g->preflop[c];
            out->bucket[1][j] = flop[c];
            out->bucket[2][j] = turn[c];
            if (g->river_cluster) {
                out->bucket[3][j] = ochs[c];
            } else { /* count edges <= hs (as mc_deal_buckets) */
                int a = 0, b = g->n_buckets[3] - 1;
                while (a < b) {
                    int mid = (a + b) / 2;
                    if (g->river_edges[mid] <= hs[c])
                        a = mid + 1;
                    else
                        b = mid;
                }
                out->bucket[3][j] = a;
            }
            j++;
        }
    out->n = n;
    for (int i = 0; i < n; i++) {
        out->order[i] = (int16_t)(keys[i] & 2047);
        out->value[i] = keys[i] >> 11;
    }
    group_buckets(out);
}

/* Public outcome `pub` of a small game (holdings with a bucket on street 0 take part). */
static void small_board(const pcs_small *s, int64_t pub, pcs_board *out)
{
    int nh = s->n_holdings, n = 0;
    const int32_t *bk = s->buckets + pub * 4 * nh, *val = s->values + pub * nh;
    for (int h = 0; h < nh; h++) {
        if (bk[h] < 0)
            continue;
        out->holding[n] = (int16_t)h;
        out->card_a[n] = s->cards[2 * h];
        out->card_b[n] = s->cards[2 * h + 1];
        for (int st = 0; st < 4; st++)
            out->bucket[st][n] = bk[st * nh + h];
        out->order[n] = (int16_t)n;
        n++;
    }
    out->n = n;
    for (int i = 1; i < n; i++) /* insertion sort by value (small games are small) */
        for (int t = i; t > 0 && val[out->holding[out->order[t - 1]]] > val[out->holding[out->order[t]]]; t--) {
            int16_t x = out->order[t];
            out->order[t] = out->order[t - 1];
            out->order[t - 1] = x;
        }
    for (int i = 0; i < n; i++)
        out->value[i] = (uint32_t)val[out->holding[out->order[i]]];
    group_buckets(out);
}

/* The terminal sweeps are sweep_kernels.c's: a fold over the holdings in their own order,
 * a showdown over them in showdown order (the opponent's reach gathered into x, the values
 * scattered back through order). */
static void fold_values(const pcs_board *b, int one, const double *ro, double scale, double *v)
{
    sw_sums s;
    sw_card_sums(b->n, b->card_a, b->card_b, one, ro, &s);
    sw_fold(b->n, b->card_a, b->card_b, one, ro, &s, scale, v);
}

/* net[i]: the opponent's compatible reach that holding i beats, less the part that beats it
 * (x: scratch for n doubles). */
static void showdown_net(const pcs_board *b, int one, const double *ro, double scale, double *net, double *x)
{
    for (int t = 0; t < b->n; t++)
        x[t] = ro[b->order[t]];
    sw_showdown(b->n, b->sorted_a, b->sorted_b, one, b->group_start, b->n_groups, x, scale, b->order, net, NULL);
}

static int one_card(const pcs_board *b)
{
    return b->n > 0 && b->card_a[0] == b->card_b[0];
}

void pcs_terminals(const pcs_board *b, const double *ro, double *compat, double *net)
{
    int one = one_card(b);
    double x[PCS_MAX_HOLDINGS];
    fold_values(b, one, ro, 1.0, compat);
    showdown_net(b, one, ro, 1.0, net, x);
}

typedef struct {
    const mc_game *g;
    double *regret, *avg;
    pcs_board *b;
    int one;
    double *scratch; /* per depth: sigma[4N], reach[N], values[4N] */
    double *x;        /* the showdown's scratch [N] */
    uint8_t *trained; /* per depth: [N] */
} pcs_walker;

#define LEVEL (9 * (size_t)N)

static int any_nonzero(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (x[i] != 0.0)
            return 1;
    return 0;
}

static void walk(pcs_walker *w, int32_t node, int me, const double *rm, const double *ro, double *v, int depth)
{
    const mc_game *g = w->g;
    const pcs_board *b = w->b;
    int n = b->n, kind = g->kind[node];
    if ((kind == MC_FOLD || kind == MC_SHOWDOWN) && !any_nonzero(ro, n)) {
        memset(v, 0, sizeof(double) * (size_t)n); /* the opponent never gets here */
        return;
    }
    if (kind == MC_FOLD) {
        fold_values(b, w->one, ro, g->player[node] == me ? -g->stake[node] : g->stake[node], v);
        return;
    }
    if (kind == MC_SHOWDOWN) {
        showdown_net(b, w->one, ro, g->stake[node], v, w->x);
        return;
    }
    if (kind == MC_CHANCE) { /* the board is already out: a chance node only passes on */
        walk(w, g->child_index[g->child_start[node]], me, rm, ro, v, depth);
        return;
    }
    int pl = g->player[node], k = g->n_children[node], st = g->street[node];
    const int32_t *kids = g->child_index + g->child_start[node];
    int n_runs = b->n_runs[st];
    const int16_t *by = b->by_bucket[st], *start = b->run_start[st];
    const int32_t *rb = b->run_bucket[st];
    int64_t off = g->offset[node];
    /* per depth: the strategy of each run (4 a run), a reach vector, k value vectors */
    double *sigma = w->scratch + (size_t)depth * LEVEL, *reach = sigma + 4 * N, *vals = reach + N;
    uint8_t *trained = w->trained + (size_t)depth * N;
    for (int r = 0; r < n_runs; r++)
        trained[r] = (uint8_t)mc_strategy_of(w->regret + off + (int64_t)rb[r] * k, k, sigma + 4 * r);
    const double *fixed = pl == me ? ro : rm, *scaled = pl == me ? rm : ro; /* the actor's reach is scaled */
    int fixed_any = any_nonzero(fixed, n);
    for (int a = 0; a < k; a++) {
        int any = 0;
        for (int r = 0; r < n_runs; r++) {
            double s = sigma[4 * r + a];
            for (int t = start[r]; t < start[r + 1]; t++) {
                int i = by[t];
                reach[i] = scaled[i] * s;
                any |= reach[i] != 0.0;
            }
        }
        if (!any && !fixed_any) { /* neither player reaches the subtree: nothing there changes */
            memset(vals + a * N, 0, sizeof(double) * (size_t)n);
            continue;
        }
        if (pl == me)
            walk(w, kids[a], me, reach, ro, vals + a * N, depth + 1);
        else
            walk(w, kids[a], me, rm, reach, vals + a * N, depth + 1);
    }
    if (pl != me) {
        for (int i = 0; i < n; i++) {
            double s = 0.0;
            for (int a = 0; a < k; a++)
                s += vals[a * N + i];
            v[i] = s;
        }
        return;
    }
    /* a row's regret gains, for each action, the sum over its holdings of the action's value
     * less the holding's; its average the strategy times its holdings' own reach */
    for (int r = 0; r < n_runs; r++) {
        const double *s = sigma + 4 * r;
        double sum[4] = {0.0, 0.0, 0.0, 0.0}, own = 0.0;
        for (int t = start[r]; t < start[r + 1]; t++) {
            int i = by[t];
            double ev = 0.0;
            for (int a = 0; a < k; a++) {
                ev += s[a] * vals[a * N + i];
                sum[a] += vals[a * N + i];
            }
            v[i] = ev;
            own += rm[i];
        }
        double ev = 0.0;
        for (int a = 0; a < k; a++)
            ev += s[a] * sum[a];
        int64_t row = off + (int64_t)rb[r] * k;
        for (int a = 0; a < k; a++)
            w->regret[row + a] += sum[a] - ev;
        if (trained[r] && own != 0.0)
            for (int a = 0; a < k; a++)
                w->avg[row + a] += s[a] * own;
    }
}

typedef struct {
    const mc_game *g;
    const pcs_small *small;
    double *regret, *avg;
    int64_t first, stop, step;
    uint64_t seed;
    int levels;
    volatile int64_t *done;
    int status;
} pcs_job;

static void *run_job(void *arg)
{
    pcs_job *j = arg;
    pcs_walker w = {j->g, j->regret, j->avg, NULL, 0, NULL, NULL, NULL};
    w.x = malloc(sizeof(double) * N);
    w.b = malloc(sizeof(pcs_board));
    w.scratch = malloc(sizeof(double) * LEVEL * (size_t)j->levels);
    w.trained = malloc((size_t)N * (size_t)j->levels);
    double *ones = malloc(sizeof(double) * N), *v = malloc(sizeof(double) * N);
    if (!w.b || !w.scratch || !w.x || !w.trained || !ones || !v) {
        j->status = MC_ERR_NOMEM;
        goto out;
    }
    for (int i = 0; i < N; i++)
        ones[i] = 1.0;
    for (int64_t it = j->first; it < j->stop; it += j->step) {
        /* every iteration's own stream: the same numbers however a run is cut into calls */
        uint64_t mix = j->seed ^ (uint64_t)it * UINT64_C(0x9E3779B97F4A7C15);
        xoshiro256 rng;
        xoshiro_seed(&rng, splitmix64(&mix));
        if (j->small) {
            small_board(j->small, (int64_t)(xoshiro_next(&rng) % (uint64_t)j->small->n_public), w.b);
        } else {
            uint8_t deck[52];
            for (int i = 0; i < 52; i++)
                deck[i] = (uint8_t)i;
            for (int i = 0; i < 5; i++) { /* partial Fisher-Yates: the five board cards */
                int r = i + (int)(xoshiro_next(&rng) % (uint64_t)(52 - i));
                uint8_t t = deck[i];
                deck[i] = deck[r];
                deck[r] = t;
            }
            pcs_holdem_board(j->g, deck, w.b);
        }
        w.one = one_card(w.b);
        walk(&w, 0, 0, ones, ones, v, 0);
        walk(&w, 0, 1, ones, ones, v, 0);
        __atomic_add_fetch(j->done, 1, __ATOMIC_RELAXED);
    }
out:
    free(w.b);
    free(w.scratch);
    free(w.x);
    free(w.trained);
    free(ones);
    free(v);
    return NULL;
}

int pcs_run(const mc_game *g, const pcs_small *small, double *regret, double *avg, int64_t first,
            int64_t iterations, uint64_t seed, int threads, volatile int64_t *done)
{
    if (threads < 1 || threads > 64 || iterations < 0 || first < 0)
        return MC_ERR_ARGUMENT;
    int32_t *depth = malloc(sizeof(int32_t) * (size_t)g->n_nodes);
    if (!depth)
        return MC_ERR_NOMEM;
    int levels = 1;
    memset(depth, 0, sizeof(int32_t) * (size_t)g->n_nodes);
    for (int32_t i = 0; i < g->n_nodes; i++) /* children come after their parents: the longest path */
        for (int c = 0; c < g->n_children[i]; c++) {
            int32_t child = g->child_index[g->child_start[i] + c];
            if (depth[i] + 1 > depth[child])
                depth[child] = depth[i] + 1;
            if (depth[child] + 1 > levels)
                levels = depth[child] + 1;
        }
    free(depth);
    pcs_job jobs[64];
    pthread_t ids[64];
    for (int t = 0; t < threads; t++)
        jobs[t] = (pcs_job){g, small, regret, avg, first + t, first + iterations, threads, seed, levels, done, MC_OK};
    int started = 0;
    if (threads > 1)
        for (; started < threads; started++)
            if (pthread_create(&ids[started], NULL, run_job, &jobs[started]))
                break;
    for (int t = 0; t < started; t++)
        pthread_join(ids[t], NULL);
    for (int t = started; t < threads; t++) /* one thread, or threads that could not start: run here */
        run_job(&jobs[t]);
    for (int t = 0; t < threads; t++)
        if (jobs[t].status != MC_OK)
            return jobs[t].status;
    return MC_OK;
}
