/* Imperfect-recall card abstraction and external-sampling Monte Carlo CFR for heads-up
 * fixed-limit hold'em on real cards: plain C11, no Python.h. The caller is
 * cbr/abstraction/distribution.py (the bucket tables) and cbr/cfr/mccfr.py (the solver).
 *
 * Hand strength here is river HS: the chance to beat one random opponent holding once
 * all five board cards are out, ties counted half, card removal exact. A flop or turn
 * holding is described by the histogram of its river HS over every runout (the
 * "hand-strength distribution" of Johanson et al. 2013); distributions are compared by
 * the earth mover's distance, which in one dimension is the L1 distance between their
 * cumulative histograms, so clustering works on cumulative histograms with L1.
 *
 * Combos are colex indices hi*(hi-1)/2 + lo of two cards 0..51 (1326 of them). Call
 * mc_init() once first (it builds the evaluator's tables).
 */
#ifndef MCCFR_KERNELS_H
#define MCCFR_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#define MC_N_COMBOS 1326
#define MC_NO_BUCKET 0xFFFFu

enum { MC_OK = 0, MC_ERR_NOMEM = -1, MC_ERR_ARGUMENT = -2 };

int mc_init(void);

/* River HS of every holding on a complete board (5 distinct valid cards): hs[combo] in
 * [0, 1], or -1 for a holding that shares a card with the board. */
int mc_river_hs_all(const uint8_t board[5], double hs[MC_N_COMBOS]);

/* The holdings a complete board leaves (n of them, returned; MC_ERR_ARGUMENT for a bad
 * board), sorted by 7-card hand value: keys[i] = value << 11 | j ascending, where combos[j]
 * is the j-th of them in combo order. */
int mc_sorted_holdings(const uint8_t board[5], uint32_t keys[1081], int16_t combos[1081]);

/* Opponent-cluster hand strength (OCHS, Johanson et al. 2013): the river HS of a holding
 * against each of k clusters of opponent holdings (cluster[combo] in 0..k-1, k <= MC_MAX_CLUSTERS),
 * ties half, card removal exact. A cluster the cards leave empty takes the plain river HS.
 * mc_river_ochs_all: every holding of a complete board, out[combo * k + j] (-1 for holdings
 * that share a card with the board), from the same sort and sweep as mc_river_hs_all;
 * mc_river_ochs_one: one holding, by enumerating its 990 opponents (the same numbers). */
#define MC_MAX_CLUSTERS 64
int mc_river_ochs_all(const uint8_t board[5], const uint8_t cluster[MC_N_COMBOS], int k, double *out);
int mc_river_ochs_one(const uint8_t hole[2], const uint8_t board[5], const uint8_t cluster[MC_N_COMBOS], int k,
                      double *out);

/* The nearest of n centroids (rows of k doubles) to x by squared L2 distance; the lowest
 * index on a tie. */
int32_t mc_nearest_l2(const double *x, const double *centroids, int n, int k);

/* The OCHS river bucket of every holding on a complete board: its OCHS vector's nearest
 * centroid (n x k); MC_NO_BUCKET for holdings sharing a card with the board. */
int mc_river_ochs_buckets(const uint8_t board[5], const uint8_t cluster[MC_N_COMBOS], int k, const double *centroids,
                          int n, uint16_t out[MC_N_COMBOS]);

/* Histogram of river HS (n_bins equal bins on [0, 1]) over every runout of a flop (3
 * cards) or turn (4 cards) board, for every holding: hist[combo * n_bins + bin] counts
 * runouts (zero rows for holdings that share a card with the board). */
int mc_board_histograms(const uint8_t *board, int n_board, int n_bins, uint16_t *hist);

/* Nearest centroid by L1 distance, for n points of d floats (cumulative histograms) and
 * k centroids of d floats: out[i] in 0..k-1; dist (may be NULL) gets the distance. */
void mc_assign_l1(const float *points, int64_t n, const float *centroids, int k, int d, int32_t *out,
                  float *dist);

/* The buckets of every holding on a flop/turn board: its histogram, made cumulative and
 * normalised, assigned to the nearest of k centroids (k x n_bins cumulative histograms).
 * out[combo] = bucket, MC_NO_BUCKET for holdings sharing a card with the board. */
int mc_board_buckets(const uint8_t *board, int n_board, int n_bins, const float *centroids, int k,
                     uint16_t out[MC_N_COMBOS]);

/* The game external-sampling MCCFR trains on (see mccfr_kernels.c). */
enum { MC_DECISION = 0, MC_FOLD = 1, MC_SHOWDOWN = 2, MC_CHANCE = 3 };

typedef struct {
    /* betting tree (cbr/cfr/tree.py), node 0 the root */
    int32_t n_nodes;
    const int8_t *kind, *player, *street;
    const int32_t *child_start, *n_children, *child_index;
    const double *stake;   /* fold: chips the folder loses; showdown: each player's stake */
    const int64_t *offset; /* decision node: its first entry; rows = n_buckets[street] */
    int64_t table_len;
    /* card abstraction */
    int32_t n_buckets[4];
    const uint8_t *preflop;       /* 1326: pre-flop class of each combo */
    const uint16_t *flop;         /* 22100 x 1326: bucket by (colex flop, combo) */
    const uint16_t *turn;         /* 270725 x 1326: bucket by (colex turn board, combo) */
    const double *river_edges;    /* n_buckets[3] - 1 ascending HS edges (percentile river) */
    const uint8_t *river_cluster; /* NULL, or an OCHS river: 1326 opponent clusters ... */
    int32_t ochs_k;               /* ... of ochs_k clusters ... */
    const double *river_centroids;/* ... and n_buckets[3] x ochs_k centroids (mc_river_ochs_buckets) */
} mc_game;

/* Colex index of 3 or 4 distinct cards (any order). */
int64_t mc_board_index(const uint8_t *cards, int n);

/* The street buckets of a holding on the board of a deal (board[5]; all streets). */
void mc_deal_buckets(const mc_game *g, const uint8_t hole[2], const uint8_t board[5], int32_t out[4]);

/* Run iterations number first .. first + iterations - 1 (each: a deal from its own random
 * stream, seeded by (seed, number), then one traversal for each player) on `threads`
 * threads (1 = deterministic, however a run is cut into calls; more share the tables
 * without locks, as parallel MCCFR commonly does). *done counts finished iterations. */
int mc_run(const mc_game *g, double *regret, double *avg, int64_t first, int64_t iterations, uint64_t seed,
           int threads, volatile int64_t *done);

/* A deal of a small game: player 0's buckets on streets 0..3, player 1's, then the
 * showdown's winner (0, 1, or -1 for a tie). */
#define MC_DEAL_INTS 9

/* mc_run on a small game: each iteration draws one of the n_deals equally likely deals
 * (rows of MC_DEAL_INTS, buckets within g->n_buckets) instead of dealing cards; g's card
 * tables are not read. */
int mc_run_deals(const mc_game *g, const int32_t *deals, int64_t n_deals, double *regret, double *avg, int64_t first,
                 int64_t iterations, uint64_t seed, int threads, volatile int64_t *done);

#endif
