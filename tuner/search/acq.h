/* acq.h - acquisition functions for the bo strategy (private to tuner/): expected
 * improvement for minimisation, in plain and logarithmic form, and the feasibility-
 * weighted score bo maximises. */
#ifndef NCCLTUNE_ACQ_H
#define NCCLTUNE_ACQ_H

/* Expected improvement below `best` of a normal N(mu, sigma^2):
 * (best - mu) Phi(z) + sigma phi(z), z = (best - mu) / sigma; max(best - mu, 0) when
 * sigma <= 0. Can't fail. */
double acq_ei(double mu, double sigma, double best);

/* log of acq_ei, accurate where acq_ei underflows (z down to about -1e150): uses
 * log(sigma) + log(phi(z)) + log(1 - |z| R(|z|)) for z < 0, R the Mills ratio, with
 * its asymptotic series for |z| > 25. -INFINITY when sigma <= 0 and mu >= best. */
double acq_log_ei(double mu, double sigma, double best);

/* What bo maximises: log EI + log feasibility (feasibility floored at 1e-12). */
double acq_score(double mu, double sigma, double best, double feasibility);

#endif
