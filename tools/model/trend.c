/*
 * tools/model/trend.c — Mann-Kendall and Theil-Sen (trend.h).
 *
 * The variance of S with ties is Kendall's: [n(n-1)(2n+5) - sum over groups of
 * tied values of t(t-1)(2t+5)] / 18. Ties are common here: a site absent from
 * several snapshots is 0 in each. The normal approximation of S is good from
 * about n = 10; for fewer points it is rough but errs on the side of larger
 * p-values for the small n where it matters (n < 6 cannot reach p < 0.01).
 */
#include "trend.h"

#include "xalloc.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double rp_normal_upper(double z)
{
    return 0.5 * erfc(z / sqrt(2.0));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* sum over groups of tied values of f(t) = t(t-1)(2t+5), and of t(t-1)/2. */
static void ties(const double *y, size_t n, double *var_ties, double *pairs_tied)
{
    double *s = rp_xmalloc(n * sizeof *s);
    memcpy(s, y, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    *var_ties = *pairs_tied = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && s[j] == s[i])
            j++;
        double t = (double)(j - i);
        *var_ties += t * (t - 1) * (2 * t + 5);
        *pairs_tied += t * (t - 1) / 2;
        i = j;
    }
    free(s);
}

void rp_mann_kendall(const double *y, size_t n, struct rp_trend *t)
{
    memset(t, 0, sizeof *t);
    t->p_up = 1;
    if (n < 2)
        return;
    double s = 0;
    for (size_t i = 0; i + 1 < n; i++)
        for (size_t j = i + 1; j < n; j++)
            s += (y[j] > y[i]) - (y[j] < y[i]);
    double nn = (double)n, vt, tied;
    ties(y, n, &vt, &tied);
    double pairs = nn * (nn - 1) / 2;
    t->s = s;
    t->var = (nn * (nn - 1) * (2 * nn + 5) - vt) / 18;
    if (t->var <= 0)
        return;
    t->z = s > 0 ? (s - 1) / sqrt(t->var) : s < 0 ? (s + 1) / sqrt(t->var) : 0;
    t->tau = pairs > tied ? s / sqrt(pairs * (pairs - tied)) : 0;
    t->p_up = rp_normal_upper(t->z);
}

/* The k-th smallest of a[0..n) (0-based), reordering a so that nothing before
 * index k is larger and nothing after it smaller (Wirth's selection). */
static double select_kth(double *a, size_t n, size_t k)
{
    long l = 0, m = (long)n - 1, kk = (long)k;
    while (l < m) {
        double x = a[kk];
        long i = l, j = m;
        do {
            while (a[i] < x)
                i++;
            while (x < a[j])
                j--;
            if (i <= j) {
                double tmp = a[i];
                a[i] = a[j];
                a[j] = tmp;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < kk)
            l = i;
        if (kk < i)
            m = j;
    }
    return a[kk];
}

double rp_theil_sen(const double *x, const double *y, size_t n)
{
    if (n < 2)
        return 0;
    size_t m = 0;
    double *sl = rp_xmalloc(n * (n - 1) / 2 * sizeof *sl);
    for (size_t i = 0; i + 1 < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (x[j] != x[i])
                sl[m++] = (y[j] - y[i]) / (x[j] - x[i]);
    double med = 0;
    if (m) {
        med = select_kth(sl, m, m / 2);
        if (m % 2 == 0) {   /* the mean of the two middle slopes */
            double below = sl[0];
            for (size_t i = 1; i < m / 2; i++)   /* the largest of the lower half */
                below = sl[i] > below ? sl[i] : below;
            med = (med + below) / 2;
        }
    }
    free(sl);
    return med;
}
