/* Vector-form CFR+ over a bucket game (the abstract game of cbr.abstraction.game): plain C,
 * no Python.h. See cfr_kernels.c for the algorithm and cbr/cfr/solver.py for the caller. */
#ifndef CFR_KERNELS_H
#define CFR_KERNELS_H

#include <stddef.h>
#include <stdint.h>

enum { CFR_DECISION = 0, CFR_FOLD = 1, CFR_SHOWDOWN = 2, CFR_CHANCE = 3 };
enum { CFR_OK = 0, CFR_ERR_NOMEM = 1, CFR_ERR_TREE = 2 };

typedef struct {
    /* betting tree, n_nodes nodes; node 0 is the root; children come after their parent */
    int32_t n_nodes;
    const int8_t *kind, *player, *street;
    const int32_t *child_start, *n_children, *child_index;
    const double *stake;   /* fold: chips the folder loses; showdown: each player's stake */
    const int64_t *offset; /* decision node: first entry of its (sequences x actions) table */
    /* bucket game */
    int32_t nb;            /* buckets per street */
    int32_t nc;            /* showdown classes */
    int64_t seqs[4];       /* nb**(s+1) */
    const double *prior;   /* (nb) */
    const double *trans[3];/* trans[s]: (seqs[s], nb): next bucket given the sequence */
    const double *cls[4];  /* cls[s]: (seqs[s], nc): class distribution of a street-s sequence */
    const double *equity;  /* (nc, nc) */
} cfr_game;

/* Doubles of workspace the walks need (the deepest path's buffers). */
int64_t cfr_workspace_size(const cfr_game *g);

/* One CFR+ iteration (both players, alternating), number t >= 1 (linear averaging weight t).
 * regret and avg have one double per (decision node, own sequence, action). */
int cfr_iterate(const cfr_game *g, double *regret, double *avg, int64_t t, double *ws);

/* Value of `player` at the root (chips per game, expectation over the deal) when it plays a
 * best response (best_response != 0) or its own average strategy, against the opponent's
 * average strategy. avg holds unnormalised averages (a row of zeros means uniform). */
int cfr_value(const cfr_game *g, const double *avg, int player, int best_response, double *ws, double *value);

#endif
