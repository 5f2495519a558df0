/* Native hand-evaluation kernels for hold'em: plain C11, no Python.h.
 *
 * Cards are ints 0..51 = rank*4 + suit (rank 0 = deuce .. 12 = ace; suits c, d, h, s).
 * A hand value is the dense equivalence-class rank 1..7462 of the best five cards
 * (1 = 7-5-4-3-2 of mixed suits, 7462 = royal flush); equal exactly when tied.
 *
 * How it is fast without a big table: every card adds a 64-bit key whose low 32 bits
 * are 5^rank (so the sum names the rank multiset exactly) and whose bits 32..47 hold
 * four 4-bit suit counters (started at 3, so bit 3 of a counter lights up at five cards
 * of that suit). A second 64-bit word ORs 1 << (16*suit + rank). Evaluating 5..7 cards
 * is then a few adds, one flush test and one lookup: the 8192-entry flush table by the
 * suit's rank mask, or a perfect hash (hash-and-displace, about 320 KB) of the rank sum.
 *
 * Call ek_init() once before anything else (not thread-safe; everything after it is
 * read-only and safe to call from several threads).
 *
 * Example (C):
 *     uint8_t hand[7] = {48, 49, 50, 51, 44, 0, 1};   // AAAA K 2 2
 *     ek_init();
 *     ek_evaluate(hand, 7);                           // 7452 (four aces, king kicker)
 */
#ifndef EVAL_KERNELS_H
#define EVAL_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#define EK_N_CARDS 52
#define EK_N_COMBOS 1326
#define EK_N_VALUES 7462
#define EK_N_CATEGORIES 9

/* Status codes returned by the kernels (0 = success). */
enum ek_status {
    EK_OK = 0,
    EK_ERR_NOMEM = -1,     /* a malloc failed */
    EK_ERR_RANGE = -2,     /* a card outside 0..51 */
    EK_ERR_DUPLICATE = -3, /* a card given twice */
    EK_ERR_NO_WEIGHT = -4, /* weights leave no usable opponent holding */
    EK_ERR_ARGUMENT = -5,  /* a size or count out of range */
    EK_ERR_INTERNAL = -6   /* table construction failed (a bug) */
};

/* Categories, worst first (index into the names used by the Python side). */
enum ek_category {
    EK_HIGH_CARD, EK_ONE_PAIR, EK_TWO_PAIR, EK_TRIPS, EK_STRAIGHT,
    EK_FLUSH, EK_FULL_HOUSE, EK_QUADS, EK_STRAIGHT_FLUSH
};

/* Set up the small tables (card keys, categories; idempotent, microseconds: the big ones are
 * compiled in, see eval_tables.h). Returns EK_OK or a negative status. */
int ek_init(void);

/* 1 when the compiled-in tables equal freshly built ones (ek_build_tables, ~10 ms), 0 when
 * not, or a negative status. For tests. */
int ek_tables_agree(void);

/* Value 1..7462 of 5, 6 or 7 distinct valid cards (no checks: validate first). */
uint16_t ek_evaluate(const uint8_t *cards, int n_cards);

/* Category 0..8 of a value 1..7462, or -1 when out of range. */
int ek_category(int value);

/* Values of rows x cols cards (cols 5..7, row-major). Checks range and duplicates per row;
 * on error returns EK_ERR_RANGE / EK_ERR_DUPLICATE and sets *bad_row. */
int ek_evaluate_batch(const uint8_t *cards, size_t rows, int cols, int32_t *out, size_t *bad_row);

/* Count every hand of n_cards (5..7) cards by value: hist[1..7462] (hist[0] unused). */
int ek_value_histogram(int n_cards, uint64_t hist[EK_N_VALUES + 1]);
/* The same count in parts (7 cards: one per lowest card), so a caller can stop between
 * them: ek_value_histogram_part adds part `part` (0 <= part < ek_value_histogram_parts)
 * to hist, which the caller zeroes first. */
int ek_value_histogram_parts(int n_cards);
int ek_value_histogram_part(int n_cards, int part, uint64_t hist[EK_N_VALUES + 1]);

/* Counts (or weight sums) of opponent holdings we are ahead of / tied with / behind,
 * for hole[2] and a board of n_board cards (3..5). weights: NULL or 1326 values indexed
 * by colex combo index (hi*(hi-1)/2 + lo); clashing combos are ignored. */
int ek_hand_strength_counts(const uint8_t hole[2], const uint8_t *board, int n_board,
                            const double *weights, double out[3]);

/* Poki's 3x3 potential table, row-major: rows ahead/tied/behind now, columns
 * ahead/tied/behind after the whole board; exact over all runouts (n_board 3..5).
 * Same as ek_potential_tables with one hole (about 0.3 ms on a flop, 30 us on a turn). */
int ek_potential_table(const uint8_t hole[2], const uint8_t *board, int n_board,
                       const double *weights, double table[9]);

/* ek_potential_table for n_holes holes (holes[2*p], holes[2*p+1]) on one board at once:
 * the runouts and opponents' values are enumerated once for all of them (holes may
 * share cards with each other, not with the board). tables: n_holes x 9, row-major. */
int ek_potential_tables(const uint8_t *holes, int n_holes, const uint8_t *board, int n_board,
                        const double *weights, double *tables);

/* The unweighted potential table (as ek_potential_tables) of every holding disjoint from
 * a flop or turn (n_board 3 or 4), computed jointly: per runout every holding is valued
 * once and the opponents are counted by dominance (see eval_kernels.c). Fills holes
 * (2 cards per holding, low card first, holdings in increasing order of (low, high)) and
 * tables (9 per holding, row-major); room for EK_N_COMBOS holdings. Returns the number
 * of holdings (1176 on a flop, 1128 on a turn) or a negative status. About 40 ms on a
 * flop, 3 ms on a turn: 20-40x the holdings one at a time or ek_potential_tables. */
int ek_board_potential_tables(const uint8_t *board, int n_board, uint8_t *holes, double *tables);

/* E[HS^2] over the runouts of the board (n_board 3..5), HS vs one random holding. */
int ek_hand_strength_squared(const uint8_t hole[2], const uint8_t *board, int n_board, double *out);

/* Number of deals (runout x unordered set of opponent holdings) an exact showdown
 * enumeration visits (as a double: it exceeds 2^64 pre-flop against many opponents). */
double ek_showdown_deals(int n_board, int n_opponents);

/* Caps the glue enforces (and documents): an exact showdown visits at most
 * EK_EXACT_MAX_DEALS deals (the heads-up flop has 1,070,190; two opponents on the turn
 * 20,497,770), a Monte Carlo run deals at most EK_MAX_TRIALS trials (standard error
 * 1.6e-5 at the cap; more buys nothing a strategy can use and costs minutes). */
#define EK_EXACT_MAX_DEALS 50000000.0
#define EK_MAX_TRIALS UINT64_C(1000000000)

/* Exact showdown counts (win, tie, lose) against n_opponents (1..9) random holdings,
 * n_board 0..5. Win = beats every opponent; tie = best hand shared, beaten by none.
 * Refuses (EK_ERR_ARGUMENT) more than EK_EXACT_MAX_DEALS deals. */
int ek_showdown_exact(const uint8_t hole[2], const uint8_t *board, int n_board, int n_opponents,
                      uint64_t out[3]);

/* The same enumeration in parts, so a caller can stop between them: part p (0 <= p <
 * ek_showdown_exact_parts(n_board)) covers the runouts whose first card to come is the
 * p-th unseen card (the one runout when the board is complete). Adds to out[3]; the sum
 * over all parts equals ek_showdown_exact. No deal cap here (the caller applies it). */
int ek_showdown_exact_parts(int n_board);
int ek_showdown_exact_part(const uint8_t hole[2], const uint8_t *board, int n_board, int n_opponents,
                           int part, uint64_t out[3]);

/* Monte Carlo showdown counts over `trials` deals, deterministic for `seed`
 * (xoshiro256** seeded by splitmix64; no global state). */
int ek_showdown_monte_carlo(const uint8_t hole[2], const uint8_t *board, int n_board,
                            int n_opponents, uint64_t trials, uint64_t seed, uint64_t out[3]);

/* The same run in steps (results bit-identical to one call for any step sizes): start,
 * then ek_mc_step until `done == trials`. The state holds the generator and the deal of
 * the next trial, so stepping splits the loop, never the random stream. */
typedef struct {
    uint64_t rng[4];
    uint64_t dead, board_key, board_bits, hole_key, hole_bits;
    uint64_t trials, done, count[3];
    int to_come, need, n_opponents;
    uint8_t dealt[5 + 2 * 9 + 2];
} ek_mc_state;

int ek_mc_start(ek_mc_state *st, const uint8_t hole[2], const uint8_t *board, int n_board,
                int n_opponents, uint64_t trials, uint64_t seed);
/* Run up to max_trials more trials (fewer when the run ends first). */
void ek_mc_step(ek_mc_state *st, uint64_t max_trials);

#endif /* EVAL_KERNELS_H */
