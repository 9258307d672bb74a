/*
 * hint.h - query hints sluice reads from a hint comment's text (lexer.h keeps it).
 */
#ifndef SL_SQL_HINT_H
#define SL_SQL_HINT_H

#include <stddef.h>

/*
 * UID('name') in a hint's text[0..len): the name of the statement's operators for their
 * state in checkpoints (DESIGN §7, "A job's identity"). Returns 1 with the name in
 * out[0..cap), 0 when the hint has no UID, -1 with the cause in err[0..errcap) when it is
 * malformed. The name itself is checked by the planner.
 */
int sl_hint_uid(const char *text, size_t len, char *out, size_t cap, char *err, size_t errcap);

#endif
