/*
 * testutil.c - scratch directories and deterministic randomness for the tests.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char *test_mkdtemp(const char *tag)
{
    const char *base = getenv("KURA_TEST_TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    mkdir(base, 0755);
    size_t n = strlen(base) + strlen(tag) + 16;
    char *p = malloc(n);
    if (!p)
        fail_msg("out of memory");
    snprintf(p, n, "%s/%s-XXXXXX", base, tag);
    if (!mkdtemp(p))
        fail_msg("mkdtemp(%s) failed", p);
    return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void test_rmrf(char *path)
{
    if (!path)
        return;
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(path);
}

uint64_t test_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The seed when $KURA_TEST_SEED is unset: a fixed one, so a test gives the same verdict on
 * every run of the same commit (CI must not fail, or pass, by chance). Other seeds are for
 * looking further: KURA_TEST_SEED=random. */
#define TEST_SEED_DEFAULT 1

uint64_t test_seed(void)
{
    const char *env = getenv("KURA_TEST_SEED");
    uint64_t seed = TEST_SEED_DEFAULT;
    if (env && strcmp(env, "random") == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        seed ^= (uint64_t)getpid() << 32;
    } else if (env && *env) {
        seed = strtoull(env, NULL, 0);
    }
    fprintf(stderr, "KURA_TEST_SEED=%llu\n", (unsigned long long)seed);
    return seed;
}

void test_poke_byte(const char *path, uint64_t off, uint8_t byte)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    if (pwrite(fd, &byte, 1, (off_t)off) != 1)
        fail_msg("cannot write %s at %llu: %s", path, (unsigned long long)off, strerror(errno));
    close(fd);
}
