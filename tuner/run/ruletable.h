/* ruletable.h - a candidate's per-size rules (the space's "rule.<bytes>.*" dimensions) as
 * the table nccltune's tuner plugin reads (plugin/table.h, nccltune-tuner/1), written
 * content-addressed into the session folder, and the environment that makes a probe run
 * load it; and the same rules as results.json's best.rules. */
#ifndef NCCLTUNE_RULETABLE_H
#define NCCLTUNE_RULETABLE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include "space/space.h"

/* The plugin table text of point p (NULL: the baseline): one allreduce rule per size whose
 * algo, proto or ctas level is set (any ranks, any nodes, exactly that size; unset
 * choices are NCCL's). Returns 0 with *text malloc'd (caller frees), or with *text NULL
 * when p sets no rule; -1 with a message when out of memory or a rule breaks the
 * table's limits. */
int ruletable_text(const space *sp, const struct point *p, char **text, char *err,
                   size_t errlen);

/* Write `text` as DIR/tables/<16 hex digits of its FNV-1a 64 hash>.table (the folder made
 * when missing; an existing file with the same bytes is kept, other bytes are replaced
 * atomically) and put its absolute path into path. Returns 0, or -1 with a message naming
 * the file. */
int ruletable_write(const char *dir, const char *text, char *path, size_t pathlen,
                    char *err, size_t errlen);
/* The same for any of the session's content-addressed files: DIR/SUB/<hash>EXT
 * (ruletable_write is SUB "tables", EXT ".table"; sweep files are "sweeps", ".json"). */
int ruletable_write_in(const char *dir, const char *sub, const char *ext, const char *text,
                       char *path, size_t pathlen, char *err, size_t errlen);


/* best.rules of p: [{"bytes", "algo", "proto", "ctas"}] (null = NCCL's) for each size
 * with a rule dimension whose level is set; an empty array when none is. NULL when out
 * of memory. */
cJSON *ruletable_rules_json(const space *sp, const struct point *p);

#endif
