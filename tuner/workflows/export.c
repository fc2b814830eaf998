/* export.c - the tuned environment as sitecustomize.py, shell exports, an env file, an
 * NCCL configuration file (nccl.conf), JSON or rows for NVIDIA's example tuner plugin; one
 * function per format, over one list of what to set (struct export_plan).
 *
 * What an export sets: best.env (only variables of role `tune` in common/ncclvars) and
 * the variables pinned from the environment the session ran in (role tune or setting),
 * which every format marks "pinned: set when the session ran". Anything else - a loader
 * variable, a logging one, a name nccltune does not know - is refused, naming the key.
 *
 * The text is built in memory and handed over whole, so an error half-way never leaves
 * half an export behind. Every value is written through a quoting function of its format
 * even though the loader already refused anything outside NCCL's syntax: the two checks
 * are independent, and either alone keeps a hostile results.json from becoming code. */
#include "workflows/export.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fsutil.h"
#include "ncclvars.h"
#include "nccltune.h"

const char *const nccltune_export_formats[] = {
	"sitecustomize", "shell", "dotenv", "nccl-conf", "json", "nccl-tuner-csv", NULL
};

const char *nccltune_export_filename(const char *format)
{
	static const char *const files[][2] = {
		{ "sitecustomize", "sitecustomize.py" }, { "shell", "env.sh" },
		{ "dotenv", "nccl.env" }, { "nccl-conf", "nccl.conf" }, { "json", "env.json" },
		{ "nccl-tuner-csv", "tuner.csv" },
	};

	for (size_t i = 0; format && i < sizeof(files) / sizeof(files[0]); i++)
		if (strcmp(files[i][0], format) == 0)
			return files[i][1];
	return NULL;
}

/* ---- comments ---- */

/* Longest comment line we write. NVIDIA's example tuner plugin reads its file with a
 * 256-byte fgets: the rest of a longer '#' line would be parsed as a config row. */
#define COMMENT_MAX 200

/* The first comment line of every export, and the line after the start marker of the
 * blocks: fixed text. Python reads a `coding[:=]` comment on line 1 or 2 of a source file
 * as its encoding (PEP 263); in UTF-7 "+AAo-" is a newline, so data there could become
 * code. Nothing from a results file is ever printed on those two lines. */
#define HEADER_FIRST "NCCL settings from an nccltune session (nccltune export); details below"

/* The comment above pinned variables, in every format. */
#define PINNED_NOTE "pinned: set when the session ran (it measured with them)"

/* Comments are written through a writer that remembers the first refusal, so that a
 * header line carrying a PEP 263 declaration fails the whole export. */
struct cw {
	FILE *out;
	const char *origin;
	char *err;
	size_t errlen;
	int rc;
};

/* Does text declare a source encoding the way PEP 263 reads it ("coding" then ':' or
 * '=', as in "coding: utf-7", "-*- coding=latin-1 -*-", "vim: fileencoding=utf-7")?
 * Compared without case, which refuses more than Python reads. */
static bool declares_coding(const char *text)
{
	for (const char *p = text; *p; p++)
		if (strncasecmp(p, "coding", 6) == 0 && (p[6] == ':' || p[6] == '='))
			return true;
	return false;
}

static void comment(struct cw *w, const char *text)
{
	char clean[COMMENT_MAX + 1];
	size_t n;

	summary_sanitize(text, clean, sizeof(clean));
	/* systemd's EnvironmentFile= parser lets a backslash escape the newline that ends a
	 * comment, which would swallow the next line (a variable) into the comment. */
	for (char *p = clean; *p; p++)
		if (*p == '\\')
			*p = '/';
	n = strlen(clean);
	if (n == COMMENT_MAX && strlen(text) > COMMENT_MAX)
		memcpy(clean + COMMENT_MAX - 3, "...", 3);
	if (w->rc == NCCLTUNE_OK && (declares_coding(clean) || declares_coding(text))) {
		fs_errf(w->err, w->errlen, "%s: the header line '%.60s' declares a source encoding "
		        "('coding:' or 'coding='), which Python obeys in a comment (PEP 263); refused",
		        w->origin, clean);
		w->rc = NCCLTUNE_USAGE;
	}
	fprintf(w->out, "#%s%s\n", *clean ? " " : "", clean);
}

static void commentf(struct cw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void commentf(struct cw *w, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	comment(w, line);
}

/* What every export starts with, after the fixed first line: who tuned what, where, and
 * how well; a model's figures are marked as such, with what to do instead. */
static void header(struct cw *w, const struct summary *s)
{
	char buf[1024];

	commentf(w, "tuned by %s %s on %s", s->tool_name ? s->tool_name : "nccltune",
	         s->tool_version ? s->tool_version : "(version unknown)",
	         s->created ? s->created : "(date unknown)");
	commentf(w, "machine: %s", summary_describe_machine(&s->fp, buf, sizeof(buf)));
	commentf(w, "workload: %s", summary_describe_workload(&s->workload, buf, sizeof(buf)));
	commentf(w, "result: %s", summary_describe_gain(s, buf, sizeof(buf)));
	if (s->model) {
		commentf(w, "source: model (%s) - not a measurement", s->model);
		comment(w, "A machine model's numbers are no reason to set anything in production:");
		comment(w, "on the real machine run nccltune run (no --model) with the same workload,");
		comment(w, "then export or install that session (export --install refuses a model).");
	} else {
		comment(w, "source: measured");
	}
}

/* A writer on out for s, its first lines written (the start marker, the fixed line, the
 * header). */
static struct cw writer(const struct summary *s, FILE *out, char *err, size_t errlen,
                        bool marker)
{
	struct cw w = {out, s->origin, err, errlen, NCCLTUNE_OK};

	if (marker)
		fprintf(out, "%s\n", EXPORT_MARK_BEGIN);
	comment(&w, HEADER_FIRST);
	header(&w, s);
	return w;
}

/* ---- what to set ---- */

enum export_kind { EXPORT_TUNED, EXPORT_PINNED };

struct export_var {
	const char *name, *value;
	enum export_kind kind;
};

/* The variables an export sets, tuned first, then pinned. */
struct export_plan {
	size_t n, ntuned;
	struct export_var v[EXPORT_VARS_MAX];
};

/* Why an export may not set `name` (from best.env when !pinned), or NULL when it may:
 * only variables of role `tune` in common/ncclvars, and site settings that were pinned.
 * A loader variable (a plugin, a file NCCL opens or writes) from a results file would
 * let whoever wrote that file choose code or files for every NCCL program; nccltune's
 * own plugin is set by the export itself, never taken from best.env; a variable nccltune
 * does not know may be a loader of an NCCL version newer than its table. */
static const char *role_refusal(const char *name, bool pinned)
{
	const struct ncclvar *var = ncclvars_find(name);

	if (!var)
		return "not a tuning variable nccltune knows (common/ncclvars.c); an export sets "
		       "only those, since an unknown name may be a loader of a newer NCCL";
	switch (var->role) {
	case NCCLVARS_TUNE:
		return NULL;
	case NCCLVARS_LOADER:
		if (strcmp(name, "NCCL_TUNER_PLUGIN") == 0)
			return "a loader variable: an export sets NCCL_TUNER_PLUGIN only to nccltune's "
			       "own plugin, itself, never from a results file";
		return "a loader variable (it names a library or a file NCCL opens or writes): "
		       "never exported from a results file";
	case NCCLVARS_SETTING:
		return pinned ? NULL
		              : "a site setting, not a tuning variable: exported only as pinned (set "
		                "in the environment the session ran in)";
	default:
		return "a logging variable, not a tuning variable: never exported";
	}
}

/* Add env's variables to the plan as `kind`: the loader's name and value checks again (an
 * export never depends on its caller having used summary_load), the role, and the
 * format's own limits (`safe`, may be NULL). */
static int plan_add(const struct summary *s, const struct summary_env *env, enum export_kind kind,
                    const char *format, bool (*safe)(const char *value, char *why, size_t whylen),
                    struct export_plan *p, char *err, size_t errlen)
{
	const char *key = kind == EXPORT_PINNED ? "pinned" : "best.env";
	char why[256], q[80];

	for (size_t i = 0; i < env->n; i++) {
		const struct summary_var *v = &env->v[i];
		const char *role;

		if (ncclvars_name_check(v->name, why, sizeof(why)) != 0)
			return fs_errf(err, errlen, "%s: %s: '%s': %s", s->origin, key,
			               summary_sanitize(v->name, q, sizeof(q)), why);
		if (!v->value || ncclvars_check(v->name, v->value, why, sizeof(why)) != 0 ||
		    (safe && !safe(v->value, why, sizeof(why))))
			return fs_errf(err, errlen, "%s: %s.%s: value '%s' cannot be written safely as "
			               "%s: %s", s->origin, key, v->name,
			               summary_sanitize(v->value ? v->value : "(unset)", q, sizeof(q)),
			               format, v->value ? why : "no value");
		role = role_refusal(v->name, kind == EXPORT_PINNED);
		if (role)
			return fs_errf(err, errlen, "%s: %s.%s: %s; refused%s", s->origin, key, v->name,
			               role, kind == EXPORT_PINNED ? " (the session ran with it set: "
			               "unset it and tune again, or set it yourself where the program "
			               "runs)" : "");
		for (size_t j = 0; j < p->n; j++)
			if (strcmp(p->v[j].name, v->name) == 0)
				return fs_errf(err, errlen, "%s: %s.%s: set twice (best.env and pinned)",
				               s->origin, key, v->name);
		if (p->n == sizeof(p->v) / sizeof(p->v[0]))
			return fs_errf(err, errlen, "%s: %s: too many variables", s->origin, key);
		p->v[p->n].name = v->name;
		p->v[p->n].value = v->value;
		p->v[p->n++].kind = kind;
	}
	return 0;
}

/* The plan of s in `format`. Returns NCCLTUNE_OK; NCCLTUNE_NO_CONFIG when no
 * configuration worked; NCCLTUNE_USAGE with a message naming the key. */
static int plan_make(const struct summary *s, const char *format,
                     bool (*safe)(const char *value, char *why, size_t whylen),
                     struct export_plan *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (!s->best.present) {
		fs_errf(err, errlen, "%s: no configuration worked in this session (best is null): "
		        "nothing to export", s->origin);
		return NCCLTUNE_NO_CONFIG;
	}
	if (plan_add(s, &s->best.env, EXPORT_TUNED, format, safe, p, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	p->ntuned = p->n;
	if (plan_add(s, &s->pinned, EXPORT_PINNED, format, safe, p, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	return NCCLTUNE_OK;
}

/* Calls line(i) for every variable, the pinned note before the first pinned one. */
static void plan_lines(const struct export_plan *p, struct cw *w,
                       void (*line)(FILE *out, const struct export_var *v), FILE *out)
{
	for (size_t i = 0; i < p->n; i++) {
		if (i == p->ntuned)
			comment(w, PINNED_NOTE);
		line(out, &p->v[i]);
	}
}

/* The comment for a plan with nothing to set. */
static void nothing_to_set(struct cw *w)
{
	comment(w, "NCCL's defaults were the best configuration found: nothing to set.");
}

/* ---- sitecustomize ---- */

/* A Python string literal for any byte string: printable ASCII as is except quote and
 * backslash, everything else as \xNN. */
static void py_literal(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch >= 0x20 && ch < 0x7f)
			fputc(ch, out);
		else
			fprintf(out, "\\x%02x", ch);
	}
	fputc('"', out);
}

static void py_pair(FILE *out, const struct export_var *v)
{
	fputs("        (", out);
	py_literal(out, v->name);
	fputs(", ", out);
	py_literal(out, v->value);
	fputs("),\n", out);
}

/* The pinned note inside the tuple, indented like its items (a comment there is still a
 * comment, and keeps the block one statement). */
static void py_lines(const struct export_plan *p, FILE *out)
{
	for (size_t i = 0; i < p->n; i++) {
		if (i == p->ntuned)
			fputs("        # " PINNED_NOTE "\n", out);
		py_pair(out, &p->v[i]);
	}
}

int export_sitecustomize(const struct summary *s, FILE *out, char *err, size_t errlen)
{
	struct export_plan p;
	struct cw w;
	int rc = plan_make(s, "sitecustomize", NULL, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	w = writer(s, out, err, errlen, true);
	if (p.n == 0) {
		nothing_to_set(&w);
	} else {
		comment(&w, "Sets each variable unless the environment already has it (yours wins);");
		comment(&w, "with NCCLTUNE_OFF=1 in the environment it sets nothing.");
		fputs("import os as _os\n"
		      "if _os.environ.get(\"NCCLTUNE_OFF\") != \"1\":\n"
		      "    for _k, _v in (\n", out);
		py_lines(&p, out);
		fputs("    ):\n"
		      "        if _k not in _os.environ:\n"
		      "            _os.environ[_k] = _v\n", out);
	}
	fprintf(out, "%s\n", EXPORT_MARK_END);
	return w.rc;
}

/* ---- shell ---- */

/* Single quotes make everything literal to sh; a single quote itself becomes '\''. */
static void sh_quote(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
}

/* No control character: sh_quote keeps quotes literal, but no quoting survives a
 * newline pasted into an interactive shell, or a control character in a terminal; and
 * an nccl.conf line ends at a newline. */
static bool no_control(const char *v, char *why, size_t whylen)
{
	for (const char *p = v; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			fs_errf(why, whylen, "control character 0x%02x", (unsigned char)*p);
			return false;
		}
	}
	return true;
}

static void sh_line(FILE *out, const struct export_var *v)
{
	fprintf(out, "export %s=", v->name);
	sh_quote(out, v->value);
	fputc('\n', out);
}

int export_shell(const struct summary *s, FILE *out, char *err, size_t errlen)
{
	struct export_plan p;
	struct cw w;
	int rc = plan_make(s, "shell", no_control, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	w = writer(s, out, err, errlen, false);
	if (p.n == 0) {
		nothing_to_set(&w);
		return w.rc;
	}
	comment(&w, "Source it before starting the program: . ./env.sh (sh, bash, dash, zsh)");
	plan_lines(&p, &w, sh_line, out);
	return w.rc;
}

/* ---- dotenv ---- */

/* docker --env-file takes a value literally to the end of the line; systemd's
 * EnvironmentFile= strips whitespace and interprets quotes and backslashes; env(1) given
 * $(grep -v '^#' FILE) splits words and expands globs. Only a value that means the same
 * to all three can be written, unquoted: no blank, quote, backslash, '$', '#', glob
 * character or control character. */
static bool dotenv_safe(const char *v, char *why, size_t whylen)
{
	for (const char *p = v; *p; p++) {
		if (!(isalnum((unsigned char)*p) || strchr("_.,:;^+=/@%-", *p))) {
			fs_errf(why, whylen, "character 0x%02x would be read differently by docker "
			        "--env-file and systemd EnvironmentFile=", (unsigned char)*p);
			return false;
		}
	}
	return *v != '\0';
}

static void kv_line(FILE *out, const struct export_var *v)
{
	fprintf(out, "%s=%s\n", v->name, v->value);
}

int export_dotenv(const struct summary *s, FILE *out, char *err, size_t errlen)
{
	struct export_plan p;
	struct cw w;
	int rc = plan_make(s, "dotenv", dotenv_safe, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	w = writer(s, out, err, errlen, false);
	comment(&w, "For docker run --env-file FILE, systemd EnvironmentFile=FILE and");
	comment(&w, "env $(grep -v '^#' FILE) PROGRAM; not for a shell's '.' (';' ends a command).");
	if (p.n == 0)
		nothing_to_set(&w);
	plan_lines(&p, &w, kv_line, out);
	return w.rc;
}

/* ---- nccl-conf ---- */

/* NCCL's own configuration file (src/misc/param.cc, setEnvFile, at v2.28.9-1): a line
 * whose first byte is '#' is a comment (an indented '#' is not); a line without '=' is
 * skipped; any other splits at its first '=' into a name and a value taken literally to
 * the end of the line (no quotes, no escapes, no trimming: only the final '\n' is
 * removed, so a '\r' stays in the value), each part cut at 1023 bytes. Each pair is set
 * with setenv(..., 0): the process environment wins over the file, and within a file
 * the first line for a variable wins. */
#define NCCL_CONF_PART_MAX 1023

static bool nccl_conf_safe(const char *v, char *why, size_t whylen)
{
	if (strlen(v) > NCCL_CONF_PART_MAX) {
		fs_errf(why, whylen, "longer than the %d bytes NCCL reads from a line",
		        NCCL_CONF_PART_MAX);
		return false;
	}
	return no_control(v, why, whylen);
}

int export_nccl_conf(const struct summary *s, FILE *out, char *err, size_t errlen)
{
	struct export_plan p;
	struct cw w;
	int rc = plan_make(s, "nccl-conf", nccl_conf_safe, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	w = writer(s, out, err, errlen, true);
	comment(&w, "NCCL reads $NCCL_CONF_FILE (NCCL >= 2.23) or else ~/.nccl.conf, then");
	comment(&w, "/etc/nccl.conf. The environment wins over these files, and in a file the");
	comment(&w, "first line for a variable wins: nccltune export --install checks that.");
	if (p.n == 0)
		nothing_to_set(&w);
	plan_lines(&p, &w, kv_line, out);
	fprintf(out, "%s\n", EXPORT_MARK_END);
	return w.rc;
}

/* ---- json ---- */

/* {"schema": "nccltune-env/1", "source": "measured"|"model", "env": {what to set},
 * "pinned": {set when the session ran}}, written by cJSON. */
int export_json(const struct summary *s, FILE *out, char *err, size_t errlen)
{
	struct export_plan p;
	cJSON *doc = NULL, *env, *pinned;
	char *text = NULL;
	int rc = plan_make(s, "json", NULL, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	rc = NCCLTUNE_ERROR;
	doc = cJSON_CreateObject();
	if (!doc || !cJSON_AddStringToObject(doc, "schema", EXPORT_ENV_SCHEMA) ||
	    !cJSON_AddStringToObject(doc, "source", s->model ? "model" : "measured") ||
	    !(env = cJSON_AddObjectToObject(doc, "env")) ||
	    !(pinned = cJSON_AddObjectToObject(doc, "pinned")))
		goto out;
	for (size_t i = 0; i < p.n; i++)
		if (!cJSON_AddStringToObject(p.v[i].kind == EXPORT_PINNED ? pinned : env, p.v[i].name,
		                             p.v[i].value))
			goto out;
	text = cJSON_Print(doc);
	if (!text || fprintf(out, "%s\n", text) < 0)
		goto out;
	rc = NCCLTUNE_OK;
out:
	if (rc != NCCLTUNE_OK)
		fs_errf(err, errlen, "%s: out of memory writing the json export", s->origin);
	cJSON_free(text);
	cJSON_Delete(doc);
	return rc;
}

/* ---- NVIDIA example tuner plugin CSV ---- */

/* The example plugin's lower-case names, by NCCL's index (common/ncclvars.h); the
 * plugin silently maps an unknown name to ring/simple. */
static const char *const csv_algos[NCCLVARS_NALGOS] = {
	[NCCLVARS_ALGO_TREE] = "tree", [NCCLVARS_ALGO_RING] = "ring",
	[NCCLVARS_ALGO_COLLNET_DIRECT] = "collnet_direct",
	[NCCLVARS_ALGO_COLLNET_CHAIN] = "collnet_chain", [NCCLVARS_ALGO_NVLS] = "nvls",
	[NCCLVARS_ALGO_NVLS_TREE] = "nvls_tree", [NCCLVARS_ALGO_PAT] = "pat",
};
static const char *const csv_protos[NCCLVARS_NPROTOS] = {
	[NCCLVARS_PROTO_LL] = "ll", [NCCLVARS_PROTO_LL128] = "ll128",
	[NCCLVARS_PROTO_SIMPLE] = "simple",
};

/* The plugin's name of `value` when it is one word of list w (compared as NCCL
 * compares it), else NULL: a list or an exclusion cannot be a row. */
static const char *csv_name(const char *value, enum ncclvars_wordlist w,
                            const char *const *names)
{
	int i = value ? ncclvars_word_find(w, value, strlen(value)) : -1;

	return i < 0 ? NULL : names[i];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Which variables a row expresses; the rest are listed for the environment. */
static bool csv_expresses(const char *name)
{
	return strcmp(name, "NCCL_ALGO") == 0 || strcmp(name, "NCCL_PROTO") == 0 ||
	       strcmp(name, "NCCL_MAX_NCHANNELS") == 0;
}

int export_tuner_csv(const struct summary *s, FILE *out, char *err, size_t errlen)
{
	const char *algo_v, *proto_v, *chan_v, *algo, *proto;
	uint64_t sizes[64];
	size_t nsizes = 0;
	long nranks = -1;
	bool rest = false;
	struct export_plan p;
	struct cw w;
	int rc = plan_make(s, "nccl-tuner-csv", NULL, &p, err, errlen);

	if (rc != NCCLTUNE_OK)
		return rc;
	algo_v = summary_env_get(&s->best.env, "NCCL_ALGO");
	proto_v = summary_env_get(&s->best.env, "NCCL_PROTO");
	chan_v = summary_env_get(&s->best.env, "NCCL_MAX_NCHANNELS");
	algo = csv_name(algo_v, NCCLVARS_ALGOS, csv_algos);
	proto = csv_name(proto_v, NCCLVARS_PROTOS, csv_protos);
	w = writer(s, out, err, errlen, false);
	comment(&w, "Rows for NVIDIA's example tuner plugin (NCCL ext-tuner/example):");
	comment(&w, "  NCCL_TUNER_PLUGIN=/path/libnccl-tuner-example.so NCCL_TUNER_CONFIG_FILE=this-file");
	comment(&w, "Columns: collective_type,min_bytes,max_bytes,algorithm,protocol,channels,"
	        "nNodes,nRanks,numPipeOps,regBuff");
	comment(&w, "The plugin sets nChannels=1 before matching, so -1 (\"keep\") means ONE channel;");
	comment(&w, "channels=0 is what leaves NCCL its own channel count. Unmatched calls also get 1.");
	if (s->best.env.n == 0) {
		comment(&w, "NCCL's defaults were the best configuration found: no rows. Do not load");
		comment(&w, "the example plugin for this result: it would cap every collective at 1 channel.");
		return w.rc;
	}
	if (!algo || !proto) {
		/* A row names exactly one algorithm and one protocol; "NCCL decides", a list or
		 * an exclusion cannot be written, and a guessed row would be a config that was
		 * never measured. */
		commentf(&w, "No rows: the tuned configuration has %s=%s and %s=%s,",
		         "NCCL_ALGO", algo_v ? algo_v : "(NCCL's choice)",
		         "NCCL_PROTO", proto_v ? proto_v : "(NCCL's choice)");
		comment(&w, "and a row must name one algorithm and one protocol. Use env.sh or");
		comment(&w, "sitecustomize.py instead, without the example plugin.");
		return w.rc;
	}
	if (s->fp.gpu_count > 0)
		nranks = s->fp.gpu_count;
	else if (s->fp.ngpus > 0)
		nranks = (long)s->fp.ngpus;
	for (size_t i = 0; i < s->workload.n && nsizes < sizeof(sizes) / sizeof(sizes[0]); i++) {
		bool dup = false;

		for (size_t j = 0; j < nsizes; j++)
			if (sizes[j] == s->workload.c[i].bytes)
				dup = true;
		if (!dup)
			sizes[nsizes++] = s->workload.c[i].bytes;
	}
	qsort(sizes, nsizes, sizeof(sizes[0]), cmp_u64);
	commentf(&w, "One row per tuned message size (only measured sizes); nRanks %s.",
	         nranks > 0 ? "= the GPUs of the fingerprint" : "-1 (no fingerprint)");
	if (!chan_v)
		comment(&w, "NCCL_MAX_NCHANNELS was not tuned: channels=0 (NCCL's choice).");
	for (size_t i = 0; i < nsizes; i++)
		fprintf(out, "allreduce,%llu,%llu,%s,%s,%s,1,%ld,-1,-1\n", (unsigned long long)sizes[i],
		        (unsigned long long)sizes[i], algo, proto, chan_v ? chan_v : "0", nranks);
	for (size_t i = 0; i < p.n; i++) {
		if (p.v[i].kind == EXPORT_TUNED && csv_expresses(p.v[i].name))
			continue;
		if (!rest)
			comment(&w, "A tuner plugin cannot set these; put them in the environment as well:");
		rest = true;
		commentf(&w, "  %s=%s%s", p.v[i].name, p.v[i].value,
		         p.v[i].kind == EXPORT_PINNED ? "  (pinned: set when the session ran)" : "");
	}
	return w.rc;
}

/* ---- dispatch ---- */

int export_render(const struct summary *s, const char *format, FILE *out, char *err,
                  size_t errlen)
{
	if (!format)
		format = "";
	if (strcmp(format, "sitecustomize") == 0)
		return export_sitecustomize(s, out, err, errlen);
	if (strcmp(format, "shell") == 0)
		return export_shell(s, out, err, errlen);
	if (strcmp(format, "dotenv") == 0)
		return export_dotenv(s, out, err, errlen);
	if (strcmp(format, "nccl-conf") == 0)
		return export_nccl_conf(s, out, err, errlen);
	if (strcmp(format, "json") == 0)
		return export_json(s, out, err, errlen);
	if (strcmp(format, "nccl-tuner-csv") == 0)
		return export_tuner_csv(s, out, err, errlen);
	fs_errf(err, errlen, "unknown export format '%s' (sitecustomize, shell, dotenv, "
	        "nccl-conf, json, nccl-tuner-csv)", format);
	return NCCLTUNE_USAGE;
}

int export_render_string(const struct summary *s, const char *format, char **text, size_t *len,
                         char *err, size_t errlen)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *mem;
	int rc;

	*text = NULL;
	*len = 0;
	mem = open_memstream(&buf, &n);
	if (!mem) {
		fs_errf(err, errlen, "out of memory rendering the %s export", format ? format : "?");
		return NCCLTUNE_ERROR;
	}
	rc = export_render(s, format, mem, err, errlen);
	if (ferror(mem) && rc == NCCLTUNE_OK) {
		fs_errf(err, errlen, "out of memory rendering the %s export", format);
		rc = NCCLTUNE_ERROR;
	}
	if (fclose(mem) != 0 && rc == NCCLTUNE_OK) {
		fs_errf(err, errlen, "out of memory rendering the %s export", format);
		rc = NCCLTUNE_ERROR;
	}
	if (rc != NCCLTUNE_OK) {
		free(buf);
		return rc;
	}
	*text = buf;
	*len = n;
	return NCCLTUNE_OK;
}

int nccltune_export(const char *path, const char *format, FILE *out, char *err, size_t errlen)
{
	struct summary *s = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (summary_load(path, 0, &s, err, errlen) < 0)
		return NCCLTUNE_USAGE;
	rc = export_render_string(s, format, &text, &len, err, errlen);
	if (rc != NCCLTUNE_OK)
		goto out;
	if (fwrite(text, 1, len, out) != len || fflush(out) != 0) {
		fs_errf(err, errlen, "writing the %s export failed", format);
		rc = NCCLTUNE_ERROR;
	}
out:
	free(text);
	summary_destroy(s);
	return rc;
}
