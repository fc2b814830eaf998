/* ncclvars.h - NCCL's vocabulary, once for the tuner, the probe and the models: the
 * variables nccltune knows (value rule, when NCCL reads each, the role it may play), the
 * word lists (algorithms, protocols, functions, path levels, launch modes, debug levels)
 * in NCCL's own index order, one tokenizer for NCCL's ALGO/PROTO list syntax, the strict
 * value check the tuner applies to anything it may set, and a nearest-name helper for
 * typos. Checked against NCCL 2.28.9 (see ncclvars.c for file:line).
 *
 * Policies stay with their callers: the space, --try, results and exports refuse what
 * ncclvars_check refuses; the probe's envcheck judges a value as NCCL would parse it;
 * the models turn a parsed list into enable tables. No state: every function is pure. */
#ifndef NCCLTUNE_NCCLVARS_H
#define NCCLTUNE_NCCLVARS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NCCLVARS_NAME_MAX 64       /* a name is at most NCCLVARS_NAME_MAX - 1 bytes */
#define NCCLVARS_VALUE_MAX 255     /* a value the tuner sets is at most this many bytes */

/* ---- word lists ---- */

enum ncclvars_wordlist {
	NCCLVARS_ALGOS,          /* Tree Ring CollNetDirect CollNetChain NVLS NVLSTree PAT */
	NCCLVARS_PROTOS,         /* LL LL128 Simple */
	NCCLVARS_FUNCS,          /* Broadcast Reduce AllGather ReduceScatter AllReduce */
	NCCLVARS_PATHS,          /* LOC NVL NVB C2C PIX PXB P2C PXN PHB SYS (case-sensitive) */
	NCCLVARS_LAUNCH_MODES,   /* PARALLEL GROUP */
	NCCLVARS_DEBUG_LEVELS,   /* VERSION WARN INFO ABORT TRACE */
	NCCLVARS_NWORDLISTS
};

/* Indexes as NCCL numbers them (include/plugin/nccl_tuner.h, init.cc:49). */
enum ncclvars_algo {
	NCCLVARS_ALGO_TREE, NCCLVARS_ALGO_RING, NCCLVARS_ALGO_COLLNET_DIRECT,
	NCCLVARS_ALGO_COLLNET_CHAIN, NCCLVARS_ALGO_NVLS, NCCLVARS_ALGO_NVLS_TREE,
	NCCLVARS_ALGO_PAT, NCCLVARS_NALGOS
};
enum ncclvars_proto { NCCLVARS_PROTO_LL, NCCLVARS_PROTO_LL128, NCCLVARS_PROTO_SIMPLE,
	NCCLVARS_NPROTOS };
enum ncclvars_func { NCCLVARS_FUNC_BROADCAST, NCCLVARS_FUNC_REDUCE, NCCLVARS_FUNC_ALLGATHER,
	NCCLVARS_FUNC_REDUCESCATTER, NCCLVARS_FUNC_ALLREDUCE, NCCLVARS_NFUNCS };
/* Path levels, LOC = 0 .. SYS = 9 as in graph/topo.h; legacy numbers map onto them. */
#define NCCLVARS_NPATHS 10
#define NCCLVARS_PATH_LEGACY_MAX 5

/* Number of words in list w (0 for an unknown w). Can't fail. */
size_t ncclvars_word_count(enum ncclvars_wordlist w);

/* Word i of list w in NCCL's spelling ("LL128"), or NULL when out of range. */
const char *ncclvars_word_name(enum ncclvars_wordlist w, size_t i);

/* Index of the first `len` bytes of s in list w, compared as NCCL compares that list
 * (case-insensitively, except path levels), or -1. Can't fail. */
int ncclvars_word_find(enum ncclvars_wordlist w, const char *s, size_t len);

/* What a word of list w is called in messages: "algorithm", "protocol", ... */
const char *ncclvars_word_what(enum ncclvars_wordlist w);

/* The words of w joined with ", " into buf (cut to len). Returns buf. */
char *ncclvars_word_join(enum ncclvars_wordlist w, char *buf, size_t len);

/* The path level a legacy NCCL_P2P_LEVEL number means (paths.cc:216: 0 LOC, 1 PIX,
 * 2 PXB, 3 PHB, 4 and above SYS). `old` must be >= 0. Can't fail. */
int ncclvars_path_legacy(long old);

/* ---- the variables ---- */

enum ncclvars_rule {
	NCCLVARS_RULE_INT,       /* decimal integer in [lo, hi], a multiple of step from lo */
	NCCLVARS_RULE_POW2,      /* a power of two in [lo, hi] */
	NCCLVARS_RULE_BOOL,      /* 0 or 1 */
	NCCLVARS_RULE_WORD,      /* a word of `words` (compared as the list says); when
	                          * legacy_numbers, also an integer in [lo, hi] */
	NCCLVARS_RULE_LIST,      /* an algorithm or protocol list in NCCL's syntax */
	NCCLVARS_RULE_STRING,    /* letters, digits and _.,:;^=+/@%- only */
};

/* When NCCL reads a variable: once per process (cached by NCCL_PARAM or a static, so a
 * new value needs a new process), or again at every communicator init. */
enum ncclvars_when { NCCLVARS_PER_PROCESS, NCCLVARS_PER_COMM_INIT };

enum ncclvars_role {
	NCCLVARS_TUNE,       /* may be searched, tried and exported */
	NCCLVARS_SETTING,    /* a machine or site setting a user may pin; passed to probes,
	                      * never searched */
	NCCLVARS_LOADER,     /* names a library or a file NCCL opens or writes: never searched,
	                      * never exported from a results file */
	NCCLVARS_DEBUG,      /* logging */
};

struct ncclvar {
	const char *name;
	enum ncclvars_rule rule;
	long long lo, hi, step;              /* RULE_INT, RULE_POW2, legacy numbers of a WORD */
	enum ncclvars_wordlist words;        /* RULE_WORD, RULE_LIST */
	bool legacy_numbers;                 /* RULE_WORD: integers in [lo, hi] too */
	enum ncclvars_when when;
	enum ncclvars_role role;
};

/* Number of known variables; ncclvars_at(i) for i below it is never NULL. */
size_t ncclvars_count(void);
const struct ncclvar *ncclvars_at(size_t i);

/* The table entry of `name` (exact, case-sensitive), or NULL when nccltune does not
 * know it. Can't fail. */
const struct ncclvar *ncclvars_find(const char *name);

/* What of NCCL's per-collective decision a variable can change, and nothing else: the
 * algorithm (NCCL_ALGO), the protocol (NCCL_PROTO), the CTA count (the channel and CTA
 * bounds). A variable with none of these bits (threads, buffer sizes, P2P level, ...)
 * has effects a decision does not show. */
enum { NCCLVARS_DECIDES_ALGO = 1, NCCLVARS_DECIDES_PROTO = 2, NCCLVARS_DECIDES_CTAS = 4 };
/* The NCCLVARS_DECIDES_* bits of `name` (0: not decision-only, or unknown; accepts
 * NULL). Can't fail. */
unsigned ncclvars_decides(const char *name);

/* The known variable nearest to `name` within `max_edits` edits (insert, delete,
 * substitute, swap of neighbours), or NULL when none is that close or `name` is itself
 * known. Ties go to the first in table order. Can't fail. */
const struct ncclvar *ncclvars_nearest(const char *name, size_t max_edits);

/* Does `name` look like an NCCL variable: NCCL_ then one or more of [A-Z0-9_], at most
 * NCCLVARS_NAME_MAX - 1 bytes? Returns 0, or -1 with the reason (no name) in why, e.g.
 * "not an NCCL variable (names start with NCCL_)". Accepts NULL (refused). */
int ncclvars_name_check(const char *name, char *why, size_t whylen);

/* The tuner's strict check of a variable name: ncclvars_name_check, and an unknown name
 * within two edits of a known one, or a known one with 1 to 4 characters appended
 * (NCCL_PROTOCOL), is refused as a typo ("unknown NCCL variable (did you
 * mean NCCL_NTHREADS?)"): NCCL silently ignores a misspelt variable. Sets *var to the
 * table entry, or NULL for a plausible unknown name (which gets RULE_STRING). Returns 0
 * or -1 with the reason in why. */
int ncclvars_name_lookup(const char *name, const struct ncclvar **var, char *why,
                         size_t whylen);

/* The tuner's strict check of one value for `var` (NULL: an unknown variable, checked
 * as RULE_STRING): not empty, at most NCCLVARS_VALUE_MAX bytes, printable ASCII, and
 * the variable's rule as NCCL reads it, written the one way that reads the same in
 * Python, shells, env files and systemd (no sign, no leading zero, no hex; lists with
 * nothing NCCL would skip or ignore). Returns 0, or -1 with the reason in why, e.g.
 * "'100' is not a multiple of 32 in [64, 512]". */
int ncclvars_value_check(const struct ncclvar *var, const char *value, char *why,
                         size_t whylen);

/* Why nccltune never searches, tries, pins or exports `name`, or NULL when it may: a
 * loader variable (a library or a file NCCL opens or writes) would let whoever wrote a
 * space, a --try or a results file choose code or files for every NCCL program, and a
 * logging variable changes no measurement. The one message the space reader, --try,
 * the session's environment check and the exports give. NULL for a tuning variable, a
 * site setting and a name nccltune does not know. Can't fail. */
const char *ncclvars_loader_refusal(const char *name);

/* What `name` is when it looks like NCCL's but NCCL never reads it: a label that
 * container images set (NCCL_VERSION=2.28.3-1 in NVIDIA's CUDA and PyTorch images),
 * or NULL for every other name. Such a name is neither searched nor pinned; the
 * session mentions it and lets it pass. Can't fail. */
const char *ncclvars_label(const char *name);

/* ncclvars_name_lookup then ncclvars_value_check: what the space, --try, results and
 * exports accept for NAME=VALUE. Returns 0 or -1 with the reason in why. */
int ncclvars_check(const char *name, const char *value, char *why, size_t whylen);

/* A plain decimal integer, all of s: optional '-', no leading zero, no '+', no spaces,
 * magnitude below 2^53 (so it survives a JSON double). The only integer spelling the
 * tuner writes or accepts. Returns true with *out set, or false. Can't fail. */
bool ncclvars_parse_decimal(const char *s, long long *out);

/* Do two values of `var` name the same setting (words and lists compare as NCCL
 * compares them; NULL means unset)? Can't fail. */
bool ncclvars_same_value(const struct ncclvar *var, const char *a, const char *b);

/* ---- NCCL's list syntax (NCCL_ALGO, NCCL_PROTO) ----
 *
 * graph/tuning.cc parseList: entries separated by ';', each "[function:][^]name[,name]",
 * function and names case-insensitive; only the entry that starts the value may go
 * without a function (it then applies to every function); '^' excludes the names
 * instead of choosing them; a later entry replaces a function's row. NCCL splits with
 * strtok, so it silently skips empty pieces and ignores text after a second ':'. */

enum ncclvars_list_error {
	NCCLVARS_LIST_OK,
	NCCLVARS_LIST_NEEDS_FUNCTION,   /* an entry after the first without "function:" */
	NCCLVARS_LIST_UNKNOWN_FUNCTION, /* "scatter:Ring" */
	NCCLVARS_LIST_UNKNOWN_NAME,     /* "Bogus", "LL128 " */
	NCCLVARS_LIST_NO_NAMES,         /* "allreduce:" first: NCCL reads the function as a name */
	NCCLVARS_LIST_ONLY_COLONS,      /* the first entry is only ':': NCCL 2.28.9 reads through
	                                 * a NULL pointer (tuning.cc:80) */
};

/* What NCCL accepts without a word (bits of ncclvars_list.lint). */
enum ncclvars_list_lint {
	NCCLVARS_LINT_EMPTY = 1,         /* the value has no entry at all: "", ";" */
	NCCLVARS_LINT_EMPTY_ENTRY = 2,   /* an empty entry: ";;", a leading or trailing ';' */
	NCCLVARS_LINT_EMPTY_ITEM = 4,    /* an empty name: "Ring,,Tree", "Ring," */
	NCCLVARS_LINT_NO_NAME = 8,       /* a list of no names: "^" (all), "," (none) */
	NCCLVARS_LINT_STRAY_COLON = 16,  /* ":Ring", "allreduce::ring", "Ring:", and text after a
	                                  * second ':', which NCCL ignores */
	NCCLVARS_LINT_REPEAT = 32,       /* a name twice in one list */
};
#define NCCLVARS_NLINTS 6

/* A function's row after the value: untouched (NCCL's default stays), or the names of
 * `mask` chosen (exclude false) or all but them (exclude true). */
struct ncclvars_list_row { bool set, exclude; uint32_t mask; };

struct ncclvars_span { size_t at, len; };    /* bytes of the value */

struct ncclvars_list {
	enum ncclvars_list_error error;
	struct ncclvars_span where;               /* the bytes at fault (error) */
	unsigned lint;                            /* NCCLVARS_LINT_* bits, up to the error */
	struct ncclvars_span lint_where[NCCLVARS_NLINTS];  /* first of each, by bit number */
	size_t nentries;                          /* entries applied */
	struct ncclvars_list_row row[NCCLVARS_NFUNCS];
};

/* Tokenize `value` as NCCL parses NCCL_ALGO (words NCCLVARS_ALGOS) or NCCL_PROTO
 * (NCCLVARS_PROTOS). Returns 0 when NCCL accepts it (out->lint says what it skipped),
 * or -1 with out->error and out->where set; out->row then holds the entries before
 * the error. Never allocates. */
int ncclvars_list_parse(const char *value, enum ncclvars_wordlist words,
                        struct ncclvars_list *out);

/* The message for l's error or, when there is none, for the earliest lint among
 * `lints` (NCCLVARS_LINT_* bits), in words of list `words`: "unknown protocol 'LL256'
 * (LL, LL128, Simple)", "empty item in list". Writes "" when there
 * is neither. Returns buf. */
char *ncclvars_list_explain(const struct ncclvars_list *l, const char *value,
                            enum ncclvars_wordlist words, unsigned lints, char *buf,
                            size_t len);

#endif
