/* space_impl.h - the inside of a parsed space, shared by its parser (space.c) and what
 * answers questions about it (space_query.c). Nothing outside tuner/space includes it. */
#ifndef NCCLTUNE_SPACE_IMPL_H
#define NCCLTUNE_SPACE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ncclvars.h"
#include "space/space.h"

#define SPACE_SCHEMA "nccltune-space/1"
#define NAME_MAX_LEN NCCLVARS_NAME_MAX

enum param_kind { KIND_VALUES, KIND_INT, KIND_POW2 };

struct param {
	char name[NAME_MAX_LEN];
	const struct ncclvar *var;
	enum param_kind kind;
	long long lo, hi;          /* KIND_INT / KIND_POW2 as written */
	bool categorical;
	size_t n;
	char **text;               /* per level; NULL = unset */
	double *num;               /* numeric value of ordinal levels; NAN for null */
	double *coord;             /* space_coord */
	enum space_rule_kind rule; /* a per-size dimension (space_rule.c), or NONE */
	uint64_t rule_bytes;
	bool server;               /* a server option (SPACE_SYMMETRIC), never an NCCL variable */
};

enum cons_op { OP_LT, OP_LE, OP_EQ, OP_NE, OP_GE, OP_GT };

struct operand {
	bool is_param;
	size_t dim;
	double num;
};

struct constraint {
	struct operand a, b;
	enum cons_op op;
	char text[160];
};

struct space {
	size_t dims;
	struct param p[SPACE_MAX_DIMS];
	size_t nfixed;
	char **fixed_name, **fixed_value;
	size_t ncons;
	struct constraint *cons;
	bool per_size;             /* an unexpanded per_size block: tmpl[kind] where has */
	bool server;               /* the file has a "server" block (params may be empty) */
	bool has_tmpl[SPACE_RULE_CTAS + 1];
	struct param tmpl[SPACE_RULE_CTAS + 1];
};

/* The dimension named `name` into *dim; 0, or -1 when the space does not search it. */
int space_dim_index(const space *sp, const char *name, size_t *dim);
/* The fixed variable named `name` into *i; 0, or -1 when the space does not fix it. */
int space_fixed_index(const space *sp, const char *name, size_t *i);

#endif
