/*
 * io_fault_internal.h - the private state of the fault env, shared by util/io_fault*.c.
 *
 * This file contains the structures behind io_fault.h and the functions its files share:
 *   io_fault.c        lifecycle, rules, crash triggers, counters (the "gate" every op passes)
 *   io_fault_ops.c    the io_ops table and the file operations: gate + base call + bookkeeping
 *   io_fault_ns.c     the namespace operations (rename, unlink, mkdir, rmdir, sync_dir, list)
 *   io_fault_state.c  paths, the node table (what the env knows per file), undo records
 *   io_fault_loss.c   io_fault_power_loss: cutting unsynced tails, undoing namespace changes
 *
 * Everything here is protected by io_fault.mu. The functions below expect it held, except the
 * io_ops entry points (fault_crash_point and the operations of io_fault_ns.c), which take it.
 *
 * A fault_node stands for one file (an inode, not a name): open_write on an existing name
 * truncates the same node, rename moves it, unlink parks it under a hidden name. Nodes are
 * listed in creation order (power loss draws its random cuts in that order) and the visible
 * ones are indexed by path in a hash table.
 */
#ifndef KURA_UTIL_IO_FAULT_INTERNAL_H
#define KURA_UTIL_IO_FAULT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "util/io.h"
#include "util/io_fault.h"
#include "util/thread.h"

#define FAULT_HIDDEN_PREFIX ".iofault."

typedef struct fault_node fault_node;
struct fault_node {
    char *path;        /* where its bytes are now: its visible path, a hidden path (unlinked or
                          replaced, waiting for a power loss to bring it back), or NULL once
                          gone for good */
    bool visible;      /* path is a visible name, indexed in the table */
    bool tracked;      /* created or truncated through the env: len and synced_len are exact */
    bool poisoned;     /* a sync or prealloc failed: synced_len and zeros_end never grow
                          again */
    bool preallocated; /* prealloc reached the base env since it was created or truncated:
                          the file may hold zeros past len */
    io_kind kind;      /* the kind it was last opened with */
    uint64_t len;      /* append position: bytes appended since it was created or truncated */
    uint64_t synced_len; /* [0, synced_len) holds durable appended data */
    uint64_t zeros_end;  /* durable end of preallocated zeros (0: none). Bytes in
                            [len, zeros_end) are zeros; the file is max(len, zeros_end) long */
    int nopen;         /* open fault_files on it; a gone node is freed when this reaches 0 */
    fault_node *hnext; /* hash chain */
    fault_node *prev, *next; /* every node, in creation order */
};

typedef enum fault_rec_type {
    FAULT_REC_CREATE, /* path created (open_write or lock of a new name) */
    FAULT_REC_MKDIR,  /* directory path created */
    FAULT_REC_RENAME, /* from renamed to path; hidden holds what path was before, if anything */
    FAULT_REC_UNLINK, /* path unlinked; the file waits at hidden */
    FAULT_REC_RMDIR   /* empty directory path removed */
} fault_rec_type;

/* A namespace change not yet durable; undone by a power loss, dropped once durable. */
typedef struct fault_rec fault_rec;
struct fault_rec {
    fault_rec_type type;
    char *path;
    char *from;              /* rename source, else NULL */
    char *hidden;            /* see fault_rec_type; else NULL */
    fault_node *hidden_node; /* the node parked at hidden, if the env knew it */
    bool replaced_dir;       /* rename replaced an empty directory */
    char *dirs[2];           /* the directories it changed (dirs[1] NULL if one) */
    bool durable[2];         /* dirs[i] was sync_dir'ed after it */
    fault_rec *prev, *next;
};

/* A file opened through the env. */
typedef struct fault_file fault_file;
struct fault_file {
    io_file base;      /* base.env is the fault env */
    io_file *inner;    /* the base env's file; NULL once its process died (power loss) */
    fault_node *node;  /* NULL once dead */
    fault_file *prev, *next; /* open (not dead) files */
    char path[];       /* normalised path it was opened with, for messages */
};

/* Passages of one crash point. */
typedef struct fault_point {
    char *name;
    uint64_t hits;
} fault_point;

struct io_fault {
    io_env env; /* first, so an io_env * of this env converts back to io_fault * */
    io_env *base;
    kmutex mu;

    fault_node **buckets; /* visible path -> node */
    size_t nbuckets, nnames;
    fault_node *nodes_head, *nodes_tail;
    fault_rec *recs_head, *recs_tail;
    fault_file *files;
    io_file **zombies; /* files closed while crashed, closed underneath at power loss */
    size_t nzombies, zombies_cap;
    uint64_t hidden_seq; /* makes hidden names unique */

    bool has_rule;
    io_fault_rule rule;
    uint64_t matching, injected;

    uint64_t op_counts[IO_OP_COUNT];
    uint64_t mutating;
    fault_point *points;
    size_t npoints;

    char *crash_name; /* armed crash point, or NULL */
    uint64_t crash_nth, crash_seen;
    io_crash_action crash_action;
    uint64_t crash_op_nth, crash_op_seen; /* crash_op_nth 0 = not armed */
    io_crash_action crash_op_action;
    bool crashed;
    char crash_reason[200];
};

static inline io_fault *fault_of(io_env *env)
{
    return (io_fault *)env;
}

/* ---- io_fault.c ---- */

/* Every operation passes here first. Refuses it if the env is crashed, counts it, triggers a
 * crash_at_op crash, applies the rule. Returns KURA_OK to go on; otherwise the status to return
 * (message set), and *inject_out is the injected error (0 if not injected). */
kura_status fault_gate(io_fault *f, io_op op, io_kind kind, bool mutating, const char *what,
                       const char *path, int *inject_out);
/* The error for an operation refused because the env is crashed. */
kura_status fault_crashed_err(io_fault *f, const char *what, const char *path);
/* The crash_point operation of the env (see io.h); takes mu itself. */
kura_status fault_crash_point(io_env *env, const char *name);
/* The reboot of a power loss forgets the rule, armed crashes and the crashed state; counts
 * survive. */
void fault_reset_after_loss(io_fault *f);

/* ---- io_fault_state.c ---- */

/* Normalised copy of path (malloc'ed), or NULL when out of memory. */
char *fault_norm(const char *path);
/* The directory of a normalised path (malloc'ed), or NULL when out of memory. */
char *fault_dirname(const char *path);
/* Whether path is dir or lies below it. */
bool fault_under(const char *path, const char *dir);
/* Whether a directory entry name is one of the env's hidden files. */
bool fault_is_hidden_name(const char *name);
/* A fresh hidden path next to path (malloc'ed), or NULL when out of memory. */
char *fault_hidden_path(io_fault *f, const char *path);

fault_node *fault_lookup(io_fault *f, const char *path);
/* The node at visible path, created (untracked) if unknown. NULL when out of memory. */
fault_node *fault_node_at(io_fault *f, const char *path, io_kind kind);
/* Removes a visible node from the table (it keeps its path). */
void fault_unname(io_fault *f, fault_node *n);
/* Makes n visible at path, taking ownership of path. path NULL (a failed strdup) returns false
 * and leaves n unnamed with its old path. */
bool fault_name(io_fault *f, fault_node *n, char *path);
/* n is gone for good; frees it unless files are still open on it. */
void fault_node_gone(io_fault *f, fault_node *n);
/* Rewrites the paths of visible nodes below directory `from` to lie below `to`. */
bool fault_move_tree(io_fault *f, const char *from, const char *to);

/* Appends a record; takes ownership of path, from and hidden (freed on failure). */
kura_status fault_rec_add(io_fault *f, fault_rec_type type, char *path, char *from,
                          char *hidden, fault_node *hidden_node);
/* sync_dir(dir) succeeded: marks records durable, finalizes the fully durable ones. */
void fault_recs_synced(io_fault *f, const char *dir);
/* Finalizes every record touching a directory at or below dir. */
void fault_recs_settle_under(io_fault *f, const char *dir);
/* Finalizes every record (io_fault_free). */
void fault_recs_settle_all(io_fault *f);
/* Frees every record, node and the table without touching the disk. */
void fault_state_forget(io_fault *f);

/* ---- io_fault_ops.c ---- */

extern const io_ops fault_ops;
/* Closes every open file underneath and marks it dead; closes the zombies. */
void fault_files_kill(io_fault *f);

/* ---- io_fault_ns.c: the namespace operations of the env (they take mu themselves) ---- */

kura_status fault_rename(io_env *env, const char *from, const char *to);
kura_status fault_unlink(io_env *env, const char *path);
kura_status fault_mkdir(io_env *env, const char *path);
kura_status fault_rmdir(io_env *env, const char *path);
kura_status fault_sync_dir(io_env *env, const char *path);
kura_status fault_list_dir(io_env *env, const char *path, char ***names_out, size_t *n_out);
/* Whether path is a directory of the base env. */
bool fault_is_dir(io_env *base, const char *path);
/* Copies file src to a new file dst through the base env (no sync). */
kura_status fault_copy_file(io_env *base, const char *src, const char *dst);
/* Removes path and, if it is a directory, everything below it, through the base env. */
kura_status fault_remove_tree(io_env *base, const char *path);

#endif
