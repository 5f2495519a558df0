/* Native hand-evaluation kernels (plain C11, no Python.h). See eval_kernels.h. */
#include "eval_kernels.h"
#include "eval_tables.h"

#include <stdlib.h>
#include <string.h>

#include "xoshiro.h"

/* ------------------------------------------------------------------------- */
/* Tables                                                                      */
/* ------------------------------------------------------------------------- */

/* Suit counters start at 3: bit 3 of a nibble is set once five cards share the suit. */
#define KEY_START (UINT64_C(0x3333) << 32)
#define FLUSH_BITS UINT64_C(0x8888)

#define POW5 EK_POW5

static uint64_t g_card_key[EK_N_CARDS];  /* 5^rank + suit counter increment */
static uint64_t g_card_bit[EK_N_CARDS];  /* 1 << (16*suit + rank) */
/* g_mult, g_disp, g_rank_value and g_flush_value: built by ek_build_tables() when the
 * extension was built (gen_eval_tables.c via setup.py), compiled in as constants. */
#include "eval_tables_data.h"
static uint8_t g_category[EK_N_VALUES + 1];
static int g_ready;

/* Batch tables by byte value: a card beyond 51 adds BAD_CARD_BIT (unused by real cards).
 * A row is valid exactly when the plain sum of its bits equals their OR (no card twice)
 * and BAD_CARD_BIT is clear. */
#define BAD_CARD_BIT (UINT64_C(1) << 63)
static uint64_t g_batch_key[256], g_batch_bit[256];

/* Category boundaries: number of classes per category, worst first. */
static const int CATEGORY_SIZE[EK_N_CATEGORIES] = {1277, 2860, 858, 858, 10, 1277, 156, 156, 10};

static inline uint16_t rank_lookup(uint32_t rank_sum)
{
    uint64_t h = (uint64_t)rank_sum * g_mult;
    uint32_t bucket = (uint32_t)(h >> (64 - HASH_BUCKET_BITS));
    uint32_t slot = ((uint32_t)(h >> 32) + g_disp[bucket]) & (HASH_SLOTS - 1);
    return g_rank_value[slot];
}

/* Value of a hand given its summed key (started at KEY_START) and OR-ed suit bits. */
static inline uint16_t value_of(uint64_t key, uint64_t bits)
{
    uint64_t flush = (key >> 32) & FLUSH_BITS;
    if (flush) {
        unsigned suit = (unsigned)__builtin_ctzll(flush) >> 2;
        return g_flush_value[(bits >> (16 * suit)) & 0x1FFF];
    }
    return rank_lookup((uint32_t)key);
}

int ek_init(void)
{
    if (g_ready)
        return EK_OK;
    for (int c = 0; c < EK_N_CARDS; c++) {
        int rank = c >> 2, suit = c & 3;
        g_card_key[c] = (uint64_t)POW5[rank] + (UINT64_C(1) << (32 + 4 * suit));
        g_card_bit[c] = UINT64_C(1) << (16 * suit + rank);
    }
    for (int c = 0; c < 256; c++) {
        g_batch_key[c] = c < EK_N_CARDS ? g_card_key[c] : 0;
        g_batch_bit[c] = c < EK_N_CARDS ? g_card_bit[c] : BAD_CARD_BIT;
    }
    int value = 1;
    for (int cat = 0; cat < EK_N_CATEGORIES; cat++)
        for (int i = 0; i < CATEGORY_SIZE[cat]; i++)
            g_category[value++] = (uint8_t)cat;
    g_category[0] = 0;
    g_ready = 1;
    return EK_OK;
}

int ek_tables_agree(void)
{
    ek_tables *t = malloc(sizeof *t);
    if (!t)
        return EK_ERR_NOMEM;
    int status = ek_build_tables(t);
    if (status == EK_OK)
        status = t->mult == g_mult && !memcmp(t->disp, g_disp, sizeof g_disp)
                 && !memcmp(t->rank_value, g_rank_value, sizeof g_rank_value)
                 && !memcmp(t->flush_value, g_flush_value, sizeof g_flush_value);
    free(t);
    return status;
}

/* ------------------------------------------------------------------------- */
/* Single hands and batches                                                    */
/* ------------------------------------------------------------------------- */

uint16_t ek_evaluate(const uint8_t *cards, int n_cards)
{
    uint64_t key = KEY_START, bits = 0;
    for (int i = 0; i < n_cards; i++) {
        key += g_card_key[cards[i]];
        bits |= g_card_bit[cards[i]];
    }
    return value_of(key, bits);
}

int ek_category(int value)
{
    if (value < 1 || value > EK_N_VALUES)
        return -1;
    return g_category[value];
}

static int batch_row_error(const uint8_t *row, int cols)
{
    for (int i = 0; i < cols; i++)
        if (row[i] >= EK_N_CARDS)
            return EK_ERR_RANGE;
    return EK_ERR_DUPLICATE;
}

#define BATCH_LOOP(COLS)                                                             \
    for (size_t r = 0; r < rows; r++) {                                              \
        const uint8_t *row = cards + r * (COLS);                                     \
        uint64_t key = KEY_START, bits = 0, sum = 0;                                 \
        for (int i = 0; i < (COLS); i++) {                                           \
            key += g_batch_key[row[i]];                                              \
            bits |= g_batch_bit[row[i]];                                             \
            sum += g_batch_bit[row[i]];                                              \
        }                                                                            \
        if (__builtin_expect(((sum ^ bits) | (bits & BAD_CARD_BIT)) != 0, 0)) {      \
            *bad_row = r;                                                            \
            return batch_row_error(row, (COLS));                                     \
        }                                                                            \
        out[r] = value_of(key, bits);                                                \
    }

int ek_evaluate_batch(const uint8_t *cards, size_t rows, int cols, int32_t *out, size_t *bad_row)
{
    switch (cols) {
    case 5:
        BATCH_LOOP(5)
        break;
    case 6:
        BATCH_LOOP(6)
        break;
    case 7:
        BATCH_LOOP(7)
        break;
    default:
        return EK_ERR_ARGUMENT;
    }
    return EK_OK;
}

int ek_value_histogram_parts(int n_cards)
{
    return n_cards == 7 ? EK_N_CARDS - 5 : n_cards == 5 || n_cards == 6 ? 1 : 0;
}

/* Add the hands of one part (7 cards: those whose lowest card is `part`) to hist. */
int ek_value_histogram_part(int n_cards, int part, uint64_t hist[EK_N_VALUES + 1])
{
    if (n_cards < 5 || n_cards > 7 || part < 0 || part >= ek_value_histogram_parts(n_cards))
        return EK_ERR_ARGUMENT;
    /* 32-bit counters are enough (C(52,7) < 2^32) and halve the cache footprint. */
    uint32_t *h = calloc(EK_N_VALUES + 1, sizeof *h);
    if (!h)
        return EK_ERR_NOMEM;
    const int last = EK_N_CARDS - 1;
    /* The first n_cards - 5 cards are free; the five innermost loops are always nested. */
    int lo_a = n_cards >= 7 ? part : 0, hi_a = lo_a;
    for (int a = lo_a; a <= hi_a; a++) {
        uint64_t ka = KEY_START + (n_cards >= 7 ? g_card_key[a] : 0);
        uint64_t ba = n_cards >= 7 ? g_card_bit[a] : 0;
        int lo_b = n_cards >= 7 ? a + 1 : 0, hi_b = n_cards >= 6 ? EK_N_CARDS - 5 : 0;
        for (int b = lo_b; b <= hi_b; b++) {
            uint64_t kb = ka + (n_cards >= 6 ? g_card_key[b] : 0);
            uint64_t bb = ba | (n_cards >= 6 ? g_card_bit[b] : 0);
            int lo_c = n_cards >= 6 ? b + 1 : 0;
            for (int c = lo_c; c <= last - 4; c++) {
                uint64_t kc = kb + g_card_key[c], bc = bb | g_card_bit[c];
                for (int d = c + 1; d <= last - 3; d++) {
                    uint64_t kd = kc + g_card_key[d], bd = bc | g_card_bit[d];
                    for (int e = d + 1; e <= last - 2; e++) {
                        uint64_t ke = kd + g_card_key[e], be = bd | g_card_bit[e];
                        for (int f = e + 1; f <= last - 1; f++) {
                            uint64_t kf = ke + g_card_key[f], bf = be | g_card_bit[f];
                            for (int g = f + 1; g <= last; g++)
                                h[value_of(kf + g_card_key[g], bf | g_card_bit[g])]++;
                        }
                    }
                }
            }
        }
    }
    for (int v = 0; v <= EK_N_VALUES; v++)
        hist[v] += h[v];
    free(h);
    return EK_OK;
}

int ek_value_histogram(int n_cards, uint64_t hist[EK_N_VALUES + 1])
{
    if (n_cards < 5 || n_cards > 7)
        return EK_ERR_ARGUMENT;
    memset(hist, 0, (EK_N_VALUES + 1) * sizeof *hist);
    int parts = ek_value_histogram_parts(n_cards);
    for (int part = 0; part < parts; part++) {
        int status = ek_value_histogram_part(n_cards, part, hist);
        if (status)
            return status;
    }
    return EK_OK;
}

/* ------------------------------------------------------------------------- */
/* Enumeration against opponent holdings                                       */
/* ------------------------------------------------------------------------- */

typedef struct {
    uint64_t board_key, board_bits, hole_key, hole_bits, dead;
    uint8_t unseen[EK_N_CARDS];
    int n_unseen;
} situation;

static int make_situation(situation *s, const uint8_t hole[2], const uint8_t *board, int n_board)
{
    if (n_board < 0 || n_board > 5)
        return EK_ERR_ARGUMENT;
    s->board_key = KEY_START;
    s->board_bits = 0;
    s->dead = 0;
    for (int i = 0; i < 2 + n_board; i++) {
        unsigned c = i < 2 ? hole[i] : board[i - 2];
        if (c >= EK_N_CARDS)
            return EK_ERR_RANGE;
        if (s->dead & (UINT64_C(1) << c))
            return EK_ERR_DUPLICATE;
        s->dead |= UINT64_C(1) << c;
        if (i >= 2) {
            s->board_key += g_card_key[c];
            s->board_bits |= g_card_bit[c];
        }
    }
    s->hole_key = g_card_key[hole[0]] + g_card_key[hole[1]];
    s->hole_bits = g_card_bit[hole[0]] | g_card_bit[hole[1]];
    s->n_unseen = 0;
    for (int c = 0; c < EK_N_CARDS; c++)
        if (!(s->dead & (UINT64_C(1) << c)))
            s->unseen[s->n_unseen++] = (uint8_t)c;
    return EK_OK;
}

static inline int combo_index(int a, int b)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;
    return hi * (hi - 1) / 2 + lo;
}

/* Opponent holdings from the unseen cards with positive weight. */
typedef struct {
    uint64_t key[EK_N_COMBOS], bits[EK_N_COMBOS], mask[EK_N_COMBOS];
    double weight[EK_N_COMBOS];
    int n;
} holdings;

static int collect_holdings(holdings *h, const situation *s, const double *weights)
{
    h->n = 0;
    for (int i = 0; i < s->n_unseen; i++)
        for (int j = i + 1; j < s->n_unseen; j++) {
            int a = s->unseen[i], b = s->unseen[j];
            double w = weights ? weights[combo_index(a, b)] : 1.0;
            if (!(w > 0.0))
                continue;
            h->key[h->n] = g_card_key[a] + g_card_key[b];
            h->bits[h->n] = g_card_bit[a] | g_card_bit[b];
            h->mask[h->n] = (UINT64_C(1) << a) | (UINT64_C(1) << b);
            h->weight[h->n] = w;
            h->n++;
        }
    return h->n ? EK_OK : EK_ERR_NO_WEIGHT;
}

/* 0 = we are ahead, 1 = tied, 2 = behind. */
static inline unsigned compare(uint16_t ours, uint16_t theirs)
{
    return (unsigned)(theirs >= ours) + (unsigned)(theirs > ours);
}

int ek_hand_strength_counts(const uint8_t hole[2], const uint8_t *board, int n_board,
                            const double *weights, double out[3])
{
    situation s;
    int status = make_situation(&s, hole, board, n_board);
    if (status)
        return status;
    if (n_board < 3)
        return EK_ERR_ARGUMENT;
    uint16_t ours = value_of(s.board_key + s.hole_key, s.board_bits | s.hole_bits);
    double sum[3] = {0.0, 0.0, 0.0};
    uint32_t tally[3] = {0, 0, 0};
    for (int i = 0; i < s.n_unseen; i++) {
        int a = s.unseen[i];
        uint64_t ka = s.board_key + g_card_key[a], ba = s.board_bits | g_card_bit[a];
        for (int j = i + 1; j < s.n_unseen; j++) {
            int b = s.unseen[j];
            unsigned k = compare(ours, value_of(ka + g_card_key[b], ba | g_card_bit[b]));
            if (weights)
                sum[k] += weights[combo_index(a, b)];
            else
                tally[k]++;
        }
    }
    for (int k = 0; k < 3; k++)
        out[k] = weights ? sum[k] : (double)tally[k];
    if (weights && !(out[0] + out[1] + out[2] > 0.0))
        return EK_ERR_NO_WEIGHT;
    return EK_OK;
}

/* Score every holding on one completed board: the number of holdings we are ahead of /
 * tied with / behind (`tally`). */
static inline void score_board(const holdings *h, uint64_t key, uint64_t bits, uint64_t runout,
                               uint16_t ours, uint32_t tally[3])
{
    uint32_t tied = 0, behind = 0, n = 0;
    for (int o = 0; o < h->n; o++) {
        if (h->mask[o] & runout)
            continue;
        uint16_t theirs = value_of(key + h->key[o], bits | h->bits[o]);
        tied += theirs == ours;
        behind += theirs > ours;
        n++;
    }
    tally[0] = n - tied - behind;
    tally[1] = tied;
    tally[2] = behind;
}

/* Visit every runout of the board (0, 1 or 2 cards to come). */
typedef void (*runout_visitor)(void *ctx, uint64_t key, uint64_t bits, uint64_t runout, uint16_t ours);

static void for_each_runout(const situation *s, int to_come, runout_visitor visit, void *ctx)
{
    uint64_t hk = s->hole_key, hb = s->hole_bits;
    if (to_come == 0) {
        visit(ctx, s->board_key, s->board_bits, 0, value_of(s->board_key + hk, s->board_bits | hb));
        return;
    }
    for (int i = 0; i < s->n_unseen; i++) {
        int t = s->unseen[i];
        uint64_t kt = s->board_key + g_card_key[t], bt = s->board_bits | g_card_bit[t];
        uint64_t mt = UINT64_C(1) << t;
        if (to_come == 1) {
            visit(ctx, kt, bt, mt, value_of(kt + hk, bt | hb));
            continue;
        }
        for (int j = i + 1; j < s->n_unseen; j++) {
            int r = s->unseen[j];
            uint64_t kr = kt + g_card_key[r], br = bt | g_card_bit[r];
            visit(ctx, kr, br, mt | (UINT64_C(1) << r), value_of(kr + hk, br | hb));
        }
    }
}

typedef struct {
    const holdings *h;
    double hs_squared_sum;
    uint64_t n_boards;
} runout_ctx;

static void visit_hs_squared(void *p, uint64_t key, uint64_t bits, uint64_t runout, uint16_t ours)
{
    runout_ctx *ctx = p;
    uint32_t tally[3];
    score_board(ctx->h, key, bits, runout, ours, tally);
    double n = (double)tally[0] + tally[1] + tally[2];
    double hs = ((double)tally[0] + 0.5 * tally[1]) / n;
    ctx->hs_squared_sum += hs * hs;
    ctx->n_boards++;
}

/* ------------------------------------------------------------------------- */
/* Potential tables, shared per board                                          */
/* ------------------------------------------------------------------------- */
/*
 * Every player on one board sees the same runouts and the same opponent holdings, and
 * outside a flush a holding's value on a completed board depends only on its two ranks.
 * So, per runout:
 *
 *  - the value of each of the 91 rank pairs (a 169-entry table, which depends only on
 *    the runout's ranks and is built once per rank pair of the runout);
 *  - the exceptions: holdings that use a runout card (they do not exist on this runout:
 *    value 0, below every real value) and holdings that can make a flush (evaluated in
 *    full; a suit needs 3+ cards on the completed board).
 *
 * Each hole counts, per rank pair, the runouts where that pair is ahead of / tied with
 * it (169 vectorisable updates), and per holding a correction for the runouts where the
 * holding was an exception (the true outcome minus the rank pair's). A holding's
 * counters are then its pair's plus its correction; "we are ahead" is the rest of the
 * runouts the holding can see. The table sums weight * counter per holding in the same
 * holding order as always, so even weighted tables are bit-for-bit what they were.
 */

#define PT_MAX_HOLDINGS (EK_N_CARDS * (EK_N_CARDS - 1) / 2)
#define PT_PAIRS 176 /* 169 rank pairs (13 * low + high), padded with value 0 for whole vectors */

typedef struct {
    int n_u, n_h, to_come;
    uint8_t u[EK_N_CARDS];          /* cards off the board, ascending */
    int8_t pos[EK_N_CARDS];         /* card -> index in u, -1 on the board */
    uint64_t board_key, board_bits;
    uint8_t rank_count[13];         /* board ranks */
    uint8_t rank_pair[PT_MAX_HOLDINGS];     /* 13 * low rank + high rank */
    uint64_t key[PT_MAX_HOLDINGS], bits[PT_MAX_HOLDINGS], mask[PT_MAX_HOLDINGS];
    uint16_t both_suit[4][PT_MAX_HOLDINGS]; /* holdings with both cards of a suit */
    uint16_t any_suit[4][PT_MAX_HOLDINGS];  /* holdings with at least one card of a suit */
    int n_both[4], n_any[4];
    /* rank-pair values by the runout's rank pair (13 * low + high; 0 for 0 or 1 cards) */
    uint16_t pair_value[169][PT_PAIRS];
    uint8_t pair_ready[169];
    /* the current runout */
    uint64_t key_now, bits_now;
    const uint16_t *pv;
    int n_exc;
    uint16_t exc_holding[PT_MAX_HOLDINGS], exc_value[PT_MAX_HOLDINGS], exc_pair[PT_MAX_HOLDINGS];
} pt_board;

/* Index of the holding of universe positions i < j. */
static inline int pt_index(int i, int j)
{
    return j * (j - 1) / 2 + i;
}

/* The board's cards checked (range, duplicates), as a card mask (*dead) and added to an
 * evaluation key and bit set (and, if rank_count is not NULL, counted by rank): EK_OK or an
 * EK_ERR_* code. */
static int board_cards(const uint8_t *board, int n_board, uint64_t *dead_out, uint64_t *key, uint64_t *bits,
                       uint8_t *rank_count)
{
    uint64_t dead = 0;
    *key = KEY_START;
    *bits = 0;
    for (int i = 0; i < n_board; i++) {
        unsigned c = board[i];
        if (c >= EK_N_CARDS)
            return EK_ERR_RANGE;
        if (dead & (UINT64_C(1) << c))
            return EK_ERR_DUPLICATE;
        dead |= UINT64_C(1) << c;
        *key += g_card_key[c];
        *bits |= g_card_bit[c];
        if (rank_count)
            rank_count[c >> 2]++;
    }
    *dead_out = dead;
    return EK_OK;
}

static int pt_setup(pt_board *b, const uint8_t *board, int n_board)
{
    if (n_board < 3 || n_board > 5)
        return EK_ERR_ARGUMENT;
    memset(b->rank_count, 0, sizeof b->rank_count);
    uint64_t dead;
    int status = board_cards(board, n_board, &dead, &b->board_key, &b->board_bits, b->rank_count);
    if (status != EK_OK)
        return status;
    b->to_come = 5 - n_board;
    b->n_u = 0;
    for (int c = 0; c < EK_N_CARDS; c++) {
        if (dead & (UINT64_C(1) << c)) {
            b->pos[c] = -1;
            continue;
        }
        b->pos[c] = (int8_t)b->n_u;
        b->u[b->n_u++] = (uint8_t)c;
    }
    b->n_h = b->n_u * (b->n_u - 1) / 2;
    memset(b->n_both, 0, sizeof b->n_both);
    memset(b->n_any, 0, sizeof b->n_any);
    memset(b->pair_ready, 0, sizeof b->pair_ready);
    for (int j = 1; j < b->n_u; j++)
        for (int i = 0; i < j; i++) {
            int o = pt_index(i, j), lo = b->u[i], hi = b->u[j];
            int rl = lo >> 2, rh = hi >> 2, sl = lo & 3, sh = hi & 3;
            b->rank_pair[o] = (uint8_t)(13 * rl + rh); /* u ascending: rl <= rh */
            b->key[o] = g_card_key[lo] + g_card_key[hi];
            b->bits[o] = g_card_bit[lo] | g_card_bit[hi];
            b->mask[o] = (UINT64_C(1) << lo) | (UINT64_C(1) << hi);
            if (sl == sh)
                b->both_suit[sl][b->n_both[sl]++] = (uint16_t)o;
            b->any_suit[sl][b->n_any[sl]++] = (uint16_t)o;
            if (sh != sl)
                b->any_suit[sh][b->n_any[sh]++] = (uint16_t)o;
        }
    return EK_OK;
}

/* Non-flush values of the rank pairs on the board plus runout cards of the given ranks
 * (pairs that cannot exist next to them get 0; only exceptions can hold such pairs). */
static const uint16_t *pt_pair_values(pt_board *b, const int *runout_ranks, int n_r)
{
    int slot = n_r == 0 ? 0 : n_r == 1 ? runout_ranks[0] : 13 * runout_ranks[0] + runout_ranks[1];
    uint16_t *pv = b->pair_value[slot];
    if (b->pair_ready[slot])
        return pv;
    uint8_t count[13];
    uint32_t rank_sum = (uint32_t)b->board_key;
    memcpy(count, b->rank_count, sizeof count);
    for (int k = 0; k < n_r; k++) {
        count[runout_ranks[k]]++;
        rank_sum += POW5[runout_ranks[k]];
    }
    memset(pv, 0, PT_PAIRS * sizeof *pv);
    for (int lo = 0; lo < 13; lo++)
        for (int hi = lo; hi < 13; hi++) {
            int ok = lo == hi ? count[lo] <= 2 : count[lo] <= 3 && count[hi] <= 3;
            if (ok)
                pv[13 * lo + hi] = rank_lookup(rank_sum + POW5[lo] + POW5[hi]);
        }
    b->pair_ready[slot] = 1;
    return pv;
}

/* Set up one runout (universe positions r[0..n_r-1], increasing): the rank-pair values
 * and the list of exceptions with their true values. */
/* The completed board of a runout: its evaluation key, bit set and card mask, and the
 * rank-pair values beside it. */
static inline const uint16_t *pt_runout_cards(pt_board *b, const int *r, int n_r, uint64_t *key_out,
                                              uint64_t *bits_out, uint64_t *runout_out)
{
    uint64_t key = b->board_key, bits = b->board_bits, runout = 0;
    int ranks[2];
    for (int k = 0; k < n_r; k++) {
        int c = b->u[r[k]];
        key += g_card_key[c];
        bits |= g_card_bit[c];
        runout |= UINT64_C(1) << c;
        ranks[k] = c >> 2; /* cards increase, so ranks[0] <= ranks[1] */
    }
    *key_out = key;
    *bits_out = bits;
    *runout_out = runout;
    return pt_pair_values(b, ranks, n_r);
}

static void pt_runout(pt_board *b, const int *r, int n_r)
{
    uint64_t key, bits, runout;
    const uint16_t *pv = b->pv = pt_runout_cards(b, r, n_r, &key, &bits, &runout);
    b->key_now = key;
    b->bits_now = bits;
    int n = 0;
    /* flushes: a suit with 3+ cards on the completed board (at most one suit) */
    for (int s = 0; s < 4; s++) {
        int n_suit = (int)((key >> (32 + 4 * s)) & 0xF) - 3;
        if (n_suit < 3)
            continue;
        const uint16_t *list = n_suit == 3 ? b->both_suit[s] : b->any_suit[s];
        int n_list = n_suit == 3 ? b->n_both[s] : b->n_any[s];
        /* every holding below has 5+ cards of suit s among its 7: a flush (no full house or
         * quads fit beside one in 7 cards), so its value is value_of's flush lookup */
        unsigned shift = 16u * (unsigned)s;
        if (n_suit == 5) {
            n_list = 0; /* every holding: walk them all below */
            for (int o = 0; o < b->n_h; o++)
                if (!(b->mask[o] & runout)) {
                    b->exc_holding[n] = (uint16_t)o;
                    b->exc_value[n] = g_flush_value[((bits | b->bits[o]) >> shift) & 0x1FFF];
                    b->exc_pair[n] = pv[b->rank_pair[o]];
                    n++;
                }
        }
        for (int k = 0; k < n_list; k++) {
            int o = list[k];
            if (b->mask[o] & runout)
                continue;
            b->exc_holding[n] = (uint16_t)o;
            b->exc_value[n] = g_flush_value[((bits | b->bits[o]) >> shift) & 0x1FFF];
            b->exc_pair[n] = pv[b->rank_pair[o]];
            n++;
        }
        break;
    }
    b->n_exc = n;
}

/* One hole's counters: per rank pair, runouts where that pair is ahead / tied (all
 * runouts, and those holding each card); per holding, the correction for runouts where
 * it can make a flush. Holdings that use a runout card do not exist on that runout:
 * their pair's counts on runouts with either of their cards are taken off at the end
 * (the runout of exactly their two cards is added back once, in the correction). */
typedef struct {
    int lo, hi;          /* universe positions of the hole, lo < hi */
    uint64_t key, bits;
    uint16_t pair_behind[PT_PAIRS], pair_tied[PT_PAIRS];
    uint16_t card_behind[EK_N_CARDS][PT_PAIRS], card_tied[EK_N_CARDS][PT_PAIRS];
    int16_t *fix_behind, *fix_tied;
} pt_hole;

/* Add one runout's "pair ahead of us" / "tied" indicators to the pair counters and to
 * the counters of the runout's cards (n_cards 0..2). */
static inline void pt_add_pairs(const uint16_t *restrict pv, uint16_t ours, uint16_t *restrict pb,
                                uint16_t *restrict pt, uint16_t *restrict cb0, uint16_t *restrict ct0,
                                uint16_t *restrict cb1, uint16_t *restrict ct1, int n_cards)
{
    if (n_cards == 0) {
        for (int k = 0; k < PT_PAIRS; k++) {
            pb[k] += pv[k] > ours;
            pt[k] += pv[k] == ours;
        }
    } else if (n_cards == 1) {
        for (int k = 0; k < PT_PAIRS; k++) {
            uint16_t above = pv[k] > ours, same = pv[k] == ours;
            pb[k] += above;
            pt[k] += same;
            cb0[k] += above;
            ct0[k] += same;
        }
    } else {
        for (int k = 0; k < PT_PAIRS; k++) {
            uint16_t above = pv[k] > ours, same = pv[k] == ours;
            pb[k] += above;
            pt[k] += same;
            cb0[k] += above;
            ct0[k] += same;
            cb1[k] += above;
            ct1[k] += same;
        }
    }
}

/* A flush holding's correction on one runout: its true value ``v`` counted instead of its
 * rank pair's ``p``. */
static inline void pt_correct(pt_hole *h, int o, uint16_t v, uint16_t p, uint16_t ours)
{
    h->fix_behind[o] += (int16_t)((v > ours) - (p > ours));
    h->fix_tied[o] += (int16_t)((v == ours) - (p == ours));
}

/* One runout's rank-pair counts of a hole whose value on it is ``ours`` (``pv``: the
 * runout's rank-pair values), the runout's own holding corrected; returns ``ours``. */
static inline uint16_t pt_count_pairs(const pt_board *b, pt_hole *h, const uint16_t *pv, uint16_t ours,
                                      const int *r, int n_r)
{
    int c0 = n_r > 0 ? r[0] : 0, c1 = n_r > 1 ? r[1] : 0;
    pt_add_pairs(pv, ours, h->pair_behind, h->pair_tied, h->card_behind[c0], h->card_tied[c0],
                 h->card_behind[c1], h->card_tied[c1], n_r);
    if (n_r == 2) {
        int o = pt_index(r[0], r[1]);
        uint16_t p = pv[b->rank_pair[o]];
        h->fix_behind[o] += p > ours;
        h->fix_tied[o] += p == ours;
    }
    return ours;
}

static inline void pt_count(const pt_board *b, pt_hole *h, const int *r, int n_r)
{
    uint16_t ours = pt_count_pairs(b, h, b->pv, value_of(b->key_now + h->key, b->bits_now | h->bits), r, n_r);
    for (int e = 0; e < b->n_exc; e++)
        pt_correct(h, b->exc_holding[e], b->exc_value[e], b->exc_pair[e], ours);
}

/* One runout: set it up once, then every hole that does not hold a runout card counts. */
static void pt_visit(pt_board *b, pt_hole *h, int n_holes, const int *r, int n_r)
{
    pt_runout(b, r, n_r);
    for (int p = 0; p < n_holes; p++) {
        int clash = 0;
        for (int k = 0; k < n_r; k++)
            clash |= r[k] == h[p].lo || r[k] == h[p].hi;
        if (!clash)
            pt_count(b, &h[p], r, n_r);
    }
}

/* A lone hole's counters for the runouts with four cards of a suit on the board (the suit
 * ``suit``): the holdings with one card of that suit make a flush whose value depends on
 * that card alone, so instead of one correction per such holding and runout they are
 * counted per card (``flush_*``: runouts without the card where its flush is ahead of /
 * tied with us; ``flush_card_*``: those of them holding another card) and per rank pair
 * (``pair4_*`` and ``card4_*``: the rank pairs' counts on these runouts, as the main
 * counters), and summed into each holding's correction once at the end (pt_fold_suited). */
typedef struct {
    int suit;               /* the suit that can reach four board cards, -1: none */
    uint16_t flush_behind[EK_N_CARDS], flush_tied[EK_N_CARDS];
    uint16_t flush_card_behind[EK_N_CARDS][EK_N_CARDS], flush_card_tied[EK_N_CARDS][EK_N_CARDS];
    uint16_t pair4_behind[PT_PAIRS], pair4_tied[PT_PAIRS];
    uint16_t card4_behind[EK_N_CARDS][PT_PAIRS], card4_tied[EK_N_CARDS][PT_PAIRS];
} pt_suited;

/* The holdings with exactly one card of ``a->suit``: their corrections from the counts. */
static void pt_fold_suited(const pt_board *b, pt_hole *h, const pt_suited *a)
{
    for (int j = 1; j < b->n_u; j++)
        for (int i = 0; i < j; i++) {
            int si = (b->u[i] & 3) == a->suit, sj = (b->u[j] & 3) == a->suit;
            if (si == sj)
                continue;
            int cs = si ? i : j, cy = si ? j : i;
            int o = pt_index(i, j), rp = b->rank_pair[o];
            int32_t behind = (int32_t)a->flush_behind[cs] - a->flush_card_behind[cs][cy]
                           - ((int32_t)a->pair4_behind[rp] - a->card4_behind[cs][rp] - a->card4_behind[cy][rp]);
            int32_t tied = (int32_t)a->flush_tied[cs] - a->flush_card_tied[cs][cy]
                         - ((int32_t)a->pair4_tied[rp] - a->card4_tied[cs][rp] - a->card4_tied[cy][rp]);
            h->fix_behind[o] += (int16_t)behind;
            h->fix_tied[o] += (int16_t)tied;
        }
}

/* One runout for a single hole: pt_runout and pt_count fused, the exceptions counted as they
 * are found instead of listed first (a lone hole reads each once); with ``a`` (not NULL), the
 * holdings with one card of ``a->suit`` on runouts with four cards of it are counted in
 * ``a`` instead (see pt_suited). The same counters in the end. */
static void pt_visit_one(pt_board *b, pt_hole *h, pt_suited *a, const int *r, int n_r)
{
    for (int k = 0; k < n_r; k++)
        if (r[k] == h->lo || r[k] == h->hi)
            return;
    uint64_t key, bits, runout;
    const uint16_t *pv = pt_runout_cards(b, r, n_r, &key, &bits, &runout);
    uint16_t ours = pt_count_pairs(b, h, pv, value_of(key + h->key, bits | h->bits), r, n_r);
    for (int s = 0; s < 4; s++) {
        int n_suit = (int)((key >> (32 + 4 * s)) & 0xF) - 3;
        if (n_suit < 3)
            continue;
        /* every holding below has 5+ cards of suit s among its 7: a flush (no full house or
         * quads fit beside one in 7 cards), so its value is value_of's flush lookup */
        unsigned shift = 16u * (unsigned)s;
        if (n_suit == 5) {
            for (int o = 0; o < b->n_h; o++)
                if (!(b->mask[o] & runout))
                    pt_correct(h, o, g_flush_value[((bits | b->bits[o]) >> shift) & 0x1FFF], pv[b->rank_pair[o]], ours);
        } else {
            int suited = n_suit == 4 && a != NULL && a->suit == s; /* one-card holdings counted in a */
            const uint16_t *list = n_suit == 3 || suited ? b->both_suit[s] : b->any_suit[s];
            int n_list = n_suit == 3 || suited ? b->n_both[s] : b->n_any[s];
            for (int k = 0; k < n_list; k++) {
                int o = list[k];
                if (!(b->mask[o] & runout))
                    pt_correct(h, o, g_flush_value[((bits | b->bits[o]) >> shift) & 0x1FFF], pv[b->rank_pair[o]], ours);
            }
            if (suited) {
                unsigned board_s = (unsigned)((bits >> shift) & 0x1FFF);
                for (int c = 0; c < b->n_u; c++) {
                    int card = b->u[c];
                    if ((card & 3) != s || (runout >> card) & 1)
                        continue;
                    uint16_t v = g_flush_value[board_s | (1u << (card >> 2))];
                    uint16_t above = v > ours, same = v == ours;
                    a->flush_behind[c] += above;
                    a->flush_tied[c] += same;
                    for (int q = 0; q < n_r; q++) {
                        a->flush_card_behind[c][r[q]] += above;
                        a->flush_card_tied[c][r[q]] += same;
                    }
                }
                int c0 = n_r > 0 ? r[0] : 0, c1 = n_r > 1 ? r[1] : 0;
                pt_add_pairs(pv, ours, a->pair4_behind, a->pair4_tied, a->card4_behind[c0], a->card4_tied[c0],
                             a->card4_behind[c1], a->card4_tied[c1], n_r);
                if (n_r == 2 && ((b->u[r[0]] & 3) == s) != ((b->u[r[1]] & 3) == s)) {
                    /* the runout's own holding has one card of the suit: its pair is taken off
                     * twice above (with each of its cards), so it is added back once here */
                    int o = pt_index(r[0], r[1]);
                    uint16_t p = pv[b->rank_pair[o]];
                    h->fix_behind[o] -= (int16_t)(p > ours);
                    h->fix_tied[o] -= (int16_t)(p == ours);
                }
            }
        }
        break;
    }
}

/* One runout: a lone hole's fused path, or the listed exceptions for several holes. */
static inline void pt_visit_runout(pt_board *b, pt_hole *h, int n_holes, pt_suited *a, const int *r, int n_r)
{
    if (n_holes == 1)
        pt_visit_one(b, h, a, r, n_r);
    else
        pt_visit(b, h, n_holes, r, n_r);
}

/* Sum the counters into the 3x3 table (holdings ordered by low card, then high card,
 * as the opponents were always listed). */
static int pt_table(const pt_board *b, const pt_hole *h, const double *weights, double table[9])
{
    uint16_t ours_now = value_of(b->board_key + h->key, b->board_bits | h->bits);
    /* runouts a holding can see: from the cards off the board, our hole and theirs */
    int32_t seen = b->to_come == 0 ? 1
                 : b->to_come == 1 ? b->n_u - 4
                 : (b->n_u - 4) * (b->n_u - 5) / 2;
    int any = 0;
    for (int k = 0; k < 9; k++)
        table[k] = 0.0;
    for (int i = 0; i < b->n_u; i++) {
        if (i == h->lo || i == h->hi)
            continue;
        for (int j = i + 1; j < b->n_u; j++) {
            if (j == h->lo || j == h->hi)
                continue;
            int a = b->u[i], c = b->u[j];
            double w = weights ? weights[combo_index(a, c)] : 1.0;
            if (!(w > 0.0))
                continue;
            any = 1;
            int o = pt_index(i, j), rp = b->rank_pair[o];
            unsigned now = compare(ours_now, value_of(b->board_key + b->key[o], b->board_bits | b->bits[o]));
            int32_t behind = h->pair_behind[rp] - h->card_behind[i][rp] - h->card_behind[j][rp] + h->fix_behind[o];
            int32_t tied = h->pair_tied[rp] - h->card_tied[i][rp] - h->card_tied[j][rp] + h->fix_tied[o];
            table[3 * now + 0] += w * (double)(seen - tied - behind);
            table[3 * now + 1] += w * (double)tied;
            table[3 * now + 2] += w * (double)behind;
        }
    }
    return any ? EK_OK : EK_ERR_NO_WEIGHT;
}

int ek_potential_tables(const uint8_t *holes, int n_holes, const uint8_t *board, int n_board,
                        const double *weights, double *tables)
{
    if (n_holes < 1)
        return EK_ERR_ARGUMENT;
    pt_board *b = malloc(sizeof *b);
    pt_hole *h = calloc((size_t)n_holes, sizeof *h);
    int16_t *fixes = NULL;
    pt_suited *a = NULL; /* one hole's per-card counts, see pt_visit_one */
    int status = EK_ERR_NOMEM;
    if (!b || !h)
        goto error;
    status = pt_setup(b, board, n_board);
    if (status)
        goto error;
    for (int p = 0; p < n_holes; p++) {
        unsigned c0 = holes[2 * p], c1 = holes[2 * p + 1];
        if (c0 >= EK_N_CARDS || c1 >= EK_N_CARDS) {
            status = EK_ERR_RANGE;
            goto error;
        }
        if (c0 == c1 || b->pos[c0] < 0 || b->pos[c1] < 0) {
            status = EK_ERR_DUPLICATE;
            goto error;
        }
        int i = b->pos[c0], j = b->pos[c1];
        h[p].lo = i < j ? i : j;
        h[p].hi = i < j ? j : i;
        h[p].key = g_card_key[c0] + g_card_key[c1];
        h[p].bits = g_card_bit[c0] | g_card_bit[c1];
    }
    status = EK_ERR_NOMEM;
    fixes = calloc((size_t)n_holes * 2 * (size_t)b->n_h, sizeof *fixes);
    if (!fixes)
        goto error;
    for (int p = 0; p < n_holes; p++) {
        h[p].fix_behind = fixes + (size_t)p * 2 * (size_t)b->n_h;
        h[p].fix_tied = h[p].fix_behind + b->n_h;
    }

    int r[2] = {0, 0};
    if (n_holes == 1 && b->to_come > 0) { /* one hole (a decision's features): see pt_visit_one */
        for (int q = 0; q < 4; q++) { /* the suit that can reach four board cards (one at most) */
            int on_board = (int)((b->board_key >> (32 + 4 * q)) & 0xF) - 3;
            if (on_board + b->to_come >= 4) {
                a = calloc(1, sizeof *a);
                if (!a)
                    goto error;
                a->suit = q;
            }
        }
    }
    if (b->to_come == 0) {
        pt_visit_runout(b, h, n_holes, a, r, 0);
    } else if (b->to_come == 1) {
        for (r[0] = 0; r[0] < b->n_u; r[0]++)
            pt_visit_runout(b, h, n_holes, a, r, 1);
    } else {
        for (r[0] = 0; r[0] < b->n_u; r[0]++)
            for (r[1] = r[0] + 1; r[1] < b->n_u; r[1]++)
                pt_visit_runout(b, h, n_holes, a, r, 2);
    }
    if (a)
        pt_fold_suited(b, h, a);
    for (int p = 0; p < n_holes; p++) {
        status = pt_table(b, &h[p], weights, tables + 9 * (size_t)p);
        if (status)
            goto error;
    }
    status = EK_OK;
error:
    free(a);
    free(fixes);
    free(h);
    free(b);
    return status;
}

int ek_potential_table(const uint8_t hole[2], const uint8_t *board, int n_board,
                       const double *weights, double table[9])
{
    return ek_potential_tables(hole, 1, board, n_board, weights, table);
}

/* ------------------------------------------------------------------------- */
/* Potential tables of every holding on one board                              */
/* ------------------------------------------------------------------------- */
/*
 * The table of one hole counts, over every opponent holding o disjoint from it and every
 * runout r disjoint from both, the pair (class now, class after r). For all holdings at
 * once it is cheaper to turn that around: per runout r, value every holding disjoint
 * from r once (v), then for each holding h count the holdings o by (n(o) vs n(h),
 * v(o) vs v(h)), n being the value now. That is dominance counting: sweep the holdings
 * by increasing v, mark each in a bitset over the holdings sorted by n (its slot), and
 * query each holding before its group of equal v is marked (v(o) < v(h)) and after
 * (v(o) <= v(h)): the marked slots below the first slot of h's n are the holdings with
 * a lower n (a popcount plus a count per 64-slot word), those with h's n are counted
 * apart.
 *
 * The sweep counts every holding, including those sharing a card with h (and h itself),
 * which are not opponents of h. Each card c keeps the same counts over the (at most 48)
 * holdings that contain it, in one 64-bit word of slots sorted by n; for h = {a, b} the
 * opponents are all holdings minus those holding a minus those holding b plus h itself
 * (which holds both), so the counts subtract exactly.
 *
 * Per holding six counts are summed over the runouts: the opponents with v below ours
 * and with v up to ours, each in total, with n below ours and with n equal to ours. With
 * the number of opponents in each class now (times the runouts a pair sees) they give
 * the nine cells.
 */

typedef struct {
    int32_t vlt_all, vlt_nlt, vlt_neq, vle_all, vle_nlt, vle_neq;
} bp_acc;

#define BP_WORDS 24 /* 64-slot words over the holdings (21 needed), a multiple of 8 */
#define BP_VALUE_WORDS ((EK_N_VALUES + 64) / 64) /* 64-value words over v = 1..7462 */
#define BP_HOLDING_BITS 11 /* holding index in the low bits of a sort key (n_h <= 1326 < 2048) */

typedef struct {
    int n_u, n_h, to_come;
    uint8_t u[EK_N_CARDS];
    uint64_t board_key, board_bits;
    /* per holding (index pt_index(i, j) of universe positions i < j) */
    uint64_t key[PT_MAX_HOLDINGS], bits[PT_MAX_HOLDINGS];
    uint8_t lo[PT_MAX_HOLDINGS], hi[PT_MAX_HOLDINGS];  /* universe positions */
    uint16_t now[PT_MAX_HOLDINGS];                      /* value now */
    /* by n: its slot, the first slot of its n, the number of holdings with its n */
    uint16_t slot[PT_MAX_HOLDINGS], first[PT_MAX_HOLDINGS], n_same[PT_MAX_HOLDINGS];
    /* among the holdings of its low / high card: its slot bit, the slots of lower n, of equal n */
    uint64_t bit_lo[PT_MAX_HOLDINGS], below_lo[PT_MAX_HOLDINGS], equal_lo[PT_MAX_HOLDINGS];
    uint64_t bit_hi[PT_MAX_HOLDINGS], below_hi[PT_MAX_HOLDINGS], equal_hi[PT_MAX_HOLDINGS];
    /* per runout */
    uint32_t sorted[PT_MAX_HOLDINGS], tmp[PT_MAX_HOLDINGS]; /* v << BP_HOLDING_BITS | holding */
    int16_t head[BP_VALUE_WORDS * 64], next[PT_MAX_HOLDINGS]; /* holdings by v: lists (-1 ends) */
    uint64_t present[BP_VALUE_WORDS];                          /* the values v present */
    uint64_t word[BP_WORDS];
    uint16_t before[BP_WORDS];          /* marked slots in the words before */
    uint16_t same[PT_MAX_HOLDINGS];     /* marked holdings by the first slot of their n */
    uint64_t card_mask[EK_N_CARDS];
    int32_t card_count[EK_N_CARDS];
    bp_acc acc[PT_MAX_HOLDINGS];
} bp_board;

/* Sort keys n << BP_HOLDING_BITS | holding; set slot/first (whole board) or the card's words. */
static void bp_slots(bp_board *b, uint32_t *keys, int n, int card)
{
    qsort(keys, (size_t)n, sizeof *keys, ek_cmp_u32);
    int first = 0;
    for (int s = 0; s < n; s++) {
        if (s > 0 && keys[s] >> BP_HOLDING_BITS != keys[s - 1] >> BP_HOLDING_BITS)
            first = s;
        int o = (int)(keys[s] & ((1u << BP_HOLDING_BITS) - 1));
        int last = s; /* the last slot of the same n */
        while (last + 1 < n && keys[last + 1] >> BP_HOLDING_BITS == keys[s] >> BP_HOLDING_BITS)
            last++;
        if (card < 0) {
            b->slot[o] = (uint16_t)s;
            b->first[o] = (uint16_t)first;
            b->n_same[o] = (uint16_t)(last + 1 - first);
            continue;
        }
        uint64_t below = (UINT64_C(1) << first) - 1;
        uint64_t equal = ((UINT64_C(1) << (last + 1)) - 1) ^ below;
        if (b->lo[o] == card) {
            b->bit_lo[o] = UINT64_C(1) << s;
            b->below_lo[o] = below;
            b->equal_lo[o] = equal;
        } else {
            b->bit_hi[o] = UINT64_C(1) << s;
            b->below_hi[o] = below;
            b->equal_hi[o] = equal;
        }
    }
}

static int bp_setup(bp_board *b, const uint8_t *board, int n_board)
{
    if (n_board < 3 || n_board > 4)
        return EK_ERR_ARGUMENT;
    uint64_t dead;
    int status = board_cards(board, n_board, &dead, &b->board_key, &b->board_bits, NULL);
    if (status != EK_OK)
        return status;
    b->to_come = 5 - n_board;
    b->n_u = 0;
    for (int c = 0; c < EK_N_CARDS; c++)
        if (!(dead & (UINT64_C(1) << c)))
            b->u[b->n_u++] = (uint8_t)c;
    b->n_h = b->n_u * (b->n_u - 1) / 2;
    for (int j = 1; j < b->n_u; j++)
        for (int i = 0; i < j; i++) {
            int o = pt_index(i, j);
            b->key[o] = g_card_key[b->u[i]] + g_card_key[b->u[j]];
            b->bits[o] = g_card_bit[b->u[i]] | g_card_bit[b->u[j]];
            b->lo[o] = (uint8_t)i;
            b->hi[o] = (uint8_t)j;
            b->now[o] = value_of(b->board_key + b->key[o], b->board_bits | b->bits[o]);
            b->tmp[o] = (uint32_t)b->now[o] << BP_HOLDING_BITS | (uint32_t)o;
        }
    bp_slots(b, b->tmp, b->n_h, -1);
    for (int i = 0; i < b->n_u; i++) {
        int n = 0;
        for (int j = 0; j < b->n_u; j++)
            if (j != i) {
                int o = i < j ? pt_index(i, j) : pt_index(j, i);
                b->tmp[n++] = (uint32_t)b->now[o] << BP_HOLDING_BITS | (uint32_t)o;
            }
        bp_slots(b, b->tmp, n, i);
    }
    memset(b->acc, 0, sizeof b->acc);
    memset(b->head, 0xFF, sizeof b->head);
    memset(b->present, 0, sizeof b->present);
    return EK_OK;
}

/* Counts of holding o against the holdings marked so far (all minus those holding either
 * of its cards): in total, with n below o's, with n equal to o's. */
static inline void bp_query(const bp_board *b, int o, int32_t marked, int32_t out[3])
{
    int i = b->lo[o], j = b->hi[o], f = b->first[o];
    uint64_t mi = b->card_mask[i], mj = b->card_mask[j];
    int32_t below = b->before[f >> 6] + __builtin_popcountll(b->word[f >> 6] & ((UINT64_C(1) << (f & 63)) - 1));
    below -= __builtin_popcountll(mi & b->below_lo[o]) + __builtin_popcountll(mj & b->below_hi[o]);
    int32_t equal = b->same[f] - __builtin_popcountll(mi & b->equal_lo[o]) - __builtin_popcountll(mj & b->equal_hi[o]);
    out[0] = marked - b->card_count[i] - b->card_count[j];
    out[1] = below;
    out[2] = equal;
}

/* The sweep of one runout (universe positions r[0..n_r-1]); compiled twice by GCC on x86-64
 * glibc (with the popcount instruction and without, picked at load time by an ifunc). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
__attribute__((target_clones("popcnt", "default")))
#endif
static void bp_runout(bp_board *b, const int *r, int n_r)
{
    uint64_t key = b->board_key, bits = b->board_bits, gone = 0;
    for (int k = 0; k < n_r; k++) {
        int c = b->u[r[k]];
        key += g_card_key[c];
        bits |= g_card_bit[c];
        gone |= UINT64_C(1) << r[k];
    }
    /* bucket the holdings by v (a list per value, a bitmap of the values present), then
     * read the buckets in increasing v into b->sorted */
    int m = 0;
    for (int o = 0; o < b->n_h; o++) {
        if (((gone >> b->lo[o]) | (gone >> b->hi[o])) & 1)
            continue;
        uint16_t v = value_of(key + b->key[o], bits | b->bits[o]);
        b->next[o] = b->head[v];
        b->head[v] = (int16_t)o;
        b->present[v >> 6] |= UINT64_C(1) << (v & 63);
    }
    uint32_t *src = b->sorted;
    for (int w = 0; w < BP_VALUE_WORDS; w++)
        for (uint64_t x = b->present[w]; x; x &= x - 1) {
            int v = 64 * w + __builtin_ctzll(x);
            for (int o = b->head[v]; o >= 0; o = b->next[o])
                src[m++] = (uint32_t)v << BP_HOLDING_BITS | (uint32_t)o;
            b->head[v] = -1;
        }
    memset(b->present, 0, sizeof b->present);
    memset(b->word, 0, sizeof b->word);
    memset(b->before, 0, sizeof b->before);
    memset(b->same, 0, (size_t)b->n_h * sizeof *b->same);
    memset(b->card_mask, 0, sizeof b->card_mask);
    memset(b->card_count, 0, sizeof b->card_count);
    const uint32_t holding = (1u << BP_HOLDING_BITS) - 1;
    int32_t q[3];
    for (int start = 0, end; start < m; start = end) {
        uint32_t v = src[start] >> BP_HOLDING_BITS;
        for (end = start + 1; end < m && src[end] >> BP_HOLDING_BITS == v; end++)
            ;
        for (int k = start; k < end; k++) { /* below our value */
            int o = (int)(src[k] & holding);
            bp_query(b, o, start, q);
            b->acc[o].vlt_all += q[0];
            b->acc[o].vlt_nlt += q[1];
            b->acc[o].vlt_neq += q[2];
        }
        for (int k = start; k < end; k++) {
            int o = (int)(src[k] & holding), i = b->lo[o], j = b->hi[o], s = b->slot[o];
            b->word[s >> 6] |= UINT64_C(1) << (s & 63);
            for (int w = 0; w < BP_WORDS; w++)
                b->before[w] += (uint16_t)(w > (s >> 6));
            b->same[b->first[o]]++;
            b->card_mask[i] |= b->bit_lo[o];
            b->card_mask[j] |= b->bit_hi[o];
            b->card_count[i]++;
            b->card_count[j]++;
        }
        for (int k = start; k < end; k++) { /* up to our value; h itself was taken off once too often */
            int o = (int)(src[k] & holding);
            bp_query(b, o, end, q);
            b->acc[o].vle_all += q[0] + 1;
            b->acc[o].vle_nlt += q[1];
            b->acc[o].vle_neq += q[2] + 1;
        }
    }
}

int ek_board_potential_tables(const uint8_t *board, int n_board, uint8_t *holes, double *tables)
{
    bp_board *b = malloc(sizeof *b);
    if (!b)
        return EK_ERR_NOMEM;
    int status = bp_setup(b, board, n_board);
    if (status) {
        free(b);
        return status;
    }
    int r[2] = {0, 0};
    if (b->to_come == 1) {
        for (r[0] = 0; r[0] < b->n_u; r[0]++)
            bp_runout(b, r, 1);
    } else {
        for (r[0] = 0; r[0] < b->n_u; r[0]++)
            for (r[1] = r[0] + 1; r[1] < b->n_u; r[1]++)
                bp_runout(b, r, 2);
    }
    /* runouts a pair of disjoint holdings sees; opponents of a holding */
    int32_t seen = b->to_come == 1 ? b->n_u - 4 : (b->n_u - 4) * (b->n_u - 5) / 2;
    int32_t n_all = b->n_h - 2 * (b->n_u - 1) + 1;
    int p = 0;
    for (int i = 0; i < b->n_u; i++)
        for (int j = i + 1; j < b->n_u; j++, p++) {
            int o = pt_index(i, j), f = b->first[o];
            /* opponents now with a value below / equal to ours: all holdings minus ours */
            int32_t n_lt = f - __builtin_popcountll(b->below_lo[o]) - __builtin_popcountll(b->below_hi[o]);
            int32_t n_eq = b->n_same[o] + 1 - __builtin_popcountll(b->equal_lo[o]) -
                           __builtin_popcountll(b->equal_hi[o]);
            const bp_acc *a = &b->acc[o];
            int32_t t[9];
            t[0] = a->vlt_nlt;
            t[1] = a->vle_nlt - a->vlt_nlt;
            t[2] = n_lt * seen - t[0] - t[1];
            t[3] = a->vlt_neq;
            t[4] = a->vle_neq - a->vlt_neq;
            t[5] = n_eq * seen - t[3] - t[4];
            t[6] = a->vlt_all - t[0] - t[3];
            t[7] = (a->vle_all - a->vlt_all) - t[1] - t[4];
            t[8] = (n_all - n_lt - n_eq) * seen - t[6] - t[7];
            holes[2 * p] = b->u[i];
            holes[2 * p + 1] = b->u[j];
            for (int k = 0; k < 9; k++)
                tables[9 * p + k] = (double)t[k];
        }
    free(b);
    return p;
}

int ek_hand_strength_squared(const uint8_t hole[2], const uint8_t *board, int n_board, double *out)
{
    situation s;
    holdings *h = NULL;
    int status = make_situation(&s, hole, board, n_board);
    if (status)
        return status;
    if (n_board < 3)
        return EK_ERR_ARGUMENT;
    h = malloc(sizeof *h);
    if (!h)
        return EK_ERR_NOMEM;
    status = collect_holdings(h, &s, NULL);
    if (status == EK_OK) {
        runout_ctx ctx = {h, 0.0, 0};
        for_each_runout(&s, 5 - n_board, visit_hs_squared, &ctx);
        *out = ctx.hs_squared_sum / (double)ctx.n_boards;
    }
    free(h);
    return status;
}

/* ------------------------------------------------------------------------- */
/* Showdowns against several opponents                                         */
/* ------------------------------------------------------------------------- */

static double choose(int n, int k)
{
    if (k < 0 || n < k)
        return 0.0;
    double r = 1.0;
    for (int i = 1; i <= k; i++)
        r = r * (n - k + i) / i;
    return r;
}

double ek_showdown_deals(int n_board, int n_opponents)
{
    int unseen = EK_N_CARDS - 2 - n_board, to_come = 5 - n_board;
    double deals = choose(unseen, to_come);
    int left = unseen - to_come;
    for (int i = 0; i < n_opponents; i++) {
        deals *= choose(left, 2) / (i + 1); /* unordered sets of opponents */
        left -= 2;
    }
    return deals;
}

typedef struct {
    uint16_t value[EK_N_COMBOS];
    uint64_t mask[EK_N_COMBOS];
    int n;
    uint16_t ours;
    uint64_t count[3];
} showdown_ctx;

/* Opponents as increasing holding indices (each unordered set once); track the best hand. */
static void deal_opponents(showdown_ctx *c, int first, int left, uint64_t used, uint16_t best)
{
    for (int o = first; o < c->n; o++) {
        if (c->mask[o] & used)
            continue;
        uint16_t b = c->value[o] > best ? c->value[o] : best;
        if (left == 1)
            c->count[compare(c->ours, b)]++;
        else
            deal_opponents(c, o + 1, left - 1, used | c->mask[o], b);
    }
}

static void runouts_exact(const situation *s, showdown_ctx *c, const holdings *h, int n_opponents,
                          int to_come, int first, uint64_t key, uint64_t bits, uint64_t runout)
{
    if (to_come == 0) {
        c->ours = value_of(key + s->hole_key, bits | s->hole_bits);
        c->n = 0;
        for (int o = 0; o < h->n; o++) {
            if (h->mask[o] & runout)
                continue;
            c->value[c->n] = value_of(key + h->key[o], bits | h->bits[o]);
            c->mask[c->n] = h->mask[o];
            c->n++;
        }
        if (n_opponents == 1) {
            uint32_t tied = 0, behind = 0;
            for (int o = 0; o < c->n; o++) {
                tied += c->value[o] == c->ours;
                behind += c->value[o] > c->ours;
            }
            c->count[0] += (uint64_t)(c->n - tied - behind);
            c->count[1] += tied;
            c->count[2] += behind;
        } else {
            deal_opponents(c, 0, n_opponents, 0, 0);
        }
        return;
    }
    for (int i = first; i < s->n_unseen; i++) {
        int card = s->unseen[i];
        runouts_exact(s, c, h, n_opponents, to_come - 1, i + 1, key + g_card_key[card],
                      bits | g_card_bit[card], runout | (UINT64_C(1) << card));
    }
}

int ek_showdown_exact_parts(int n_board)
{
    if (n_board < 0 || n_board > 5)
        return 0;
    return n_board == 5 ? 1 : EK_N_CARDS - 2 - n_board;
}

int ek_showdown_exact_part(const uint8_t hole[2], const uint8_t *board, int n_board, int n_opponents,
                           int part, uint64_t out[3])
{
    situation s;
    holdings *h = NULL;
    showdown_ctx *c = NULL;
    if (n_opponents < 1 || n_opponents > 9)
        return EK_ERR_ARGUMENT;
    int status = make_situation(&s, hole, board, n_board);
    if (status)
        return status;
    if (part < 0 || part >= ek_showdown_exact_parts(n_board))
        return EK_ERR_ARGUMENT;
    status = EK_ERR_NOMEM;
    h = malloc(sizeof *h);
    c = calloc(1, sizeof *c);
    if (!h || !c)
        goto error;
    status = collect_holdings(h, &s, NULL);
    if (status)
        goto error;
    int to_come = 5 - n_board;
    if (to_come == 0) {
        runouts_exact(&s, c, h, n_opponents, 0, 0, s.board_key, s.board_bits, 0);
    } else {
        int card = s.unseen[part];
        runouts_exact(&s, c, h, n_opponents, to_come - 1, part + 1, s.board_key + g_card_key[card],
                      s.board_bits | g_card_bit[card], UINT64_C(1) << card);
    }
    for (int k = 0; k < 3; k++)
        out[k] += c->count[k];
    status = EK_OK;
error:
    free(c);
    free(h);
    return status;
}

int ek_showdown_exact(const uint8_t hole[2], const uint8_t *board, int n_board, int n_opponents,
                      uint64_t out[3])
{
    if (n_opponents < 1 || n_opponents > 9 || n_board < 0 || n_board > 5)
        return EK_ERR_ARGUMENT;
    if (ek_showdown_deals(n_board, n_opponents) > EK_EXACT_MAX_DEALS)
        return EK_ERR_ARGUMENT;
    uint64_t total[3] = {0, 0, 0};
    int parts = ek_showdown_exact_parts(n_board);
    for (int p = 0; p < parts; p++) {
        int status = ek_showdown_exact_part(hole, board, n_board, n_opponents, p, total);
        if (status)
            return status;
    }
    for (int k = 0; k < 3; k++)
        out[k] = total[k];
    return EK_OK;
}

/* Threshold of Lemire's method for range 52: 2^32 mod 52 (a product whose low half is
 * below it is rejected, so every card is exactly equally likely). */
#define DRAW_REJECT ((uint32_t)(UINT64_C(4294967296) % EK_N_CARDS))

/* Deal `need` distinct cards not in `used` into dealt[] by rejection from the full deck:
 * each 64-bit draw gives two uniform cards 0..51 (multiply-high); cards already known or
 * dealt are drawn again. */
static inline void deal_cards(xoshiro256 *rng, uint64_t used, int need, uint8_t *dealt)
{
    int k = 0;
    while (k < need) {
        uint64_t r = xoshiro_next(rng);
        for (int half = 0; half < 2; half++) {
            uint64_t m = (r & UINT64_C(0xFFFFFFFF)) * EK_N_CARDS;
            r >>= 32;
            unsigned c = (unsigned)(m >> 32);
            /* branch-free accept: inside the unbiased range and not yet used */
            uint64_t valid = (uint32_t)m >= DRAW_REJECT;
            uint64_t bit = valid << c;
            int fresh = (int)(((used & bit) == 0) & valid);
            used |= bit;
            dealt[k] = (uint8_t)c;
            k += fresh;
        }
    }
}

int ek_mc_start(ek_mc_state *st, const uint8_t hole[2], const uint8_t *board, int n_board,
                int n_opponents, uint64_t trials, uint64_t seed)
{
    situation s;
    if (n_opponents < 1 || n_opponents > 9)
        return EK_ERR_ARGUMENT;
    int status = make_situation(&s, hole, board, n_board);
    if (status)
        return status;
    int to_come = 5 - n_board, need = to_come + 2 * n_opponents;
    if (need > s.n_unseen || trials == 0 || trials > EK_MAX_TRIALS)
        return EK_ERR_ARGUMENT;
    memset(st, 0, sizeof *st);
    xoshiro256 rng;
    xoshiro_seed(&rng, seed);
    st->dead = s.dead;
    st->board_key = s.board_key;
    st->board_bits = s.board_bits;
    st->hole_key = s.hole_key;
    st->hole_bits = s.hole_bits;
    st->trials = trials;
    st->to_come = to_come;
    st->need = need;
    st->n_opponents = n_opponents;
    deal_cards(&rng, s.dead, need, st->dealt);
    memcpy(st->rng, rng.s, sizeof st->rng);
    return EK_OK;
}

void ek_mc_step(ek_mc_state *st, uint64_t max_trials)
{
    /* Locals for the hot loop; written back at the end. */
    xoshiro256 rng;
    memcpy(rng.s, st->rng, sizeof rng.s);
    const uint64_t dead = st->dead, board_key = st->board_key, board_bits = st->board_bits;
    const uint64_t hole_key = st->hole_key, hole_bits = st->hole_bits, trials = st->trials;
    const int to_come = st->to_come, need = st->need, n_opponents = st->n_opponents;
    uint64_t count[3] = {st->count[0], st->count[1], st->count[2]};
    uint8_t dealt[sizeof st->dealt];
    memcpy(dealt, st->dealt, sizeof dealt);
    uint64_t t = st->done;
    uint64_t end = trials - t < max_trials ? trials : t + max_trials;
    for (; t < end; t++) {
        uint64_t key = board_key, bits = board_bits;
        for (int i = 0; i < to_come; i++) {
            key += g_card_key[dealt[i]];
            bits |= g_card_bit[dealt[i]];
        }
        uint16_t ours = value_of(key + hole_key, bits | hole_bits);
        uint16_t best = 0;
        for (int p = 0; p < n_opponents; p++) {
            int a = dealt[to_come + 2 * p], b = dealt[to_come + 2 * p + 1];
            uint16_t v = value_of(key + g_card_key[a] + g_card_key[b], bits | g_card_bit[a] | g_card_bit[b]);
            best = v > best ? v : best;
        }
        /* Deal the next trial before using this one's values: the table lookups above are
         * then older than the dealing loop's final (hard to predict) branch and keep
         * running through its misprediction instead of being replayed after it. */
        if (t + 1 < trials)
            deal_cards(&rng, dead, need, dealt);
        count[compare(ours, best)]++;
    }
    st->done = t;
    memcpy(st->rng, rng.s, sizeof st->rng);
    memcpy(st->dealt, dealt, sizeof dealt);
    for (int k = 0; k < 3; k++)
        st->count[k] = count[k];
}

int ek_showdown_monte_carlo(const uint8_t hole[2], const uint8_t *board, int n_board,
                            int n_opponents, uint64_t trials, uint64_t seed, uint64_t out[3])
{
    ek_mc_state st;
    int status = ek_mc_start(&st, hole, board, n_board, n_opponents, trials, seed);
    if (status)
        return status;
    ek_mc_step(&st, trials);
    for (int k = 0; k < 3; k++)
        out[k] = st.count[k];
    return EK_OK;
}
