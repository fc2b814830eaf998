/* test_ncclvars.c - the one NCCL vocabulary (common/ncclvars): the three policies built on
 * its list tokenizer judged over the same inputs, the tokenizer's rows and lints, the
 * word lists, the name checks, the tuner's strict value rules and the table itself.
 *
 * The policy table is the record of what each caller accepts. `nccl` is NCCL 2.28.9's
 * own verdict (graph/tuning.cc parseList, read by hand); `space` is space_parse (what
 * the tuner may try or export), `probe` is the probe's envcheck_run, `model` is
 * model_env_read (an init failure is a refusal). Any change of any verdict fails. */
#include <stdint.h>
#include <stdlib.h>

#include "../check.h"
#include "envcheck.h"
#include "model.h"
#include "ncclvars.h"
#include "space/space.h"

#define A true    /* accepts */
#define R false   /* refuses */

struct policy_case {
	const char *var, *value;
	bool nccl, space, probe, model;
	const char *why;   /* where the verdicts differ: why */
};

/* Reasons shared by several rows. */
#define SKIPPED "NCCL skips empty pieces; the space refuses what does not read as written"
#define STRAY "NCCL drops a stray ':' or what follows a second one; the space and the probe " \
	"refuse text NCCL would ignore"
#define NOTHING "the space refuses a list that names nothing (leave the variable unset)"

static const struct policy_case cases[] = {
	{"NCCL_ALGO", "Ring", A, A, A, A, NULL},
	{"NCCL_ALGO", "ring", A, A, A, A, NULL},
	{"NCCL_ALGO", "^Tree", A, A, A, A, NULL},
	{"NCCL_ALGO", "Ring,Tree", A, A, A, A, NULL},
	{"NCCL_ALGO", "allreduce:tree;broadcast:ring", A, A, A, A, NULL},
	{"NCCL_ALGO", "tree;allreduce:ring", A, A, A, A, NULL},
	{"NCCL_ALGO", "AllReduce:Ring", A, A, A, A, NULL},
	{"NCCL_ALGO", "ALLREDUCE:RING", A, A, A, A, NULL},
	{"NCCL_ALGO", "allreduce:^ring", A, A, A, A, NULL},
	{"NCCL_ALGO", "collnetdirect,collnetchain", A, A, A, A, NULL},
	{"NCCL_ALGO", "NVLS,NVLSTree,PAT", A, A, A, A, NULL},
	{"NCCL_ALGO", "ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring",
	 A, A, A, A, NULL},
	{"NCCL_ALGO", "broadcast:ring;reduce:ring;allgather:ring;reducescatter:ring;"
	 "allreduce:ring", A, A, A, A, NULL},
	{"NCCL_ALGO", "Ring;allreduce:tree;allreduce:ring", A, A, A, A, NULL},
	/* a repeated name still reads as written */
	{"NCCL_ALGO", "Ring,Ring", A, A, A, A, NULL},
	/* an empty value is set but changes nothing in NCCL */
	{"NCCL_ALGO", "", A, R, A, A, "the space refuses an empty value (null leaves it unset)"},
	{"NCCL_ALGO", ";", A, R, A, A, NOTHING},
	{"NCCL_ALGO", ",", A, R, A, A, NOTHING " (',' disables every algorithm)"},
	{"NCCL_ALGO", "^", A, R, A, A, NOTHING " ('^' excludes nothing)"},
	{"NCCL_ALGO", "allreduce:,", A, R, A, A, NOTHING},
	{"NCCL_ALGO", "allreduce:^", A, R, A, A, NOTHING},
	{"NCCL_ALGO", "Ring;", A, R, A, A, SKIPPED},
	{"NCCL_ALGO", ";allreduce:ring", A, R, A, A, SKIPPED},
	{"NCCL_ALGO", "Ring;;allreduce:tree", A, R, A, A, SKIPPED},
	{"NCCL_ALGO", "Ring,,Tree", A, R, A, A, SKIPPED},
	{"NCCL_ALGO", ",Ring", A, R, A, A, SKIPPED},
	{"NCCL_ALGO", ":Ring", A, R, R, A, STRAY},
	{"NCCL_ALGO", "Ring:", A, R, R, A, STRAY},
	{"NCCL_ALGO", "allreduce::ring", A, R, R, A, STRAY},
	{"NCCL_ALGO", "allreduce:ring:tree", A, R, R, A, STRAY " (here ':tree')"},
	/* the first entry must start the value (fullToken == fullStr): a leading ';' makes
	 * the unprefixed entry a later one (the probe and the model used to accept it) */
	{"NCCL_ALGO", ";Ring", R, R, R, R, NULL},
	{"NCCL_ALGO", "Bogus", R, R, R, R, NULL},
	{"NCCL_ALGO", "Simple", R, R, R, R, NULL},
	{"NCCL_ALGO", "allreduce:", R, R, R, R, NULL},
	{"NCCL_ALGO", "Tree;allreduce:", R, R, R, R, NULL},
	/* NCCL knows five functions; the space used to accept "sendrecv:" */
	{"NCCL_ALGO", "sendrecv:ring", R, R, R, R, NULL},
	{"NCCL_ALGO", "allgatherv:ring", R, R, R, R, NULL},
	{"NCCL_ALGO", "^allreduce:ring", R, R, R, R, NULL},
	{"NCCL_ALGO", "ring;tree", R, R, R, R, NULL},
	{"NCCL_ALGO", "allreduce:tree;ring", R, R, R, R, NULL},
	{"NCCL_ALGO", "Ring,^Tree", R, R, R, R, NULL},
	{"NCCL_ALGO", " Ring", R, R, R, R, NULL},
	{"NCCL_ALGO", "Ring ;allreduce:tree", R, R, R, R, NULL},
	{"NCCL_ALGO", "Ring;:", R, R, R, R, NULL},
	/* NCCL 2.28.9 dereferences NULL on an entry of only ':' (graph/tuning.cc:80); the
	 * model used to read an uninitialised buffer */
	{"NCCL_ALGO", ":", R, R, R, R, NULL},
	{"NCCL_ALGO", "::", R, R, R, R, NULL},
	{"NCCL_ALGO", "Ring\t", R, R, R, R, NULL},
	{"NCCL_PROTO", "LL", A, A, A, A, NULL},
	{"NCCL_PROTO", "ll128", A, A, A, A, NULL},
	{"NCCL_PROTO", "LL,Simple;allreduce:^LL", A, A, A, A, NULL},
	{"NCCL_PROTO", "^LL128;allreduce:LL128", A, A, A, A, NULL},
	{"NCCL_PROTO", "LL,", A, R, A, A, SKIPPED},
	{"NCCL_PROTO", "Bogus", R, R, R, R, NULL},
	{"NCCL_PROTO", "LL128 ", R, R, R, R, NULL},
	{"NCCL_PROTO", "LL256", R, R, R, R, NULL},
	{"NCCL_PROTO", "Ring", R, R, R, R, NULL},
	{"NCCL_PROTO", "LL:Simple", R, R, R, R, NULL},
	{"NCCL_PROTO", "LL;Simple", R, R, R, R, NULL},
};

#define NCASES (sizeof cases / sizeof cases[0])

static bool space_accepts(const char *var, const char *value)
{
	char json[512], esc[256], err[512];
	size_t o = 0;
	space *sp = NULL;

	for (const char *c = value; *c && o + 8 < sizeof esc; c++) {
		if ((unsigned char)*c < 0x20 || *c == '"' || *c == '\\')
			o += (size_t)snprintf(esc + o, sizeof esc - o, "\\u%04x", (unsigned char)*c);
		else
			esc[o++] = *c;
	}
	esc[o] = '\0';
	snprintf(json, sizeof json, "{\"schema\": \"nccltune-space/1\", \"params\": "
	         "{\"%s\": {\"values\": [\"%s\"]}}}", var, esc);
	if (space_parse(json, strlen(json), "t.json", &sp, err, sizeof err) != 0)
		return false;
	space_destroy(sp);
	return true;
}

struct one { const char *name, *value; };

static const char *get_one(const char *name, void *arg)
{
	const struct one *e = arg;

	return strcmp(name, e->name) == 0 ? e->value : NULL;
}

static bool probe_accepts(const char *var, const char *value)
{
	struct one e = {var, value};
	char err[512];

	return envcheck_run(get_one, &e, err, sizeof err) == 0;
}

static bool model_accepts(const char *var, const char *value)
{
	char entry[300];
	char *envp[2] = {entry, NULL};
	struct model_env env;

	snprintf(entry, sizeof entry, "%s=%s", var, value);
	model_env_read(model_getenv_envp, envp, &env);
	return !env.init_failed;
}

static bool nccl_accepts(const char *var, const char *value)
{
	struct ncclvars_list l;

	return ncclvars_list_parse(value, strcmp(var, "NCCL_ALGO") == 0 ? NCCLVARS_ALGOS
	                           : NCCLVARS_PROTOS, &l) == 0;
}

static void verdict(size_t i, const char *who, bool got, bool want)
{
	if (got == want)
		return;
	fprintf(stderr, "%s=\"%s\": %s %s, the table says %s%s%s\n", cases[i].var,
	        cases[i].value, who, got ? "accepts" : "refuses", want ? "accept" : "refuse",
	        cases[i].why ? " - " : "", cases[i].why ? cases[i].why : "");
	CHECK(got == want);
}

static void test_policies(void)
{
	CHECK(NCASES >= 40);
	for (size_t i = 0; i < NCASES; i++) {
		const struct policy_case *c = &cases[i];
		bool differ = c->space != c->nccl || c->probe != c->nccl || c->model != c->nccl;

		verdict(i, "NCCL's tokenizer", nccl_accepts(c->var, c->value), c->nccl);
		verdict(i, "the space", space_accepts(c->var, c->value), c->space);
		verdict(i, "the probe's envcheck", probe_accepts(c->var, c->value), c->probe);
		verdict(i, "the model", model_accepts(c->var, c->value), c->model);
		/* the model is NCCL; a difference anywhere needs its reason in the row */
		CHECK(c->model == c->nccl);
		if (differ && !c->why)
			fprintf(stderr, "row %zu (%s) differs without a reason\n", i, c->value);
		CHECK(!differ || c->why);
	}
}

/* ---- the tokenizer ---- */

static void parse(const char *value, enum ncclvars_wordlist w, struct ncclvars_list *l,
                  int want_rc)
{
	int rc = ncclvars_list_parse(value, w, l);

	if (rc != want_rc)
		fprintf(stderr, "'%s': ncclvars_list_parse %d, want %d\n", value, rc, want_rc);
	CHECK_INT(rc, want_rc);
}

static void test_rows(void)
{
	struct ncclvars_list l;
	const uint32_t ring = 1u << NCCLVARS_ALGO_RING, tree = 1u << NCCLVARS_ALGO_TREE;
	const int ar = NCCLVARS_FUNC_ALLREDUCE, bc = NCCLVARS_FUNC_BROADCAST;

	parse("Ring,tree", NCCLVARS_ALGOS, &l, 0);
	CHECK_INT(l.nentries, 1);
	CHECK_INT(l.lint, 0);
	for (int f = 0; f < NCCLVARS_NFUNCS; f++) {
		CHECK(l.row[f].set && !l.row[f].exclude);
		CHECK_INT(l.row[f].mask, ring | tree);
	}
	parse("^ring;allreduce:tree", NCCLVARS_ALGOS, &l, 0);
	CHECK_INT(l.nentries, 2);
	CHECK(l.row[bc].set && l.row[bc].exclude && l.row[bc].mask == ring);
	CHECK(l.row[ar].set && !l.row[ar].exclude && l.row[ar].mask == tree);
	parse("broadcast:ring", NCCLVARS_ALGOS, &l, 0);
	CHECK(!l.row[ar].set);
	CHECK(l.row[bc].set && l.row[bc].mask == ring);
	parse("LL,Simple;allreduce:^LL", NCCLVARS_PROTOS, &l, 0);
	CHECK_INT(l.row[bc].mask, (1u << NCCLVARS_PROTO_LL) | (1u << NCCLVARS_PROTO_SIMPLE));
	CHECK(l.row[ar].exclude && l.row[ar].mask == 1u << NCCLVARS_PROTO_LL);

	/* lints: which, and where the first of each is */
	parse("", NCCLVARS_ALGOS, &l, 0);
	CHECK_INT(l.lint, NCCLVARS_LINT_EMPTY);
	CHECK_INT(l.nentries, 0);
	parse(";;", NCCLVARS_ALGOS, &l, 0);
	CHECK_INT(l.lint, NCCLVARS_LINT_EMPTY);
	parse("Ring;;allreduce:tree;", NCCLVARS_ALGOS, &l, 0);
	CHECK_INT(l.lint, NCCLVARS_LINT_EMPTY_ENTRY);
	CHECK_INT(l.lint_where[1].at, 5);
	parse("Ring,,Tree", NCCLVARS_ALGOS, &l, 0);
	CHECK_INT(l.lint, NCCLVARS_LINT_EMPTY_ITEM);
	CHECK_INT(l.lint_where[2].at, 5);
	parse("^", NCCLVARS_ALGOS, &l, 0);
	CHECK_INT(l.lint, NCCLVARS_LINT_NO_NAME);
	CHECK(l.row[ar].set && l.row[ar].exclude && l.row[ar].mask == 0);
	parse(",", NCCLVARS_ALGOS, &l, 0);
	CHECK_INT(l.lint, NCCLVARS_LINT_NO_NAME | NCCLVARS_LINT_EMPTY_ITEM);
	CHECK(l.row[ar].set && !l.row[ar].exclude && l.row[ar].mask == 0);
	parse("allreduce:ring:tree", NCCLVARS_ALGOS, &l, 0);
	CHECK_INT(l.lint, NCCLVARS_LINT_STRAY_COLON);
	CHECK_INT(l.lint_where[4].at, 14);
	CHECK_INT(l.lint_where[4].len, 5);
	CHECK_INT(l.row[ar].mask, ring);
	parse(":Ring", NCCLVARS_ALGOS, &l, 0);
	CHECK_INT(l.lint, NCCLVARS_LINT_STRAY_COLON);
	CHECK_INT(l.row[bc].mask, ring);
	parse("Ring,ring", NCCLVARS_ALGOS, &l, 0);
	CHECK_INT(l.lint, NCCLVARS_LINT_REPEAT);
	CHECK_INT(l.lint_where[5].at, 5);

	/* errors: kind and the bytes at fault */
	parse("Ring,Trees", NCCLVARS_ALGOS, &l, -1);
	CHECK_INT(l.error, NCCLVARS_LIST_UNKNOWN_NAME);
	CHECK_INT(l.where.at, 5);
	CHECK_INT(l.where.len, 5);
	parse("ring;allreduce:tree;tree", NCCLVARS_ALGOS, &l, -1);
	CHECK_INT(l.error, NCCLVARS_LIST_NEEDS_FUNCTION);
	CHECK_INT(l.where.at, 20);
	CHECK_INT(l.nentries, 2);          /* the entries before the error were applied */
	parse("scatter:ring", NCCLVARS_ALGOS, &l, -1);
	CHECK_INT(l.error, NCCLVARS_LIST_UNKNOWN_FUNCTION);
	CHECK_INT(l.where.len, 7);
	/* an unknown function is reported before the names (NCCL never reads them) */
	parse("scatter:bogus", NCCLVARS_ALGOS, &l, -1);
	CHECK_INT(l.error, NCCLVARS_LIST_UNKNOWN_FUNCTION);
	parse("allreduce:", NCCLVARS_ALGOS, &l, -1);
	CHECK_INT(l.error, NCCLVARS_LIST_NO_NAMES);
	parse(":", NCCLVARS_PROTOS, &l, -1);
	CHECK_INT(l.error, NCCLVARS_LIST_ONLY_COLONS);
	parse("LL;:", NCCLVARS_PROTOS, &l, -1);
	CHECK_INT(l.error, NCCLVARS_LIST_NEEDS_FUNCTION);
	parse(NULL, NCCLVARS_PROTOS, &l, 0);
	CHECK_INT(l.lint, NCCLVARS_LINT_EMPTY);
}

static const char *explain(const char *value, enum ncclvars_wordlist w, unsigned lints)
{
	static char buf[256];
	struct ncclvars_list l;

	ncclvars_list_parse(value, w, &l);
	return ncclvars_list_explain(&l, value, w, lints, buf, sizeof buf);
}

static void test_explain(void)
{
	const unsigned all = ~0u;

	CHECK_STR(explain("LL,LL256", NCCLVARS_PROTOS, all),
	          "unknown protocol 'LL256' (LL, LL128, Simple)");
	CHECK_STR(explain("Warp", NCCLVARS_ALGOS, all),
	          "unknown algorithm 'Warp' (Tree, Ring, CollNetDirect, CollNetChain, NVLS, "
	          "NVLSTree, PAT)");
	CHECK_STR(explain("scatter:Ring", NCCLVARS_ALGOS, all),
	          "unknown collective 'scatter' (Broadcast, Reduce, AllGather, ReduceScatter, "
	          "AllReduce)");
	CHECK_STR(explain("LL; rm -rf ~", NCCLVARS_PROTOS, all),
	          "entry ' rm -rf ~' after ';' needs a collective prefix (e.g. allreduce:)");
	CHECK_STR(explain("allreduce:", NCCLVARS_ALGOS, all),
	          "'allreduce:' names no algorithm (NCCL would read 'allreduce' as one)");
	CHECK_STR(explain("::", NCCLVARS_ALGOS, all),
	          "entry '::' names neither a collective nor an algorithm (NCCL 2.28 crashes on it)");
	CHECK_STR(explain("", NCCLVARS_ALGOS, all), "no entry at all");
	CHECK_STR(explain("Ring;", NCCLVARS_ALGOS, all), "empty entry");
	CHECK_STR(explain("Ring,", NCCLVARS_ALGOS, all), "empty item in list");
	CHECK_STR(explain("allreduce:^", NCCLVARS_ALGOS, all), "'^' names no algorithm");
	CHECK_STR(explain("LL:Simple:x", NCCLVARS_PROTOS, all),
	          "unknown collective 'LL' (Broadcast, Reduce, AllGather, ReduceScatter, AllReduce)");
	CHECK_STR(explain("allreduce:LL:Simple", NCCLVARS_PROTOS, all),
	          "stray ':Simple' (NCCL skips a ':' next to nothing and ignores what follows a "
	          "second ':')");
	CHECK_STR(explain("LL,ll", NCCLVARS_PROTOS, all), "protocol 'll' named twice");
	/* the earliest lint among those asked for */
	CHECK_STR(explain("LL,LL,;", NCCLVARS_PROTOS, all), "protocol 'LL' named twice");
	CHECK_STR(explain("LL,LL,;", NCCLVARS_PROTOS, ~(unsigned)NCCLVARS_LINT_REPEAT),
	          "empty item in list");
	CHECK_STR(explain("LL", NCCLVARS_PROTOS, all), "");
}

/* ---- word lists ---- */

static void test_words(void)
{
	char buf[160];

	CHECK_INT(ncclvars_word_count(NCCLVARS_ALGOS), 7);
	CHECK_STR(ncclvars_word_name(NCCLVARS_ALGOS, NCCLVARS_ALGO_TREE), "Tree");
	CHECK_STR(ncclvars_word_name(NCCLVARS_ALGOS, NCCLVARS_ALGO_RING), "Ring");
	CHECK_STR(ncclvars_word_name(NCCLVARS_ALGOS, NCCLVARS_ALGO_COLLNET_DIRECT), "CollNetDirect");
	CHECK_STR(ncclvars_word_name(NCCLVARS_ALGOS, NCCLVARS_ALGO_COLLNET_CHAIN), "CollNetChain");
	CHECK_STR(ncclvars_word_name(NCCLVARS_ALGOS, NCCLVARS_ALGO_NVLS), "NVLS");
	CHECK_STR(ncclvars_word_name(NCCLVARS_ALGOS, NCCLVARS_ALGO_NVLS_TREE), "NVLSTree");
	CHECK_STR(ncclvars_word_name(NCCLVARS_ALGOS, NCCLVARS_ALGO_PAT), "PAT");
	CHECK(ncclvars_word_name(NCCLVARS_ALGOS, NCCLVARS_NALGOS) == NULL);
	CHECK_STR(ncclvars_word_name(NCCLVARS_PROTOS, NCCLVARS_PROTO_LL), "LL");
	CHECK_STR(ncclvars_word_name(NCCLVARS_PROTOS, NCCLVARS_PROTO_LL128), "LL128");
	CHECK_STR(ncclvars_word_name(NCCLVARS_PROTOS, NCCLVARS_PROTO_SIMPLE), "Simple");
	CHECK_STR(ncclvars_word_name(NCCLVARS_FUNCS, NCCLVARS_FUNC_ALLREDUCE), "AllReduce");
	CHECK_STR(ncclvars_word_join(NCCLVARS_PATHS, buf, sizeof buf),
	          "LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS");
	CHECK_STR(ncclvars_word_join(NCCLVARS_LAUNCH_MODES, buf, sizeof buf), "PARALLEL, GROUP");
	CHECK_STR(ncclvars_word_join(NCCLVARS_DEBUG_LEVELS, buf, sizeof buf),
	          "VERSION, WARN, INFO, ABORT, TRACE");
	CHECK_STR(ncclvars_word_join(NCCLVARS_PROTOS, buf, 6), "LL, L");
	CHECK_INT(ncclvars_word_find(NCCLVARS_ALGOS, "nvlstree", 8), NCCLVARS_ALGO_NVLS_TREE);
	CHECK_INT(ncclvars_word_find(NCCLVARS_ALGOS, "NVLSTreeX", 4), NCCLVARS_ALGO_NVLS);
	CHECK_INT(ncclvars_word_find(NCCLVARS_PROTOS, "simple", 6), NCCLVARS_PROTO_SIMPLE);
	CHECK_INT(ncclvars_word_find(NCCLVARS_FUNCS, "reducescatter", 13),
	          NCCLVARS_FUNC_REDUCESCATTER);
	CHECK_INT(ncclvars_word_find(NCCLVARS_FUNCS, "sendrecv", 8), -1);
	CHECK_INT(ncclvars_word_find(NCCLVARS_PATHS, "SYS", 3), 9);
	CHECK_INT(ncclvars_word_find(NCCLVARS_PATHS, "sys", 3), -1);   /* case-sensitive */
	CHECK_INT(ncclvars_word_find(NCCLVARS_LAUNCH_MODES, "group", 5), 1);
	CHECK_INT(ncclvars_word_find(NCCLVARS_NWORDLISTS, "LL", 2), -1);
	CHECK_INT(ncclvars_word_count(NCCLVARS_NWORDLISTS), 0);
	CHECK_STR(ncclvars_word_what(NCCLVARS_PATHS), "path level");
	CHECK_INT(ncclvars_path_legacy(0), 0);
	CHECK_INT(ncclvars_path_legacy(1), 4);
	CHECK_INT(ncclvars_path_legacy(2), 5);
	CHECK_INT(ncclvars_path_legacy(3), 8);
	CHECK_INT(ncclvars_path_legacy(4), 9);
	CHECK_INT(ncclvars_path_legacy(99), 9);
}

/* ---- names ---- */

static void test_names(void)
{
	const struct ncclvar *v;
	char why[256];

	CHECK_INT(ncclvars_name_check("NCCL_PROTO", why, sizeof why), 0);
	CHECK_INT(ncclvars_name_check("NCCL_", why, sizeof why), -1);
	CHECK_STR(why, "not an NCCL variable (names start with NCCL_)");
	CHECK_INT(ncclvars_name_check("LD_PRELOAD", why, sizeof why), -1);
	CHECK_INT(ncclvars_name_check(NULL, why, sizeof why), -1);
	CHECK_INT(ncclvars_name_check("NCCL_proto", why, sizeof why), -1);
	CHECK_STR(why, "not an NCCL variable name (A-Z, 0-9 and _ only)");
	CHECK_INT(ncclvars_name_check("NCCL_X=1", why, sizeof why), -1);
	CHECK_INT(ncclvars_name_check("NCCL_X Y", why, sizeof why), -1);
	CHECK_INT(ncclvars_name_check("NCCL_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	                              why, sizeof why), 0);   /* 63 bytes */
	CHECK_INT(ncclvars_name_check("NCCL_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	                              why, sizeof why), -1);  /* 64 */
	CHECK_STR(why, "name longer than 63 characters");

	CHECK(ncclvars_find("NCCL_ALGO") != NULL);
	CHECK(ncclvars_find("nccl_algo") == NULL);
	CHECK(ncclvars_find(NULL) == NULL);
	/* decision-only variables: what of NCCL's per-op choice each can change */
	CHECK_INT((int)ncclvars_decides("NCCL_ALGO"), NCCLVARS_DECIDES_ALGO);
	CHECK_INT((int)ncclvars_decides("NCCL_PROTO"), NCCLVARS_DECIDES_PROTO);
	CHECK_INT((int)ncclvars_decides("NCCL_MAX_NCHANNELS"), NCCLVARS_DECIDES_CTAS);
	CHECK_INT((int)ncclvars_decides("NCCL_MIN_CTAS"), NCCLVARS_DECIDES_CTAS);
	CHECK_INT((int)ncclvars_decides("NCCL_BUFFSIZE"), 0);
	CHECK_INT((int)ncclvars_decides("NCCL_NTHREADS"), 0);
	CHECK_INT((int)ncclvars_decides("NCCL_P2P_LEVEL"), 0);
	CHECK_INT((int)ncclvars_decides(NULL), 0);
	CHECK_STR(ncclvars_nearest("NCCL_NTHREAD", 2)->name, "NCCL_NTHREADS");
	CHECK_STR(ncclvars_nearest("NCCL_PORTO", 2)->name, "NCCL_PROTO");   /* a swap */
	CHECK_STR(ncclvars_nearest("NCCL_BUFSIZE", 2)->name, "NCCL_BUFFSIZE");
	CHECK(ncclvars_nearest("NCCL_PROTO", 2) == NULL);                   /* known */
	CHECK(ncclvars_nearest("NCCL_SOME_NEW_KNOB", 2) == NULL);
	CHECK(ncclvars_nearest("NCCL_NTHRDS", 1) == NULL);

	CHECK_INT(ncclvars_name_lookup("NCCL_SOME_NEW_KNOB", &v, why, sizeof why), 0);
	CHECK(v == NULL);
	CHECK_INT(ncclvars_name_lookup("NCCL_NTHREADS", &v, why, sizeof why), 0);
	CHECK(v && v->rule == NCCLVARS_RULE_INT && v->step == 32);
	CHECK_INT(ncclvars_name_lookup("NCCL_MAX_NCHANNEL", &v, why, sizeof why), -1);
	CHECK_STR(why, "unknown NCCL variable (did you mean NCCL_MAX_NCHANNELS?)");
	CHECK_INT(ncclvars_name_lookup("NCCL_PROTOCOL", &v, why, sizeof why), -1);
	CHECK_STR(why, "unknown NCCL variable (did you mean NCCL_PROTO?)");
	CHECK_INT(ncclvars_name_lookup("NCCL_ALGOS", &v, why, sizeof why), -1);
	CHECK_STR(why, "unknown NCCL variable (did you mean NCCL_ALGO?)");
	CHECK_INT(ncclvars_name_lookup("NCCL_PROTO_EXTRA", &v, why, sizeof why), 0);
	CHECK(v == NULL);   /* more than 4 characters appended: a plausible new variable */
	CHECK_INT(ncclvars_name_lookup("CUDA_VISIBLE_DEVICES", &v, why, sizeof why), -1);
	CHECK_STR(why, "not an NCCL variable (names start with NCCL_)");
}

/* ---- the tuner's strict values ---- */

struct vcase { const char *name, *value, *why; };   /* why NULL: accepted */

static void test_strict(void)
{
	static const struct vcase vc[] = {
		{"NCCL_PROTO", "LL,Simple", NULL},
		{"NCCL_PROTO", "^LL128", NULL},
		{"NCCL_PROTO", "ll128", NULL},
		{"NCCL_ALGO", "NVLSTree", NULL},
		{"NCCL_ALGO", "ring;allreduce:tree", NULL},
		{"NCCL_ALGO", "^", "'^': '^' names no algorithm"},
		{"NCCL_ALGO", "Ring;", "'Ring;': empty entry"},
		{"NCCL_ALGO", "sendrecv:ring", "'sendrecv:ring': unknown collective 'sendrecv' "
		 "(Broadcast, Reduce, AllGather, ReduceScatter, AllReduce)"},
		{"NCCL_P2P_LEVEL", "P2C", NULL},
		{"NCCL_NET_GDR_LEVEL", "PHB", NULL},
		{"NCCL_P2P_LEVEL", "3", NULL},
		{"NCCL_P2P_LEVEL", "6", "'6' is not a path level (LOC, NVL, NVB, C2C, PIX, PXB, "
		 "P2C, PXN, PHB, SYS, or legacy 0..5; case-sensitive)"},
		{"NCCL_P2P_LEVEL", "sys", "'sys' is not a path level (LOC, NVL, NVB, C2C, PIX, PXB, "
		 "P2C, PXN, PHB, SYS, or legacy 0..5; case-sensitive)"},
		{"NCCL_NTHREADS", "512", NULL},
		{"NCCL_NTHREADS", "544", "'544' is not a multiple of 32 in [64, 512]"},
		{"NCCL_NTHREADS", "+64", "'+64' is not a multiple of 32 in [64, 512]"},
		{"NCCL_NTHREADS", "064", "'064' is not a multiple of 32 in [64, 512]"},
		{"NCCL_LL128_NTHREADS", "640", NULL},
		{"NCCL_LL128_NTHREADS", "128", "'128' is not a multiple of 32 in [160, 640]"},
		{"NCCL_MAX_CTAS", "64", NULL},
		{"NCCL_MIN_CTAS", "0", "'0' is not an integer in [1, 64]"},
		{"NCCL_MAX_NCHANNELS", "0x2", "'0x2' is not an integer in [1, 64]"},
		{"NCCL_MAX_NCHANNELS", " 2", "' 2' is not an integer in [1, 64]"},
		{"NCCL_BUFFSIZE", "99999999999999999999", "is not an integer in [1, 1099511627776]"},
		{"NCCL_WORK_FIFO_BYTES", "1048576", NULL},
		{"NCCL_WORK_FIFO_BYTES", "1000000", "'1000000' is not a power of two in [1, "
		 "1073741824]"},
		{"NCCL_WORK_FIFO_BYTES", "2147483648", "is not a power of two"},
		{"NCCL_GRAPH_MIXING_SUPPORT", "1", NULL},
		{"NCCL_CUMEM_ENABLE", "yes", "'yes' is not an integer in [0, 1]"},
		{"NCCL_LAUNCH_MODE", "group", NULL},
		{"NCCL_LAUNCH_MODE", "SERIAL", "'SERIAL' is not one of PARALLEL, GROUP"},
		{"NCCL_DEBUG", "LOUD", "'LOUD' is not one of VERSION, WARN, INFO, ABORT, TRACE"},
		{"NCCL_PROTO", "", "empty value"},
		{"NCCL_PROTO", "LL\nx", "control or non-ASCII character (byte 0x0a) in the value"},
		{"NCCL_PROTO", "LL\xc3\xa9", "control or non-ASCII character (byte 0xc3)"},
		{"NCCL_SOCKET_IFNAME", "=eth0,^docker", NULL},
		{"NCCL_SOCKET_IFNAME", "eth0;rm -rf", "'eth0;rm -rf': character ' ' is not allowed "
		 "(letters, digits and _.,:;^=+/@%- only)"},
		{"NCCL_IB_TC", "106", NULL},
		{"NCCL_SOME_NEW_KNOB", "a$b", "character '$' is not allowed"},
		{"NCCL_MAX_NCHANNEL", "2", "unknown NCCL variable (did you mean NCCL_MAX_NCHANNELS?)"},
	};
	char why[512], big[NCCLVARS_VALUE_MAX + 2];

	for (size_t i = 0; i < sizeof vc / sizeof vc[0]; i++) {
		int rc;

		why[0] = '\0';
		rc = ncclvars_check(vc[i].name, vc[i].value, why, sizeof why);
		if (rc != (vc[i].why ? -1 : 0))
			fprintf(stderr, "%s=%s: rc %d (%s)\n", vc[i].name, vc[i].value, rc, why);
		CHECK_INT(rc, vc[i].why ? -1 : 0);
		if (vc[i].why)
			CHECK_CONTAINS(why, vc[i].why);
	}
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	CHECK_INT(ncclvars_check("NCCL_SOCKET_IFNAME", big, why, sizeof why), -1);
	CHECK_STR(why, "value longer than 255 bytes");
	big[sizeof big - 2] = '\0';
	CHECK_INT(ncclvars_check("NCCL_SOCKET_IFNAME", big, why, sizeof why), 0);
	CHECK_INT(ncclvars_value_check(NULL, "x y", why, sizeof why), -1);

	CHECK(ncclvars_same_value(ncclvars_find("NCCL_PROTO"), "LL", "ll"));
	CHECK(ncclvars_same_value(ncclvars_find("NCCL_LAUNCH_MODE"), "GROUP", "group"));
	CHECK(!ncclvars_same_value(ncclvars_find("NCCL_P2P_LEVEL"), "SYS", "sys"));
	CHECK(!ncclvars_same_value(NULL, "a", "A"));
	CHECK(ncclvars_same_value(NULL, NULL, NULL));
	CHECK(!ncclvars_same_value(NULL, "a", NULL));
}

/* ---- the table ---- */

static void test_table(void)
{
	static const char *const loaders[] = {"NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN",
		"NCCL_PROFILER_PLUGIN", "NCCL_ENV_PLUGIN", "NCCL_TUNER_CONFIG_FILE", "NCCL_DEBUG_FILE",
		"NCCL_TOPO_FILE", "NCCL_GRAPH_FILE", "NCCL_CONF_FILE"};
	static const char *const per_comm[] = {"NCCL_ALGO", "NCCL_PROTO", "NCCL_THREAD_THRESHOLDS",
		"NCCL_LAUNCH_MODE", "NCCL_TUNER_PLUGIN"};
	static const char *const per_process[] = {"NCCL_NTHREADS", "NCCL_LL128_NTHREADS",
		"NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS",
		"NCCL_BUFFSIZE", "NCCL_LL_BUFFSIZE", "NCCL_LL128_BUFFSIZE", "NCCL_P2P_LEVEL",
		"NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_P2P_USE_CUDA_MEMCPY",
		"NCCL_CUMEM_ENABLE", "NCCL_NVLS_ENABLE", "NCCL_GRAPH_MIXING_SUPPORT",
		"NCCL_NET_GDR_LEVEL", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS"};
	char why[256];

	CHECK(ncclvars_count() > 60);
	CHECK(ncclvars_at(ncclvars_count()) == NULL);
	for (size_t i = 0; i < ncclvars_count(); i++) {
		const struct ncclvar *v = ncclvars_at(i);

		CHECK_INT(ncclvars_name_check(v->name, why, sizeof why), 0);
		CHECK(ncclvars_find(v->name) == v);                      /* no name twice */
		if (v->rule == NCCLVARS_RULE_INT || v->rule == NCCLVARS_RULE_POW2)
			CHECK(v->lo <= v->hi && v->step >= 1);
		if (v->rule == NCCLVARS_RULE_LIST)
			CHECK(v->words == NCCLVARS_ALGOS || v->words == NCCLVARS_PROTOS);
		if (v->role == NCCLVARS_LOADER)
			CHECK(v->rule == NCCLVARS_RULE_STRING);
	}
	for (size_t i = 0; i < sizeof loaders / sizeof loaders[0]; i++)
		CHECK(ncclvars_find(loaders[i]) && ncclvars_find(loaders[i])->role == NCCLVARS_LOADER);
	for (size_t i = 0; i < sizeof per_comm / sizeof per_comm[0]; i++)
		CHECK(ncclvars_find(per_comm[i]) &&
		      ncclvars_find(per_comm[i])->when == NCCLVARS_PER_COMM_INIT);
	for (size_t i = 0; i < sizeof per_process / sizeof per_process[0]; i++)
		CHECK(ncclvars_find(per_process[i]) &&
		      ncclvars_find(per_process[i])->when == NCCLVARS_PER_PROCESS);
	CHECK(ncclvars_find("NCCL_DEBUG")->role == NCCLVARS_DEBUG);
	CHECK(ncclvars_find("NCCL_SOCKET_IFNAME")->role == NCCLVARS_SETTING);
	CHECK(ncclvars_find("NCCL_IB_HCA")->role == NCCLVARS_SETTING);
	CHECK(ncclvars_find("NCCL_ALGO")->role == NCCLVARS_TUNE);
	/* every variable the models read is in the table */
	for (size_t i = 0; model_env_var_name(i); i++)
		CHECK(ncclvars_find(model_env_var_name(i)) != NULL);
	CHECK_STR(model_algo_name(MODEL_ALGO_NVLS_TREE), "NVLSTree");
	CHECK_STR(model_proto_name(MODEL_PROTO_LL128), "LL128");
}

int main(void)
{
	test_policies();
	test_rows();
	test_explain();
	test_words();
	test_names();
	test_strict();
	test_table();
	return check_status();
}
