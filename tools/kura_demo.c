/*
 * kura_demo.c - the quick-start demo: opens (or creates) an embedded database, writes a few
 * keys durably, closes it, reopens it (replaying the WAL), reads everything back through a
 * point lookup and a range scan, and says what it did at each step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kura.h"

static int check(kura_status s, const char *what)
{
    if (s == KURA_OK)
        return 0;
    fprintf(stderr, "kura-demo: %s failed: %s: %s\n", what, kura_status_str(s), kura_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "./data";
    kura_db *db = NULL;
    kura_tree *tree = NULL;
    kura_options opts;
    kura_options_init(&opts);

    if (check(kura_open(dir, &opts, &db), "open") ||
        check(kura_tree_open(db, "demo", NULL, &tree), "tree open"))
        return 1;
    printf("opened %s (tree \"demo\", %u partitions, durability: sync)\n", dir,
           kura_tree_partitions(tree));
    const char *keys[] = {"USER#001#PROFILE", "USER#001#ORDER#2024-01-05", "USER#002#PROFILE"};
    const char *vals[] = {"{\"name\":\"Sato\"}", "{\"total\":\"1200\"}", "{\"name\":\"Suzuki\"}"};
    for (int i = 0; i < 3; i++) {
        if (check(kura_put(tree, NULL, keys[i], strlen(keys[i]), vals[i], strlen(vals[i])), "put"))
            return 1;
        printf("put %-28s -> %s  (durable: fdatasync'ed WAL)\n", keys[i], vals[i]);
    }
    kura_stats st;
    kura_get_stats(db, &st);
    printf("closing (last sequence %llu, %llu bytes of WAL)\n",
           (unsigned long long)st.last_sequence, (unsigned long long)st.wal_bytes);
    if (check(kura_close(db), "close"))
        return 1;

    if (check(kura_open(dir, &opts, &db), "reopen") ||
        check(kura_tree_open(db, "demo", NULL, &tree), "tree reopen"))
        return 1;
    kura_get_stats(db, &st);
    printf("reopened %s: WAL replayed up to sequence %llu\n", dir,
           (unsigned long long)st.last_sequence);
    void *v;
    size_t vlen;
    if (check(kura_get(tree, NULL, keys[0], strlen(keys[0]), &v, &vlen), "get"))
        return 1;
    printf("get %-28s -> %.*s\n", keys[0], (int)vlen, (char *)v);
    kura_free(v);

    kura_iter *it;
    if (check(kura_iter_new(tree, NULL, &it), "iterator"))
        return 1;
    const char *prefix = "USER#001#";
    printf("scan keys beginning with %s:\n", prefix);
    for (kura_iter_seek(it, prefix, strlen(prefix)); kura_iter_valid(it); kura_iter_next(it)) {
        size_t kl, vl;
        const char *k = kura_iter_key(it, &kl), *val = kura_iter_value(it, &vl);
        if (kl < strlen(prefix) || memcmp(k, prefix, strlen(prefix)) != 0)
            break;
        printf("  %.*s -> %.*s\n", (int)kl, k, (int)vl, val);
    }
    kura_status s = kura_iter_status(it);
    kura_iter_free(it);
    if (check(s, "scan") || check(kura_close(db), "close"))
        return 1;
    printf("closed. The data stays in %s; run again to append to it.\n", dir);
    return 0;
}
