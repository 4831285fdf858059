/*
 * tools/model/trend.h — the statistics of `ringprof leaks`: is a series of live bytes
 * growing, and how fast?
 *
 * Mann-Kendall is a rank test: it asks only whether later values tend to be
 * larger than earlier ones, so one huge snapshot (a burst of garbage that a GC
 * then takes) moves it no more than a small one, and it needs no assumption on
 * the shape of the growth. Theil-Sen estimates the slope as the median of the
 * slopes between every pair of points, so up to 29% of the points can be wild
 * without moving it. Both are O(n^2) in the number of points: the caller keeps n
 * small (cmd_leaks bins the snapshots to at most RP_TREND_MAX_POINTS).
 *
 * Pure functions, thread-safe; rp_theil_sen allocates its scratch space.
 */
#ifndef RINGPROF_TOOLS_TREND_H
#define RINGPROF_TOOLS_TREND_H

#include <stddef.h>

#define RP_TREND_MAX_POINTS 256

struct rp_trend {
    double s;        /* Kendall's S: pairs rising minus pairs falling           */
    double var;      /* the variance of S when there is no trend, ties included */
    double z;        /* (S - sign(S)) / sqrt(var): continuity-corrected          */
    double tau;      /* Kendall's tau-b, -1..1: S over the pairs not tied        */
    double p_up;     /* one-sided p-value of "increasing": P(Z >= z)             */
};

/* Mann-Kendall on y[0..n) taken at increasing times (n >= 2). A series with
 * every value tied has var 0, tau 0 and p_up 1. */
void rp_mann_kendall(const double *y, size_t n, struct rp_trend *t);

/* The Theil-Sen slope of the points (x[i], y[i]), x strictly increasing: the
 * median of (y[j] - y[i]) / (x[j] - x[i]) over i < j. 0 when n < 2. */
double rp_theil_sen(const double *x, const double *y, size_t n);

/* P(Z >= z) for a standard normal Z. */
double rp_normal_upper(double z);

#endif
