/*
 * kura_sql.h - `kura sql` (tools/kura_sql.c): PartiQL statements on a database directory,
 * result items as JSON lines.
 */
#ifndef KURA_TOOLS_KURA_SQL_H
#define KURA_TOOLS_KURA_SQL_H

#include "kura.h"

/* Runs `statement`, or with NULL every statement read from stdin (one per line, or several
 * on a line separated by ';'). Returns the exit status: 0, 1 when a statement failed. */
int kura_sql_run(kura_db *db, const char *statement);

#endif
