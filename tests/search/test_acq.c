/* test_acq.c - expected improvement against the closed form by hand, and log-EI
 * against 50-digit reference values (mpmath) deep in the tail where EI underflows. */
#include "../check.h"
#include "search/acq.h"

int main(void)
{
	/* mu 1, sigma 2, best 0.5: z = -0.25,
	 * EI = -0.5 Phi(-0.25) + 2 phi(0.25) = -0.5 * 0.401293674 + 2 * 0.386668117 */
	CHECK_NEAR(acq_ei(1, 2, 0.5), 0.57268939644716, 1e-13);
	CHECK_NEAR(acq_ei(1, 2, 0.5), -0.5 * 0.4012936743170763 + 2 * 0.3866681168028493, 1e-13);
	CHECK_NEAR(acq_log_ei(1, 2, 0.5), -0.55741177477527713341, 1e-13);
	/* mu = best: sigma phi(0) */
	CHECK_NEAR(acq_ei(0, 1, 0), 0.398942280401433, 1e-14);
	/* no uncertainty: plain improvement */
	CHECK_NEAR(acq_ei(1, 0, 3), 2, 0);
	CHECK_NEAR(acq_ei(3, 0, 1), 0, 0);
	CHECK_NEAR(acq_log_ei(1, 0, 3), log(2), 1e-15);
	CHECK(isinf(acq_log_ei(3, 0, 1)) && acq_log_ei(3, 0, 1) < 0);
	/* log EI where EI underflows; both branches of the tail and their seam at 25 */
	CHECK_NEAR(acq_log_ei(0, 1, 2), 0.69738354578822831219, 1e-13);
	CHECK_NEAR(acq_log_ei(0, 1, 0), -0.91893853320467274178, 1e-13);
	CHECK_NEAR(acq_log_ei(0, 1, -3), -7.8696860596030285171, 1e-12);
	CHECK_NEAR(acq_log_ei(0, 1, -10), -55.553122036122355927, 1e-10);
	CHECK_NEAR(acq_log_ei(0, 1, -25), -319.86146358149595433, 1e-9);
	CHECK_NEAR(acq_log_ei(0, 1, -26), -345.43954672231803297, 1e-9);
	CHECK_NEAR(acq_log_ei(0, 1, -40), -808.29856835661996024, 1e-9);
	CHECK(acq_ei(0, 1, -40) == 0);
	CHECK(isfinite(acq_log_ei(0, 1, -1e6)));
	/* log EI agrees with log(EI) where both are representable */
	for (double b = -8; b <= 3; b += 0.25)
		CHECK_NEAR(acq_log_ei(0.3, 0.7, b), log(acq_ei(0.3, 0.7, b)), 1e-9);
	/* monotone in sigma and in best */
	CHECK(acq_log_ei(0, 2, -1) > acq_log_ei(0, 1, -1));
	CHECK(acq_log_ei(0, 1, -1) > acq_log_ei(0, 1, -2));
	/* feasibility weighting: log EI + log p, p floored */
	CHECK_NEAR(acq_score(1, 2, 0.5, 0.25), log(0.57268939644716 * 0.25), 1e-12);
	CHECK_NEAR(acq_score(1, 2, 0.5, 0), acq_log_ei(1, 2, 0.5) + log(1e-12), 1e-12);
	return check_status();
}
