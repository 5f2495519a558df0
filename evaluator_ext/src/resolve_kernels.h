/* Re-solving the river at decision time: terminal values by a sweep, best responses and
 * CFR+ with a safe re-solving gadget, over every holding of one river board at once.
 * Plain C11, no Python.h; builds on eval_kernels (call ek_init() first).
 *
 * Holdings are indexed 0..1325 in colex order (hi*(hi-1)/2 + lo, hi > lo). A reach vector
 * is 1326 non-negative doubles; holdings that share a card with the board count as 0.
 *
 * Terminal values, O(n) after one sort of the board's 1,081 holdings by 7-card value (the
 * sweeps of sweep_kernels.h, shared with pcs_kernels.c): for
 * each holding h of one player and the other player's reach q,
 *   fold[h]     = the reach of the opponent holdings that share no card with h
 *                 (total - reach holding h's first card - reach holding its second + q[h]);
 *   showdown[h] = (reach h beats) - (reach that beats h), over those same holdings; ties 0.
 * A terminal pays stake * fold[h] (the folder loses its stake) or stake * showdown[h].
 *
 * The river subgame is a betting tree given as flat arrays (node 0 the root, children after
 * their parent): kind RV_DECISION / RV_FOLD / RV_SHOWDOWN, player (who acts, or who
 * folded), child_start / n_children / child_index, stake (at a fold the folder's whole
 * contribution, at a showdown each player's). A strategy or average table holds, for each
 * decision node in node order, 1326 rows of n_children doubles (RV_OFFSET layout).
 *
 * Re-solving (rv_resolve): CFR+ (regret matching+, alternating updates, linear averaging)
 * vectorised over holdings, for a fixed number of iterations or until a time budget ends.
 * Player `us` is re-solved; the opponent enters the subgame through a gadget:
 *   RV_GADGET_NONE   the opponent's root reach is the given range (unsafe re-solving);
 *   RV_GADGET_CFRD   Burch, Johanson & Bowling 2014: per holding j the opponent chooses to
 *                    take opp_values[j] (terminate) or to enter (follow);
 *   RV_GADGET_MARGIN Moravcik et al. 2016: the opponent picks the holding j to enter with,
 *                    and is paid its subgame value minus opp_values[j] (max-margin).
 * A mixed gadget (mix > 0, RV_GADGET_MARGIN only): with chance mix the opponent is dealt its
 * range reach_opp as in RV_GADGET_NONE, else it picks its holding as in max-margin (mix 0:
 * max-margin; mix 1: unsafe). Safety is then only partial: the max-margin branch bounds what
 * an opponent holding gains, weighted by (1 - mix).
 * With opp_values the opponent's best-response counterfactual values against our blueprint
 * (rv_best_response), the blueprint is feasible in both gadgets and the re-solved strategy
 * gives no opponent holding more than its value, up to the solver's remaining regret.
 */
#ifndef RESOLVE_KERNELS_H
#define RESOLVE_KERNELS_H

#include <stdint.h>

#define RV_N_COMBOS 1326
#define RV_MAX_HOLDINGS 1081 /* C(47, 2): the holdings a river board leaves */
#define RV_MAX_NODES 256
#define RV_MAX_ACTIONS 4

enum { RV_DECISION = 0, RV_FOLD = 1, RV_SHOWDOWN = 2 };
enum { RV_GADGET_NONE = 0, RV_GADGET_CFRD = 1, RV_GADGET_MARGIN = 2 };
enum { RV_OK = 0, RV_ERR_NOMEM = -1, RV_ERR_ARGUMENT = -2 };

typedef struct {
    int n_nodes;
    const int8_t *kind;
    const int8_t *player;
    const int32_t *child_start;
    const int32_t *n_children;
    const int32_t *child_index;
    const double *stake;
} rv_tree;

/* A board's holdings sorted by 7-card value (ascending), with their groups of equal value
 * (group g: group_start[g] .. group_start[g + 1] - 1). */
typedef struct {
    int n, n_groups;
    uint64_t cards; /* the board's cards as a bit set (the key of a cached sort) */
    int16_t combo[RV_MAX_HOLDINGS];
    uint8_t lo[RV_MAX_HOLDINGS], hi[RV_MAX_HOLDINGS];
    int16_t group_start[RV_MAX_HOLDINGS + 1];
    int16_t pos[RV_N_COMBOS]; /* sorted index of each combo; -1 when it clashes */
} rv_board;

/* Sort the holdings of a complete board of 5 distinct cards 0..51 (RV_ERR_ARGUMENT otherwise). */
int rv_board_init(rv_board *b, const uint8_t board[5]);

/* fold[h] and showdown[h] for every holding (combo order, 1326 each; 0 where h clashes with
 * the board) against the reach `reach` (combo order). Returns RV_OK or RV_ERR_ARGUMENT. */
int river_terminal_values(const uint8_t board[5], const double *reach, double *fold, double *showdown);

/* Checks a subgame tree (kinds, players 0/1, children after their parent, at most
 * RV_MAX_ACTIONS, non-negative stakes); RV_OK or RV_ERR_ARGUMENT. table_size: the entries of
 * a strategy table (sum over decision nodes of 1326 * n_children). */
int rv_tree_check(const rv_tree *t, int64_t *table_size);

/* Counterfactual best-response values of player br_player's holdings (values, 1326, combo
 * order) when the other player plays `strategy` (RV layout; rows of the br player's nodes
 * are ignored) with root reach `reach` (1326). */
int rv_best_response(const rv_tree *t, const uint8_t board[5], int br_player, const double *strategy,
                     const double *reach, double *values);

/* Counterfactual values of both players' holdings when both play `strategy` from root
 * reaches reach0, reach1 (values0 for player 0's holdings, values1 for player 1's). */
int rv_profile_values(const rv_tree *t, const uint8_t board[5], const double *strategy, const double *reach0,
                      const double *reach1, double *values0, double *values1);

/* CFR+ on the gadget game (see above). reach_us: our root reach (1326); reach_opp: the
 * opponent's root reach (RV_GADGET_NONE, or a mix > 0; else ignored: may be NULL); opp_values:
 * the opponent's values (gadgets only, else may be NULL); mix: 0..1, > 0 with RV_GADGET_MARGIN
 * only. Runs `iterations` iterations, or fewer
 * when budget_seconds > 0 and the time is up (at least one). avg: the average strategies of
 * both players (RV layout, sums: a row is the weighted sum of the strategies played, each
 * weighted by the iteration and the player's own reach inside the subgame); regret: the
 * final regrets (RV layout). *done: iterations run; *bound: 2 (Q_us + Q_opp) / (T + 1),
 * Q_p the sum over p's information sets (and the opponent's gadget) of the largest regret:
 * the linearly averaged profile's exploitability in the gadget game is at most this. */
int rv_resolve(const rv_tree *t, const uint8_t board[5], int us, const double *reach_us, const double *reach_opp,
               const double *opp_values, int gadget, double mix, int iterations, double budget_seconds,
               double *avg, double *regret, int *done, double *bound);

/* A strategy (RV layout) from the sums of a solve: a row with a positive sum of avg is avg
 * over its sum; else the regrets' row over its sum; else the fallback's; else uniform. */
int rv_normalise(const rv_tree *t, const double *avg, const double *regret, const double *fallback, double *out);

#endif /* RESOLVE_KERNELS_H */
