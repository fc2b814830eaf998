/* decide.c - the final phase's ask and tell (decide.h): the steps in order - the
 * ranking and the final rounds (final.c), more rounds for the guards (more.c), the winner and its ablation or the guard
 * attribution (ablate.c) - and the top list of the result. */
#include <math.h>
#include <string.h>

#include "decide/decide.h"
#include "decide/decide_impl.h"

int decide_next(struct final_state *f, const struct decide_view *v, struct decide_request *req)
{
	for (;;) {
		switch (f->step) {
		case DECIDE_RANK:
			if (decide_final_start(f, v) != 0)
				return -1;
			break;
		case DECIDE_FINAL:
			if (decide_final_next(f, v, req))
				return 1;
			f->step = DECIDE_MORE;
			break;
		case DECIDE_MORE:
			switch (decide_more_next(f, v, req)) {
			case 1:
				return 1;
			case -1:
				return -1;
			default:
				f->step = DECIDE_PICK;
			}
			break;
		case DECIDE_PICK:
			decide_pick(f, v);
			break;
		case DECIDE_DECISIONS:
		case DECIDE_ROUNDS:
			if (decide_ablate_next(f, v, req))
				return 1;
			break;
		case DECIDE_DONE:
		default:
			return 0;
		}
	}
}

void decide_tell(struct final_state *f, const struct decide_view *v, const struct outcome *o)
{
	if (f->step == DECIDE_FINAL)
		decide_final_tell(f, o);
	else if (f->step == DECIDE_MORE)
		decide_more_tell(f, o);
	else if (f->step == DECIDE_DECISIONS || f->step == DECIDE_ROUNDS)
		decide_ablate_tell(f, v, o);
}

/* The clean finalists ranked on their repeats (a stable insertion by mean), then the
 * rest of the search's best in ranked order. */
size_t decide_top(const struct final_state *f, const struct finalist **out, size_t *nfinal)
{
	size_t n = 0;

	for (size_t j = 0; j < f->k && f->rounds; j++) {
		const struct finalist *x = &f->c[j];
		size_t at = n;

		if (!x->qualified)
			continue;
		while (at > 0 && out[at - 1]->mean > x->mean)
			at--;
		memmove(&out[at + 1], &out[at], (n - at) * sizeof *out);
		out[at] = x;
		n++;
	}
	*nfinal = n;
	for (size_t j = f->rounds ? f->k : 0; j < f->nc && n < DECIDE_TOP_MAX; j++)
		out[n++] = &f->c[j];
	return n;
}
