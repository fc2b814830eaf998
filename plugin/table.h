/* table.h - the tuner table (docs/formats.md, "Tuner table, nccltune-tuner/1"): the rules
 * libnccl-tuner-nccltune.so answers NCCL with, a strict parser, the canonical writer, a
 * file loader that refuses anything but a small regular file, and the first-match lookup.
 *
 * Pure C11 and libc, no hidden state: compiled into the plugin (which must link nothing
 * but libc) and into plugin_table_dep, so the tuner writes and re-reads tables with the
 * very code the plugin runs. The numeric codes are NCCL's own (ncclFunc_t, NCCL_ALGO_*,
 * NCCL_PROTO_*, identical in NCCL 2.24 to 2.30), so a rule indexes NCCL's cost table
 * directly. */
#ifndef NCCLTUNE_PLUGIN_TABLE_H
#define NCCLTUNE_PLUGIN_TABLE_H

#include <stddef.h>
#include <stdint.h>

#define TUNER_TABLE_HEADER "nccltune-tuner/1"
#define TUNER_TABLE_MAX_BYTES (1u << 20)     /* whole file, header included */
#define TUNER_TABLE_MAX_LINE 512             /* bytes of one line, without its newline */
#define TUNER_TABLE_MAX_RULES 4096
#define TUNER_TABLE_MAX_CTAS 64
#define TUNER_TABLE_MAX_CHUNK 2147483647ull  /* NCCL keeps a chunk size in an int */
#define TUNER_TABLE_MAX_BYTES_FIELD 9223372036854775807ull  /* 2^63 - 1 */
#define TUNER_ANY (-1)                       /* '*' in nranks, nnodes, algo, proto */

/* ncclFunc_t values of the collectives a table can name (nccl_common.h). */
enum tuner_coll {
	TUNER_COLL_BROADCAST = 0,
	TUNER_COLL_REDUCE = 1,
	TUNER_COLL_ALLGATHER = 2,
	TUNER_COLL_REDUCESCATTER = 3,
	TUNER_COLL_ALLREDUCE = 4,
	TUNER_NCOLLS = 5
};

/* NCCL_ALGO_* (rows of NCCL's cost table). */
enum tuner_algo {
	TUNER_ALGO_TREE = 0,
	TUNER_ALGO_RING = 1,
	TUNER_ALGO_COLLNET_DIRECT = 2,
	TUNER_ALGO_COLLNET_CHAIN = 3,
	TUNER_ALGO_NVLS = 4,
	TUNER_ALGO_NVLS_TREE = 5,
	TUNER_ALGO_PAT = 6,
	TUNER_NALGOS = 7
};

/* NCCL_PROTO_* (columns of NCCL's cost table). */
enum tuner_proto {
	TUNER_PROTO_LL = 0,
	TUNER_PROTO_LL128 = 1,
	TUNER_PROTO_SIMPLE = 2,
	TUNER_NPROTOS = 3
};

/* One line of the table. A collective matches when coll is equal, nranks and nnodes are
 * equal or TUNER_ANY, and min_bytes <= bytes <= max_bytes. */
struct tuner_rule {
	int coll;               /* enum tuner_coll */
	int nranks;             /* 1..INT_MAX, or TUNER_ANY */
	int nnodes;             /* 1..INT_MAX, or TUNER_ANY */
	uint64_t min_bytes;     /* inclusive, <= max_bytes <= 2^63-1 */
	uint64_t max_bytes;     /* inclusive */
	int algo;               /* enum tuner_algo, or TUNER_ANY: NCCL's (or the cheapest with proto) */
	int proto;              /* enum tuner_proto, or TUNER_ANY */
	int ctas;               /* 0: NCCL's; 1..TUNER_TABLE_MAX_CTAS */
	uint64_t chunk;         /* 0: NCCL's; 1..TUNER_TABLE_MAX_CHUNK bytes (NCCL 2.30+ only) */
};

/* Rules in file order. An empty table (nrules 0, rules NULL) is valid and matches nothing. */
struct tuner_table {
	struct tuner_rule *rules;   /* malloc'd; owned by the table */
	size_t nrules;
};

/* Parse `len` bytes of table text (need not be NUL-terminated; a NUL byte inside is an
 * error). Returns 0 with *out filled (free it with tuner_table_free), or -1 with *out
 * empty and err holding "line N: reason" (N counts from 1), or just the reason for an
 * error of the whole input ("larger than 1048576 bytes"). Any error rejects the whole
 * text: there are no partial tables. */
int tuner_table_parse(const char *text, size_t len, struct tuner_table *out, char *err,
                      size_t errlen);

/* Read and parse the table at `path`. Refuses, without blocking, anything that is not a
 * regular file (a folder, a FIFO, a device) and files over TUNER_TABLE_MAX_BYTES; follows
 * symlinks (a loop is an open error). Returns 0 with *out filled, or -1 with *out empty
 * and err holding the reason, which names the path: "PATH: line N: reason" or
 * "PATH: reason". */
int tuner_table_load(const char *path, struct tuner_table *out, char *err, size_t errlen);

/* Check one rule against the format's limits (what the parser enforces). Returns 0, or
 * -1 with the reason in err. */
int tuner_rule_check(const struct tuner_rule *r, char *err, size_t errlen);

/* The canonical text of `t`: the header, a comment naming the columns, one line per rule.
 * Parsing it gives back `t` exactly. Returns a malloc'd NUL-terminated string (caller
 * frees), or NULL with the reason in err when a rule fails tuner_rule_check, there are
 * more than TUNER_TABLE_MAX_RULES rules, or memory runs out. */
char *tuner_table_format(const struct tuner_table *t, char *err, size_t errlen);

/* Index (0-based) of the first rule matching the collective, or -1 when none does (or t
 * is NULL). Can't fail. */
long tuner_table_match(const struct tuner_table *t, int coll, size_t nranks, size_t nnodes,
                       uint64_t bytes);

/* Free the rules and leave *t empty. Accepts NULL and an empty table. */
void tuner_table_free(struct tuner_table *t);

/* The table's words: "allreduce", "ring", "ll128"...; NULL for a value out of range. */
const char *tuner_coll_name(int coll);
const char *tuner_algo_name(int algo);
const char *tuner_proto_name(int proto);

#endif
