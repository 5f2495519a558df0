/* Native kernels for card abstractions (issue 10): hand-strength metrics of every holding
 * on a board at once. Plain C11, no Python.h; builds on eval_kernels (call ek_init() first).
 *
 * HS is the chance to beat one random holding once the whole board is out (win plus half
 * a tie), HS2 the study's "hand strength squared": the square of the HS a holding reaches on the
 * next street, averaged over that street's cards; both are exact. Holdings are indexed 0..1325 in colex order (hi*(hi-1)/2 + lo, hi > lo);
 * a holding that clashes with the board gets -1.
 *
 * The trick that makes it fast: on a complete board every holding of the 47 unseen cards
 * is valued once (1081 evaluations), sorted by value, and each holding's count of beaten
 * and tied opponents is read off a sweep with per-card counters (card removal: opponents
 * sharing one of our cards are subtracted), so the river HS of all 1081 holdings costs
 * about as much as one holding's HS by the plain enumeration.
 *
 * Example (C):
 *     uint8_t board[3] = {0, 5, 10};
 *     double hs[1326], hs2[1326];
 *     ek_init();
 *     ak_board_metrics(board, 3, hs, hs2);   // hs[1325] = A-A's equity on that flop
 */
#ifndef ABSTRACTION_KERNELS_H
#define ABSTRACTION_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* River HS of every holding on a complete board (5 distinct cards): hs[1326] (-1 when
 * clashing) and values[1326] (hand values 1..7462, 0 when clashing; values may be NULL). */
int ak_river_all(const uint8_t board[5], double *hs, int32_t *values);

/* For every holding on a board of 3..5 cards: hs = E[HS] over every runout, and hs2 = the
 * study's HS^2, the mean over the next street's cards of the next street's HS squared
 * (flop: mean over turn cards of (turn E[HS])^2; turn: mean over rivers of river HS^2, the
 * evaluator's hand_strength_squared; river: HS^2). -1 for holdings clashing with the board. */
int ak_board_metrics(const uint8_t *board, int n_board, double *hs, double *hs2);

/* For each of n complete boards (rows of 5 distinct cards) add every non-clashing
 * holding's river HS to sum_hs, its square to sum_hs2 and 1 to count (all 1326 long). */
int ak_river_accumulate(const uint8_t *boards, size_t n, double *sum_hs, double *sum_hs2, double *count);

#endif /* ABSTRACTION_KERNELS_H */
