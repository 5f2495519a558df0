/* Imperfect-recall card abstraction and external-sampling MCCFR (see mccfr_kernels.h).
 *
 * River HS of every holding on a board at once: evaluate the 1081 holdings the board
 * leaves, sort them by hand value (two-pass radix sort), and sweep groups of equal value
 * keeping, for every card, how many holdings below hold it: a holding (a, b) beats
 * below - below[a] - below[b] opponents (only itself holds both), and ties with the
 * group's holdings that hold neither a nor b. Exact card removal in O(n) after the sort.
 * OCHS (HS against each cluster of opponent holdings) is the same sweep with the counts kept
 * per card and cluster: O(n k).
 *
 * External-sampling MCCFR (Lanctot et al. 2009): each iteration deals real cards, looks up
 * both players' buckets on every street (an information set is the betting node and the
 * bucket of the current street only: imperfect recall), then walks the tree once per
 * player: at the walker's nodes every action is tried and regrets are updated; at the
 * opponent's nodes one action is sampled from its current strategy, whose probabilities
 * are added to the average strategy. Regret matching turns regrets into strategies.
 * Regrets and averages are doubles: float32 rounds each addition to the sum's spacing (at a
 * row's millionth visit a probability is added with an error up to 6% of itself; past about
 * 16.7 million visits increments stop counting).
 * A row whose regrets were never updated (all exactly 0) adds nothing to the average: its
 * strategy is the uniform default, not something learnt, and averaging it made rows that
 * the opponent's samples never reached play uniform (folding a third or half of the time,
 * whatever the cards); such rows keep an empty average and get the caller's fallback.
 *
 * The same walk also runs on a small game given by a table of equally likely deals (each
 * deal: both players' bucket on every street and the showdown's winner), so that the
 * solver is checked against exact best responses on Kuhn and Leduc poker.
 */
#include "mccfr_kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "eval_kernels.h"
#include "mccfr_walk.h"
#include "xoshiro.h"

static uint8_t g_lo[MC_N_COMBOS], g_hi[MC_N_COMBOS];
static int64_t g_choose[53][6];

int mc_init(void)
{
    int status = ek_init();
    if (status)
        return status;
    int c = 0;
    for (int hi = 1; hi < 52; hi++)
        for (int lo = 0; lo < hi; lo++, c++) {
            g_lo[c] = (uint8_t)lo;
            g_hi[c] = (uint8_t)hi;
        }
    for (int n = 0; n <= 52; n++)
        for (int k = 0; k < 6; k++)
            g_choose[n][k] = (k == 0) ? 1 : (n == 0 ? 0 : g_choose[n - 1][k - 1] + g_choose[n - 1][k]);
    return MC_OK;
}

static inline int combo_of(int a, int b)
{
    return a > b ? a * (a - 1) / 2 + b : b * (b - 1) / 2 + a;
}

int64_t mc_board_index(const uint8_t *cards, int n)
{
    uint8_t s[5];
    memcpy(s, cards, (size_t)n);
    for (int i = 1; i < n; i++) /* insertion sort */
        for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
            uint8_t t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    int64_t index = 0;
    for (int i = 0; i < n; i++)
        index += g_choose[s[i]][i + 1];
    return index;
}

static int valid_board(const uint8_t *board, int n, uint64_t *mask)
{
    uint64_t m = 0;
    for (int i = 0; i < n; i++) {
        if (board[i] > 51 || (m >> board[i]) & 1)
            return 0;
        m |= UINT64_C(1) << board[i];
    }
    *mask = m;
    return 1;
}

/* The holdings a complete board leaves, sorted by hand value: keys[i] = value << 11 | j,
 * ascending, where cmb[j] is the combo; returns their number n. */
static int sorted_holdings(const uint8_t board[5], uint64_t used, uint32_t keys[1081], int16_t cmb[1081])
{
    uint32_t tmp[1081];
    uint8_t cards[7];
    memcpy(cards, board, 5);
    int n = 0;
    for (int c = 0; c < MC_N_COMBOS; c++) {
        if (((used >> g_lo[c]) | (used >> g_hi[c])) & 1)
            continue;
        cards[5] = g_lo[c];
        cards[6] = g_hi[c];
        keys[n] = ((uint32_t)ek_evaluate(cards, 7) << 11) | (uint32_t)n;
        cmb[n] = (int16_t)c;
        n++;
    }
    /* LSD radix sort on the 13-bit value (bits 11..23): 7 bits, then 6 */
    int count[128];
    uint32_t *src = keys, *dst = tmp;
    for (int pass = 0; pass < 2; pass++) {
        int shift = pass ? 18 : 11, mask = pass ? 63 : 127;
        memset(count, 0, sizeof count);
        for (int i = 0; i < n; i++)
            count[(src[i] >> shift) & mask]++;
        for (int b = 0, sum = 0; b <= mask; b++) {
            int t = count[b];
            count[b] = sum;
            sum += t;
        }
        for (int i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & mask]++] = src[i];
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    return n; /* two passes: the sorted keys are back in keys */
}

int mc_sorted_holdings(const uint8_t board[5], uint32_t keys[1081], int16_t combos[1081])
{
    uint64_t used;
    if (!valid_board(board, 5, &used))
        return MC_ERR_ARGUMENT;
    return sorted_holdings(board, used, keys, combos);
}

/* River HS of the holdings a complete board leaves: n of them, combos[i] and hs[i]. */
static int river_core(const uint8_t board[5], uint64_t used, int16_t *combos, double *hs)
{
    uint32_t src[1081];
    int16_t cmb[1081];
    int n = sorted_holdings(board, used, src, cmb);
    int below[52] = {0}, equal[52] = {0};
    int below_total = 0;
    const double opponents = 990.0; /* C(45, 2) */
    for (int i = 0; i < n;) {
        uint32_t v = src[i] >> 11;
        int j = i;
        while (j < n && (src[j] >> 11) == v)
            j++;
        for (int t = i; t < j; t++) {
            int c = cmb[src[t] & 2047];
            equal[g_lo[c]]++;
            equal[g_hi[c]]++;
        }
        for (int t = i; t < j; t++) {
            int k = (int)(src[t] & 2047), c = cmb[k], a = g_lo[c], b = g_hi[c];
            int wins = below_total - below[a] - below[b];
            int ties = (j - i) - equal[a] - equal[b] + 1;
            combos[t] = (int16_t)c;
            hs[t] = (wins + 0.5 * ties) / opponents;
        }
        for (int t = i; t < j; t++) {
            int c = cmb[src[t] & 2047];
            below[g_lo[c]]++;
            below[g_hi[c]]++;
            equal[g_lo[c]] = equal[g_hi[c]] = 0;
        }
        below_total += j - i;
        i = j;
    }
    return n;
}

int mc_river_hs_all(const uint8_t board[5], double hs[MC_N_COMBOS])
{
    uint64_t used;
    if (!valid_board(board, 5, &used))
        return MC_ERR_ARGUMENT;
    int16_t combos[1081];
    double v[1081];
    for (int c = 0; c < MC_N_COMBOS; c++)
        hs[c] = -1.0;
    int n = river_core(board, used, combos, v);
    for (int i = 0; i < n; i++)
        hs[combos[i]] = v[i];
    return MC_OK;
}

/* The OCHS of one holding from its counts against each cluster (wins, ties, opponents):
 * the same expression for the sweep and the enumeration, so both give the same doubles. */
static void ochs_from_counts(const int *wins, const int *ties, const int *opp, int k, double *out)
{
    int w = 0, t = 0;
    for (int j = 0; j < k; j++) {
        w += wins[j];
        t += ties[j];
    }
    double hs = (w + 0.5 * t) / 990.0;
    for (int j = 0; j < k; j++)
        out[j] = opp[j] > 0 ? (wins[j] + 0.5 * ties[j]) / opp[j] : hs;
}

static int valid_clusters(const uint8_t *cluster, int k)
{
    if (k < 1 || k > MC_MAX_CLUSTERS)
        return 0;
    for (int c = 0; c < MC_N_COMBOS; c++)
        if (cluster[c] >= k)
            return 0;
    return 1;
}

int mc_river_ochs_all(const uint8_t board[5], const uint8_t cluster[MC_N_COMBOS], int k, double *out)
{
    uint64_t used;
    if (!valid_board(board, 5, &used) || !valid_clusters(cluster, k))
        return MC_ERR_ARGUMENT;
    uint32_t src[1081];
    int16_t cmb[1081];
    int n = sorted_holdings(board, used, src, cmb);
    /* per card and cluster: holdings below the current group, in it, and in all */
    int below[52][MC_MAX_CLUSTERS], equal[52][MC_MAX_CLUSTERS], count[52][MC_MAX_CLUSTERS];
    int below_total[MC_MAX_CLUSTERS] = {0}, group[MC_MAX_CLUSTERS] = {0}, total[MC_MAX_CLUSTERS] = {0};
    memset(below, 0, sizeof below);
    memset(equal, 0, sizeof equal);
    memset(count, 0, sizeof count);
    for (int c = 0; c < MC_N_COMBOS * k; c++)
        out[c] = -1.0;
    for (int i = 0; i < n; i++) {
        int c = cmb[src[i] & 2047], j = cluster[c];
        count[g_lo[c]][j]++;
        count[g_hi[c]][j]++;
        total[j]++;
    }
    int wins[MC_MAX_CLUSTERS], ties[MC_MAX_CLUSTERS], opp[MC_MAX_CLUSTERS];
    for (int i = 0; i < n;) {
        uint32_t v = src[i] >> 11;
        int e = i;
        while (e < n && (src[e] >> 11) == v)
            e++;
        for (int t = i; t < e; t++) {
            int c = cmb[src[t] & 2047], j = cluster[c];
            equal[g_lo[c]][j]++;
            equal[g_hi[c]][j]++;
            group[j]++;
        }
        for (int t = i; t < e; t++) {
            int c = cmb[src[t] & 2047], a = g_lo[c], b = g_hi[c], own = cluster[c];
            for (int j = 0; j < k; j++) {
                int self = own == j; /* the holding itself is in the group and holds a and b */
                wins[j] = below_total[j] - below[a][j] - below[b][j];
                ties[j] = group[j] - equal[a][j] - equal[b][j] + self;
                opp[j] = total[j] - count[a][j] - count[b][j] + self;
            }
            ochs_from_counts(wins, ties, opp, k, out + (size_t)c * (size_t)k);
        }
        for (int t = i; t < e; t++) {
            int c = cmb[src[t] & 2047], j = cluster[c];
            below[g_lo[c]][j]++;
            below[g_hi[c]][j]++;
            equal[g_lo[c]][j] = equal[g_hi[c]][j] = 0;
            below_total[j]++;
            group[j] = 0;
        }
        i = e;
    }
    return MC_OK;
}

/* mc_river_ochs_one without its checks (the walk's deals and clusters are checked once). */
static void ochs_one(const uint8_t hole[2], const uint8_t board[5], uint64_t used, const uint8_t *cluster, int k,
                     double *out)
{
    used |= (UINT64_C(1) << hole[0]) | (UINT64_C(1) << hole[1]);
    uint8_t cards[7];
    memcpy(cards, board, 5);
    cards[5] = hole[0];
    cards[6] = hole[1];
    uint16_t mine = ek_evaluate(cards, 7);
    int wins[MC_MAX_CLUSTERS] = {0}, ties[MC_MAX_CLUSTERS] = {0}, opp[MC_MAX_CLUSTERS] = {0};
    for (int c = 0; c < MC_N_COMBOS; c++) {
        if (((used >> g_lo[c]) | (used >> g_hi[c])) & 1)
            continue;
        cards[5] = g_lo[c];
        cards[6] = g_hi[c];
        uint16_t theirs = ek_evaluate(cards, 7);
        int j = cluster[c];
        opp[j]++;
        wins[j] += mine > theirs;
        ties[j] += mine == theirs;
    }
    ochs_from_counts(wins, ties, opp, k, out);
}

int mc_river_ochs_one(const uint8_t hole[2], const uint8_t board[5], const uint8_t cluster[MC_N_COMBOS], int k,
                      double *out)
{
    uint64_t used;
    if (!valid_board(board, 5, &used) || !valid_clusters(cluster, k) || hole[0] > 51 || hole[1] > 51 ||
        hole[0] == hole[1] || ((used >> hole[0]) & 1) || ((used >> hole[1]) & 1))
        return MC_ERR_ARGUMENT;
    ochs_one(hole, board, used, cluster, k, out);
    return MC_OK;
}

int32_t mc_nearest_l2(const double *x, const double *centroids, int n, int k)
{
    double best = 0.0;
    int32_t arg = 0;
    for (int c = 0; c < n; c++) {
        const double *q = centroids + (int64_t)c * k;
        double s = 0.0;
        for (int j = 0; j < k; j++) {
            double d = x[j] - q[j];
            s += d * d;
        }
        if (c == 0 || s < best) {
            best = s;
            arg = c;
        }
    }
    return arg;
}

int mc_river_ochs_buckets(const uint8_t board[5], const uint8_t cluster[MC_N_COMBOS], int k, const double *centroids,
                          int n, uint16_t out[MC_N_COMBOS])
{
    if (n < 1 || n > 65535)
        return MC_ERR_ARGUMENT;
    double *x = malloc(sizeof(double) * (size_t)MC_N_COMBOS * (size_t)(k > 0 ? k : 1));
    if (!x)
        return MC_ERR_NOMEM;
    int status = mc_river_ochs_all(board, cluster, k, x);
    for (int c = 0; status == MC_OK && c < MC_N_COMBOS; c++)
        out[c] = x[(size_t)c * (size_t)k] < 0.0 ? MC_NO_BUCKET
                                                : (uint16_t)mc_nearest_l2(x + (size_t)c * (size_t)k, centroids, n, k);
    free(x);
    return status;
}

/* Add the river HS of every holding on the complete board full[5] to its histogram. */
static void add_runout(const uint8_t full[5], uint64_t used, int n_bins, uint16_t *hist)
{
    int16_t combos[1081];
    double hs[1081];
    int n = river_core(full, used, combos, hs);
    for (int i = 0; i < n; i++) {
        int bin = (int)(hs[i] * n_bins);
        if (bin >= n_bins)
            bin = n_bins - 1;
        hist[(size_t)combos[i] * (size_t)n_bins + (size_t)bin]++;
    }
}

int mc_board_histograms(const uint8_t *board, int n_board, int n_bins, uint16_t *hist)
{
    uint64_t used;
    if ((n_board != 3 && n_board != 4) || n_bins < 1 || n_bins > 1000 || !valid_board(board, n_board, &used))
        return MC_ERR_ARGUMENT;
    memset(hist, 0, sizeof(uint16_t) * (size_t)MC_N_COMBOS * (size_t)n_bins);
    uint8_t full[5];
    memcpy(full, board, (size_t)n_board);
    for (int t = 0; t < 52; t++) {
        if ((used >> t) & 1)
            continue;
        uint64_t with_t = used | (UINT64_C(1) << t);
        full[n_board] = (uint8_t)t;
        if (n_board == 4) { /* a turn board: t is the river */
            add_runout(full, with_t, n_bins, hist);
            continue;
        }
        for (int r = t + 1; r < 52; r++) { /* a flop: every turn t and river r > t */
            if ((used >> r) & 1)
                continue;
            full[4] = (uint8_t)r;
            add_runout(full, with_t | (UINT64_C(1) << r), n_bins, hist);
        }
    }
    return MC_OK;
}

void mc_assign_l1(const float *points, int64_t n, const float *centroids, int k, int d, int32_t *out,
                  float *dist)
{
    for (int64_t i = 0; i < n; i++) {
        const float *p = points + i * d;
        float best = 0.0f;
        int32_t arg = 0;
        for (int c = 0; c < k; c++) {
            const float *q = centroids + (int64_t)c * d;
            float s = 0.0f;
            for (int j = 0; j < d; j++) {
                float x = p[j] - q[j];
                s += x < 0 ? -x : x;
            }
            if (c == 0 || s < best) {
                best = s;
                arg = c;
            }
        }
        out[i] = arg;
        if (dist)
            dist[i] = best;
    }
}

int mc_board_buckets(const uint8_t *board, int n_board, int n_bins, const float *centroids, int k,
                     uint16_t out[MC_N_COMBOS])
{
    if (k < 1 || k > 65535)
        return MC_ERR_ARGUMENT;
    uint16_t *hist = malloc(sizeof(uint16_t) * (size_t)MC_N_COMBOS * (size_t)n_bins);
    float *cdf = malloc(sizeof(float) * (size_t)n_bins);
    if (!hist || !cdf) {
        free(hist);
        free(cdf);
        return MC_ERR_NOMEM;
    }
    int status = mc_board_histograms(board, n_board, n_bins, hist);
    for (int c = 0; status == MC_OK && c < MC_N_COMBOS; c++) {
        const uint16_t *h = hist + (size_t)c * (size_t)n_bins;
        int total = 0;
        for (int j = 0; j < n_bins; j++)
            total += h[j];
        if (total == 0) {
            out[c] = MC_NO_BUCKET;
            continue;
        }
        int run = 0;
        for (int j = 0; j < n_bins; j++) {
            run += h[j];
            cdf[j] = (float)run / (float)total;
        }
        int32_t b;
        mc_assign_l1(cdf, 1, centroids, k, n_bins, &b, NULL);
        out[c] = (uint16_t)b;
    }
    free(hist);
    free(cdf);
    return status;
}

/* ---- external-sampling MCCFR ---- */

void mc_deal_buckets(const mc_game *g, const uint8_t hole[2], const uint8_t board[5], int32_t out[4])
{
    int combo = combo_of(hole[0], hole[1]);
    out[0] = g->preflop[combo];
    out[1] = g->flop[mc_board_index(board, 3) * MC_N_COMBOS + combo];
    out[2] = g->turn[mc_board_index(board, 4) * MC_N_COMBOS + combo];
    if (g->river_cluster) { /* OCHS: the nearest centroid of the holding's cluster equities */
        double x[MC_MAX_CLUSTERS];
        uint64_t used = 0;
        for (int i = 0; i < 5; i++)
            used |= UINT64_C(1) << board[i];
        ochs_one(hole, board, used, g->river_cluster, g->ochs_k, x);
        out[3] = mc_nearest_l2(x, g->river_centroids, g->n_buckets[3], g->ochs_k);
        return;
    }
    double c[3];
    ek_hand_strength_counts(hole, board, 5, NULL, c);
    double hs = (c[0] + 0.5 * c[1]) / (c[0] + c[1] + c[2]);
    int lo = 0, hi = g->n_buckets[3] - 1; /* count edges <= hs (numpy searchsorted 'right') */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (g->river_edges[mid] <= hs)
            lo = mid + 1;
        else
            hi = mid;
    }
    out[3] = lo;
}

typedef struct {
    const mc_game *g;
    double *regret, *avg;
    int32_t buckets[2][4];
    int winner; /* 0 or 1, -1 on a tie */
    xoshiro256 rng;
} walker;

static double walk(walker *w, int32_t node, int me)
{
    const mc_game *g = w->g;
    double value;
    if (mc_terminal(g, node, me, w->winner, &value))
        return value;
    if (g->kind[node] == MC_CHANCE)
        return walk(w, g->child_index[g->child_start[node]], me);
    int pl = g->player[node], k = g->n_children[node];
    const int32_t *kids = g->child_index + g->child_start[node];
    int64_t row = g->offset[node] + (int64_t)w->buckets[pl][g->street[node]] * k;
    double sigma[4];
    int trained = mc_strategy_of(w->regret + row, k, sigma);
    if (pl == me) {
        double u[4], ev = 0.0;
        for (int a = 0; a < k; a++) {
            u[a] = walk(w, kids[a], me);
            ev += sigma[a] * u[a];
        }
        for (int a = 0; a < k; a++)
            w->regret[row + a] += u[a] - ev;
        return ev;
    }
    if (trained) {
        double *avg = w->avg + row;
        for (int a = 0; a < k; a++)
            avg[a] += sigma[a];
    }
    return walk(w, kids[mc_sample(&w->rng, sigma, k)], me);
}

typedef struct {
    const mc_game *g;
    double *regret, *avg;
    int64_t first, stop, step; /* iteration numbers first, first + step, ... below stop */
    uint64_t seed;
    volatile int64_t *done;
    const int32_t *deals; /* NULL: real cards; else n_deals rows of MC_DEAL_INTS */
    int64_t n_deals;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    walker w;
    w.g = j->g;
    w.regret = j->regret;
    w.avg = j->avg;
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    for (int64_t it = j->first; it < j->stop; it += j->step) {
        /* every iteration's own stream: the same numbers however a run is cut into calls */
        uint64_t mix = j->seed ^ (uint64_t)it * UINT64_C(0x9E3779B97F4A7C15);
        xoshiro_seed(&w.rng, splitmix64(&mix));
        if (j->deals) { /* a small game: one of its equally likely deals */
            const int32_t *d = j->deals + (int64_t)(xoshiro_next(&w.rng) % (uint64_t)j->n_deals) * MC_DEAL_INTS;
            memcpy(w.buckets[0], d, sizeof(int32_t) * 4);
            memcpy(w.buckets[1], d + 4, sizeof(int32_t) * 4);
            w.winner = d[8];
            walk(&w, 0, 0);
            walk(&w, 0, 1);
            __atomic_add_fetch(j->done, 1, __ATOMIC_RELAXED);
            continue;
        }
        for (int i = 0; i < 52; i++)
            deck[i] = (uint8_t)i;
        for (int i = 0; i < 9; i++) { /* partial Fisher-Yates: the first 9 cards */
            int r = i + (int)(xoshiro_next(&w.rng) % (uint64_t)(52 - i));
            uint8_t t = deck[i];
            deck[i] = deck[r];
            deck[r] = t;
        }
        const uint8_t *board = deck + 4;
        uint8_t h0[2] = {deck[0], deck[1]}, h1[2] = {deck[2], deck[3]};
        mc_deal_buckets(j->g, h0, board, w.buckets[0]);
        mc_deal_buckets(j->g, h1, board, w.buckets[1]);
        uint8_t c0[7] = {h0[0], h0[1], board[0], board[1], board[2], board[3], board[4]};
        uint8_t c1[7] = {h1[0], h1[1], board[0], board[1], board[2], board[3], board[4]};
        uint16_t v0 = ek_evaluate(c0, 7), v1 = ek_evaluate(c1, 7);
        w.winner = v0 > v1 ? 0 : (v1 > v0 ? 1 : -1);
        walk(&w, 0, 0);
        walk(&w, 0, 1);
        __atomic_add_fetch(j->done, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static int run_jobs(const mc_game *g, double *regret, double *avg, int64_t first, int64_t iterations, uint64_t seed,
                    int threads, volatile int64_t *done, const int32_t *deals, int64_t n_deals)
{
    if (threads < 1 || threads > 64 || iterations < 0 || first < 0)
        return MC_ERR_ARGUMENT;
    job jobs[64];
    pthread_t ids[64];
    for (int t = 0; t < threads; t++)
        jobs[t] = (job){g, regret, avg, first + t, first + iterations, threads, seed, done, deals, n_deals};
    if (threads == 1) {
        run_job(&jobs[0]);
        return MC_OK;
    }
    int started = 0;
    for (; started < threads; started++)
        if (pthread_create(&ids[started], NULL, run_job, &jobs[started]))
            break;
    for (int t = 0; t < started; t++)
        pthread_join(ids[t], NULL);
    for (int t = started; t < threads; t++) /* threads that could not start: run here */
        run_job(&jobs[t]);
    return MC_OK;
}

int mc_run(const mc_game *g, double *regret, double *avg, int64_t first, int64_t iterations, uint64_t seed,
           int threads, volatile int64_t *done)
{
    return run_jobs(g, regret, avg, first, iterations, seed, threads, done, NULL, 0);
}

int mc_run_deals(const mc_game *g, const int32_t *deals, int64_t n_deals, double *regret, double *avg, int64_t first,
                 int64_t iterations, uint64_t seed, int threads, volatile int64_t *done)
{
    if (!deals || n_deals < 1)
        return MC_ERR_ARGUMENT;
    return run_jobs(g, regret, avg, first, iterations, seed, threads, done, deals, n_deals);
}
