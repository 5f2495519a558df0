/* Robust counter-strategies by external-sampling MCCFR (see rnr_kernels.h).
 *
 * The restricted game: a coin (probability p, per iteration and seat) makes the opponent
 * restricted; a restricted opponent plays, at each of its information sets, the model's row
 * with probability conf (that choice and the model's action are chance to both walkers:
 * sampled, nothing updated) and its own regret-matching strategy otherwise. The exploiter
 * does not see the coin: one table for both seats, trained against the mixture. A free
 * opponent (the coin's other side) is a second table, trained against the exploiter. Each
 * iteration walks the exploiter's seat 0 against the opponent's seat 1, then the other way
 * round, each pass replaying the deal's random stream from its start; the coin and conf
 * draws use a stream of their own, so p = 0 reproduces mc_run's tables twice over.
 */
#include "rnr_kernels.h"

#include <pthread.h>

#include "eval_kernels.h"
#include "mccfr_walk.h"
#include "xoshiro.h"

typedef struct {
    const mc_game *g;
    const mc_model *model;
    double *regret[2], *avg[2]; /* the tables of each seat in this pass */
    int restricted[2];         /* whether the seat's player is the restricted opponent */
    int32_t buckets[2][4];
    int winner;
    xoshiro256 rng, coin;
} rnr_walker;

static double rnr_walk(rnr_walker *w, int32_t node, int me)
{
    const mc_game *g = w->g;
    double value;
    if (mc_terminal(g, node, me, w->winner, &value))
        return value;
    if (g->kind[node] == MC_CHANCE)
        return rnr_walk(w, g->child_index[g->child_start[node]], me);
    int pl = g->player[node], k = g->n_children[node];
    const int32_t *kids = g->child_index + g->child_start[node];
    int64_t row = g->offset[node] + (int64_t)w->buckets[pl][g->street[node]] * k;
    double sigma[4];
    if (w->restricted[pl]) {
        double c = w->model->conf[row];
        if (c >= 1.0 || (c > 0.0 && mc_uniform01(&w->coin) < c)) { /* the model acts: chance */
            for (int a = 0; a < k; a++)
                sigma[a] = w->model->probs[row + a];
            return rnr_walk(w, kids[mc_sample(&w->rng, sigma, k)], me);
        }
    }
    int trained = mc_strategy_of(w->regret[pl] + row, k, sigma); /* untrained: not averaged (as mc_run) */
    if (pl == me) {
        double u[4], ev = 0.0;
        for (int a = 0; a < k; a++) {
            u[a] = rnr_walk(w, kids[a], me);
            ev += sigma[a] * u[a];
        }
        double *reg = w->regret[pl] + row;
        for (int a = 0; a < k; a++)
            reg[a] += u[a] - ev;
        return ev;
    }
    double *avg = w->avg[pl] + row;
    for (int a = 0; trained && a < k; a++)
        avg[a] += sigma[a];
    return rnr_walk(w, kids[mc_sample(&w->rng, sigma, k)], me);
}

typedef struct {
    const mc_game *g;
    const mc_model *model;
    double *regret, *avg, *opp_regret, *opp_avg;
    int64_t first, stop, step;
    uint64_t seed;
    volatile int64_t *done;
} rnr_job;

static void *rnr_job_run(void *arg)
{
    rnr_job *j = arg;
    rnr_walker w = {.g = j->g, .model = j->model};
    uint8_t deck[52];
    for (int64_t it = j->first; it < j->stop; it += j->step) {
        /* the deal exactly as mc_run's iteration `it` draws it */
        uint64_t mix = j->seed ^ (uint64_t)it * UINT64_C(0x9E3779B97F4A7C15);
        xoshiro_seed(&w.rng, splitmix64(&mix));
        uint64_t coin_mix = ~j->seed ^ (uint64_t)it * UINT64_C(0xD1B54A32D192ED03);
        xoshiro_seed(&w.coin, splitmix64(&coin_mix));
        for (int i = 0; i < 52; i++)
            deck[i] = (uint8_t)i;
        for (int i = 0; i < 9; i++) {
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
        xoshiro256 after_deal = w.rng;
        for (int e = 0; e < 2; e++) { /* the exploiter's seat */
            double p = j->model->p;
            w.rng = after_deal;
            w.regret[e] = j->regret;
            w.avg[e] = j->avg;
            w.regret[1 - e] = j->opp_regret;
            w.avg[1 - e] = j->opp_avg;
            w.restricted[e] = 0;
            w.restricted[1 - e] = p >= 1.0 || (p > 0.0 && mc_uniform01(&w.coin) < p);
            rnr_walk(&w, 0, 0);
            rnr_walk(&w, 0, 1);
        }
        __atomic_add_fetch(j->done, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int mc_rnr_run(const mc_game *g, const mc_model *model, double *regret, double *avg, double *opp_regret,
               double *opp_avg, int64_t first, int64_t iterations, uint64_t seed, int threads,
               volatile int64_t *done)
{
    if (threads < 1 || threads > 64 || iterations < 0 || first < 0 || !(model->p >= 0.0 && model->p <= 1.0))
        return MC_ERR_ARGUMENT;
    rnr_job jobs[64];
    pthread_t ids[64];
    for (int t = 0; t < threads; t++)
        jobs[t] = (rnr_job){g, model, regret, avg, opp_regret, opp_avg, first + t, first + iterations, threads, seed,
                            done};
    if (threads == 1) {
        rnr_job_run(&jobs[0]);
        return MC_OK;
    }
    int started = 0;
    for (; started < threads; started++)
        if (pthread_create(&ids[started], NULL, rnr_job_run, &jobs[started]))
            break;
    for (int t = 0; t < started; t++)
        pthread_join(ids[t], NULL);
    for (int t = started; t < threads; t++)
        rnr_job_run(&jobs[t]);
    return MC_OK;
}
