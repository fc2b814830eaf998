/* envcheck.c - early checks of NCCL variables (see envcheck.h). The grammar of
 * NCCL_ALGO / NCCL_PROTO follows NCCL's own parser (src/graph/tuning.cc, parseList):
 * ';'-separated entries, each "[function:][^]name[,name...]", names and functions
 * case-insensitive, every entry after the first with a function. */
#include "envcheck.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const algos[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                    "NVLSTree", "PAT", NULL};
static const char *const protos[] = {"LL", "LL128", "Simple", NULL};
static const char *const funcs[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                    "AllReduce", NULL};
/* Case-sensitive in NCCL (src/graph/paths.cc); numbers 0..5 are the legacy form. */
static const char *const p2p_levels[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C",
                                         "PXN", "PHB", "SYS", NULL};
/* Integer knobs a tuner sets; NCCL reads them with strtoll and falls back to its
 * default, with only a warning, when the text is not a number. */
static const char *const integers[] = {
	"NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS",
	"NCCL_NTHREADS", "NCCL_LL128_NTHREADS", "NCCL_BUFFSIZE", "NCCL_LL_BUFFSIZE",
	"NCCL_LL128_BUFFSIZE", "NCCL_NVLS_ENABLE", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE",
	"NCCL_P2P_USE_CUDA_MEMCPY", "NCCL_CUMEM_ENABLE", "NCCL_GRAPH_MIXING_SUPPORT",
	NULL,
};

static bool in(const char *const *names, const char *s, size_t len, bool nocase)
{
	for (size_t i = 0; names[i]; i++)
		if (strlen(names[i]) == len &&
		    (nocase ? strncasecmp(names[i], s, len) : strncmp(names[i], s, len)) == 0)
			return true;
	return false;
}

static void join(const char *const *names, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; names[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
}

/* One NCCL_ALGO / NCCL_PROTO value. */
static int check_list(const char *var, const char *value, const char *const *names,
                      const char *what, char *err, size_t errlen)
{
	const char *entry = value;
	bool first = true;
	char accepted[160];

	join(names, accepted, sizeof accepted);
	while (*entry) {
		size_t elen = strcspn(entry, ";");
		const char *colon = memchr(entry, ':', elen), *list = entry, *p;
		size_t llen = elen;

		if (elen == 0) {            /* NCCL's strtok skips empty entries */
			entry++;
			continue;
		}
		if (colon) {
			if (!in(funcs, entry, (size_t)(colon - entry), true)) {
				snprintf(err, errlen, "%s=%s: '%.*s' is not a collective (Broadcast, Reduce, "
				         "AllGather, ReduceScatter, AllReduce)", var, value,
				         (int)(colon - entry), entry);
				return -1;
			}
			list = colon + 1;
			llen = elen - (size_t)(list - entry);
		} else if (!first) {
			snprintf(err, errlen, "%s=%s: every entry after the first needs a collective "
			         "prefix ('allreduce:...')", var, value);
			return -1;
		}
		if (llen > 0 && *list == '^') {
			list++;
			llen--;
		}
		p = list;
		while (p < list + llen) {
			size_t n = strcspn(p, ",;");

			if (n > (size_t)(list + llen - p))
				n = (size_t)(list + llen - p);
			if (n > 0 && !in(names, p, n, true)) {
				snprintf(err, errlen, "%s=%s: '%.*s' is not %s NCCL 2.28 knows (%s; "
				         "--no-env-check skips this check)", var, value, (int)n, p, what,
				         accepted);
				return -1;
			}
			p += n + 1;
		}
		first = false;
		entry += elen;
		if (*entry == ';')
			entry++;
	}
	return 0;
}

static bool is_integer(const char *s)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	(void)strtoll(s, &end, 0);
	return errno == 0 && *end == '\0';
}

const char *envcheck_getenv(const char *name, void *arg)
{
	(void)arg;
	return getenv(name);
}

int envcheck_run(envcheck_get_fn get, void *arg, char *err, size_t errlen)
{
	const char *v;
	char accepted[160];

	v = get("NCCL_ALGO", arg);
	if (v && check_list("NCCL_ALGO", v, algos, "an algorithm", err, errlen) != 0)
		return -1;
	v = get("NCCL_PROTO", arg);
	if (v && check_list("NCCL_PROTO", v, protos, "a protocol", err, errlen) != 0)
		return -1;
	for (size_t i = 0; integers[i]; i++) {
		v = get(integers[i], arg);
		if (v && !is_integer(v)) {
			snprintf(err, errlen, "%s=%s: not an integer (NCCL would silently use its "
			         "default)", integers[i], v);
			return -1;
		}
	}
	v = get("NCCL_P2P_LEVEL", arg);
	if (v && !in(p2p_levels, v, strlen(v), false) &&
	    !(strlen(v) == 1 && v[0] >= '0' && v[0] <= '5')) {
		join(p2p_levels, accepted, sizeof accepted);
		snprintf(err, errlen, "NCCL_P2P_LEVEL=%s: not one of %s (case-sensitive) or 0..5",
		         v, accepted);
		return -1;
	}
	return 0;
}
