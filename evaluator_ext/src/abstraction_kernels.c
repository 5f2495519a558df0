/* Native kernels for card abstractions: see abstraction_kernels.h. */
#include "abstraction_kernels.h"

#include <stdlib.h>
#include <string.h>

#include "eval_kernels.h"
#include "eval_tables.h"

#define AK_OPPONENTS 990 /* C(45, 2): opponent holdings on a complete board */

static int combo_of(int a, int b)
{
    int hi = a > b ? a : b, lo = a > b ? b : a;
    return hi * (hi - 1) / 2 + lo;
}

static int check_board(const uint8_t *board, int n_board, uint64_t *dead)
{
    *dead = 0;
    for (int i = 0; i < n_board; i++) {
        if (board[i] >= EK_N_CARDS)
            return EK_ERR_RANGE;
        if (*dead & (UINT64_C(1) << board[i]))
            return EK_ERR_DUPLICATE;
        *dead |= UINT64_C(1) << board[i];
    }
    return EK_OK;
}

/* The river sweep on a checked complete board: hs[] and values[] of the 1081 live holdings
 * (entries of clashing holdings are left alone). */
static void river_sweep(const uint8_t board[5], uint64_t dead, double *hs, int32_t *values)
{
    uint8_t cards[7];
    uint8_t ca[1081], cb[1081];
    uint32_t keys[1081];
    int n = 0;
    memcpy(cards, board, 5);
    for (int hi = 1; hi < EK_N_CARDS; hi++) {
        if (dead & (UINT64_C(1) << hi))
            continue;
        for (int lo = 0; lo < hi; lo++) {
            if (dead & (UINT64_C(1) << lo))
                continue;
            cards[5] = (uint8_t)hi;
            cards[6] = (uint8_t)lo;
            uint32_t v = ek_evaluate(cards, 7);
            ca[n] = (uint8_t)hi;
            cb[n] = (uint8_t)lo;
            keys[n] = (v << 11) | (uint32_t)n;
            n++;
        }
    }
    qsort(keys, (size_t)n, sizeof keys[0], ek_cmp_u32);
    int seen_card[EK_N_CARDS] = {0}, group_card[EK_N_CARDS] = {0};
    int seen = 0;
    for (int i = 0; i < n;) {
        uint32_t v = keys[i] >> 11;
        int j = i;
        while (j < n && (keys[j] >> 11) == v) {
            int k = (int)(keys[j] & 2047u);
            group_card[ca[k]]++;
            group_card[cb[k]]++;
            j++;
        }
        int size = j - i;
        for (int t = i; t < j; t++) {
            int k = (int)(keys[t] & 2047u);
            int a = ca[k], b = cb[k];
            int less = seen - seen_card[a] - seen_card[b];
            int tied = size - group_card[a] - group_card[b] + 1;
            int idx = combo_of(a, b);
            hs[idx] = (less + 0.5 * tied) / AK_OPPONENTS;
            if (values)
                values[idx] = (int32_t)v;
        }
        for (int t = i; t < j; t++) {
            int k = (int)(keys[t] & 2047u);
            group_card[ca[k]]--;
            group_card[cb[k]]--;
            seen_card[ca[k]]++;
            seen_card[cb[k]]++;
        }
        seen += size;
        i = j;
    }
}

int ak_river_all(const uint8_t board[5], double *hs, int32_t *values)
{
    uint64_t dead;
    int status = check_board(board, 5, &dead);
    if (status)
        return status;
    for (int i = 0; i < EK_N_COMBOS; i++) {
        hs[i] = -1.0;
        if (values)
            values[i] = 0;
    }
    river_sweep(board, dead, hs, values);
    return EK_OK;
}

int ak_board_metrics(const uint8_t *board, int n_board, double *hs, double *hs2)
{
    if (n_board < 3 || n_board > 5)
        return EK_ERR_ARGUMENT;
    uint64_t dead;
    int status = check_board(board, n_board, &dead);
    if (status)
        return status;
    for (int i = 0; i < EK_N_COMBOS; i++)
        hs[i] = hs2[i] = -1.0;
    if (n_board == 5) {
        river_sweep(board, dead, hs, NULL);
        for (int i = 0; i < EK_N_COMBOS; i++)
            if (hs[i] >= 0.0)
                hs2[i] = hs[i] * hs[i];
        return EK_OK;
    }
    /* Per turn card t (the first card to come): sum and count of the river HS of every
     * holding over the rivers; a flop visits each unordered runout {c1, c2} once and
     * credits it to both orders. */
    double *river = malloc(EK_N_COMBOS * sizeof *river);
    double *turn_sum = calloc((size_t)EK_N_CARDS * EK_N_COMBOS, sizeof *turn_sum);
    double *turn_cnt = calloc((size_t)EK_N_CARDS * EK_N_COMBOS, sizeof *turn_cnt);
    double *sq_sum = calloc(EK_N_COMBOS, sizeof *sq_sum);
    double *all_cnt = calloc(EK_N_COMBOS, sizeof *all_cnt);
    double *next_cnt = calloc(EK_N_COMBOS, sizeof *next_cnt);
    if (!river || !turn_sum || !turn_cnt || !sq_sum || !all_cnt || !next_cnt) {
        status = EK_ERR_NOMEM;
        goto done;
    }
    uint8_t full[5];
    memcpy(full, board, (size_t)n_board);
    for (int c1 = 0; c1 < EK_N_CARDS; c1++) {
        if (dead & (UINT64_C(1) << c1))
            continue;
        int c2_first = n_board == 3 ? c1 + 1 : 0, c2_end = n_board == 3 ? EK_N_CARDS : 1;
        for (int c2 = c2_first; c2 < c2_end; c2++) {
            if (n_board == 3 && (dead & (UINT64_C(1) << c2)))
                continue;
            uint64_t d = dead | (UINT64_C(1) << c1);
            full[n_board] = (uint8_t)c1;
            if (n_board == 3) {
                full[4] = (uint8_t)c2;
                d |= UINT64_C(1) << c2;
            }
            for (int i = 0; i < EK_N_COMBOS; i++)
                river[i] = -1.0;
            river_sweep(full, d, river, NULL);
            for (int i = 0; i < EK_N_COMBOS; i++) {
                double x = river[i];
                if (x < 0.0)
                    continue;
                turn_sum[(size_t)c1 * EK_N_COMBOS + i] += x;
                turn_cnt[(size_t)c1 * EK_N_COMBOS + i] += 1.0;
                if (n_board == 3) {
                    turn_sum[(size_t)c2 * EK_N_COMBOS + i] += x;
                    turn_cnt[(size_t)c2 * EK_N_COMBOS + i] += 1.0;
                }
                sq_sum[i] += x * x;
                all_cnt[i] += 1.0;
            }
        }
    }
    for (int i = 0; i < EK_N_COMBOS; i++)
        if (all_cnt[i] > 0)
            hs[i] = 0.0, hs2[i] = 0.0;
    for (int t = 0; t < EK_N_CARDS; t++) {
        for (int i = 0; i < EK_N_COMBOS; i++) {
            double n = turn_cnt[(size_t)t * EK_N_COMBOS + i];
            if (n > 0) {
                double m = turn_sum[(size_t)t * EK_N_COMBOS + i] / n;
                hs[i] += m;
                next_cnt[i] += 1.0;
                if (n_board == 3)
                    hs2[i] += m * m;
            }
        }
    }
    for (int i = 0; i < EK_N_COMBOS; i++) {
        if (next_cnt[i] > 0) {
            hs[i] /= next_cnt[i];
            hs2[i] = n_board == 3 ? hs2[i] / next_cnt[i] : sq_sum[i] / all_cnt[i];
        }
    }
done:
    free(river);
    free(turn_sum);
    free(turn_cnt);
    free(sq_sum);
    free(all_cnt);
    free(next_cnt);
    return status;
}

int ak_river_accumulate(const uint8_t *boards, size_t n, double *sum_hs, double *sum_hs2, double *count)
{
    double river[EK_N_COMBOS];
    for (size_t r = 0; r < n; r++) {
        uint64_t dead;
        int status = check_board(boards + 5 * r, 5, &dead);
        if (status)
            return status;
        for (int i = 0; i < EK_N_COMBOS; i++)
            river[i] = -1.0;
        river_sweep(boards + 5 * r, dead, river, NULL);
        for (int i = 0; i < EK_N_COMBOS; i++) {
            double x = river[i];
            if (x >= 0.0) {
                sum_hs[i] += x;
                sum_hs2[i] += x * x;
                count[i] += 1.0;
            }
        }
    }
    return EK_OK;
}
