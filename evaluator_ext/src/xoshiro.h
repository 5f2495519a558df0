/* A seeded xoshiro256** generator (Blackman and Vigna), seeded by splitmix64; header-only, no
 * global state: each caller keeps its own xoshiro256. */
#ifndef CBR_XOSHIRO_H
#define CBR_XOSHIRO_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} xoshiro256;

/* One step of splitmix64 on *state (also a good 64-bit mixer on its own). */
static inline uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static inline void xoshiro_seed(xoshiro256 *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&seed);
}

static inline uint64_t xoshiro_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t xoshiro_next(xoshiro256 *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = xoshiro_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = xoshiro_rotl(s[3], 45);
    return result;
}

#endif
