/*
 * tests/convert/test_trend.c — the statistics of `ringprof leaks` (tools/model/trend.c)
 * on series whose answers are known by hand:
 *   - a rising series of 10: S = 45 (every pair rises), tau 1, var 125, z = 44 /
 *     sqrt(125), p = 4.16e-5; the same falling: p near 1;
 *   - ties: Kendall's variance correction and tau-b (values from the formula);
 *   - a constant series: no trend, p 1, and no division by zero;
 *   - Theil-Sen: the exact slope of a line, unmoved by outliers up to 29% of
 *     the points, the mean of the two middle slopes for an even count;
 *   - the normal tail at known points.
 */
#include <math.h>
#include <stddef.h>

#include "check.h"
#include "trend.h"

static int near(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

static void test_rising_and_falling(void)
{
    double up[10], down[10];
    for (int i = 0; i < 10; i++) {
        up[i] = i * 3.0 + 1;
        down[i] = -up[i];
    }
    struct rp_trend t;
    rp_mann_kendall(up, 10, &t);
    CHECK(t.s == 45 && t.var == 125 && t.tau == 1, "S %g var %g tau %g", t.s, t.var, t.tau);
    CHECK(near(t.z, 44 / sqrt(125), 1e-12), "z %g", t.z);
    CHECK(near(t.p_up, 4.161e-5, 1e-7), "p %g", t.p_up);
    rp_mann_kendall(down, 10, &t);
    CHECK(t.s == -45 && t.tau == -1 && t.p_up > 0.9999, "falling: S %g p %g", t.s, t.p_up);
}

static void test_ties(void)
{
    /* 0 0 0 1 1 2: S = 3*2 + 3*1 + 2*1 = 11; tie groups of 3 and 2. */
    const double y[] = {0, 0, 0, 1, 1, 2};
    struct rp_trend t;
    rp_mann_kendall(y, 6, &t);
    double var = (6.0 * 5 * 17 - 3.0 * 2 * 11 - 2.0 * 1 * 9) / 18;
    double pairs = 15, tied = 3 + 1;
    CHECK(t.s == 11 && near(t.var, var, 1e-12), "S %g var %g (want %g)", t.s, t.var, var);
    CHECK(near(t.tau, 11 / sqrt(pairs * (pairs - tied)), 1e-12), "tau-b %g", t.tau);
    CHECK(near(t.p_up, rp_normal_upper(10 / sqrt(var)), 1e-12), "p %g", t.p_up);
    const double flat[] = {5, 5, 5, 5};
    rp_mann_kendall(flat, 4, &t);
    CHECK(t.s == 0 && t.var == 0 && t.tau == 0 && t.p_up == 1, "constant: p %g", t.p_up);
    rp_mann_kendall(flat, 1, &t);
    CHECK(t.p_up == 1, "one point: p %g", t.p_up);
}

static void test_theil_sen(void)
{
    double x[14], y[14];
    for (int i = 0; i < 14; i++) {
        x[i] = i * 0.5;
        y[i] = 7 - 2.5 * x[i];
    }
    CHECK(near(rp_theil_sen(x, y, 14), -2.5, 1e-12), "a line: %g", rp_theil_sen(x, y, 14));
    y[3] = 1e9;   /* 4 wild points of 14: 29% */
    y[7] = -1e9;
    y[10] = 5e8;
    y[12] = 0;
    CHECK(near(rp_theil_sen(x, y, 14), -2.5, 0.6), "with outliers: %g",
          rp_theil_sen(x, y, 14));
    /* 3 points, y = 0, 1, 4: slopes 1, 2, 3: the middle one. */
    const double x3[] = {0, 1, 2}, y3[] = {0, 1, 4};
    CHECK(near(rp_theil_sen(x3, y3, 3), 2, 1e-12), "odd count: %g", rp_theil_sen(x3, y3, 3));
    /* 4 points, y = 0, 1, 2, 8: slopes 1, 1, 8/3, 1, 7/2, 6, sorted 1, 1, 1, 8/3,
     * 7/2, 6: the mean of the middle two. */
    const double x4[] = {0, 1, 2, 3}, y4[] = {0, 1, 2, 8};
    CHECK(near(rp_theil_sen(x4, y4, 4), (1 + 8.0 / 3) / 2, 1e-12), "even count: %g",
          rp_theil_sen(x4, y4, 4));
    CHECK(rp_theil_sen(x4, y4, 1) == 0, "one point: 0");
}

static void test_normal(void)
{
    CHECK(near(rp_normal_upper(0), 0.5, 1e-15), "P(Z>=0)");
    CHECK(near(rp_normal_upper(1.959963985), 0.025, 1e-9), "P(Z>=1.96)");
    CHECK(near(rp_normal_upper(-2.326347874), 0.99, 1e-9), "P(Z>=-2.33)");
}

int main(void)
{
    test_rising_and_falling();
    test_ties();
    test_theil_sen();
    test_normal();
    return check_exit("trend");
}
