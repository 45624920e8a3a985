/*
 * reqid.c - This file contains the request id generator (reqid.h): a splitmix64 stream per
 * thread, seeded once per thread from getrandom() mixed with the thread's address and the
 * clock (so a failing getrandom still yields distinct streams), 5 bits per character.
 */
#include "server/reqid.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/random.h>

#include "util/thread.h"

static _Thread_local uint64_t reqid_state;
static _Thread_local bool reqid_seeded;

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void srv_reqid_new(char out[SRV_REQID_LEN + 1])
{
    static const char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUV";
    if (!reqid_seeded) {
        uint64_t seed = 0;
        if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed) seed = 0;
        reqid_state = seed ^ (uint64_t)(uintptr_t)&reqid_state ^ know_ns();
        reqid_seeded = true;
    }
    uint64_t bits = 0;
    int avail = 0;
    for (int i = 0; i < SRV_REQID_LEN; i++) {
        if (avail < 5) {
            bits = splitmix64(&reqid_state);
            avail = 64;
        }
        out[i] = alphabet[bits & 31];
        bits >>= 5;
        avail -= 5;
    }
    out[SRV_REQID_LEN] = '\0';
}
