/*
 * src/core/engine.c — the engine table (see engine.h) and the small helpers the
 * entries share. It names no engine: the lifecycle adds the entries.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "core/engine.h"

static const struct rp_engine_entry *g_table[RP_ENGINES_MAX];
static size_t g_n;
static const struct rp_engine_env *_Atomic g_env;

void rp_engines_set_env(const struct rp_engine_env *env)
{
    atomic_store(&g_env, env);
}

void rp_engine_wake(void)
{
    const struct rp_engine_env *env = atomic_load(&g_env);
    if (env)
        env->wake();
}

int rp_engine_call(rp_engine_jvm_fn fn, void *arg, char *err, size_t errlen)
{
    const struct rp_engine_env *env = atomic_load(&g_env);
    if (!env) {
        snprintf(err, errlen, "the agent has not started");
        return -1;
    }
    return env->call(fn, arg, err, errlen);
}

void rp_engines_set(const struct rp_engine_entry *const *e, size_t n)
{
    g_n = n < RP_ENGINES_MAX ? n : RP_ENGINES_MAX;
    for (size_t i = 0; i < g_n; i++)
        g_table[i] = e[i];
}

const struct rp_engine_entry *const *rp_engines(size_t *n)
{
    *n = g_n;
    return g_table;
}

const struct rp_engine_entry *rp_engine_by_kind(unsigned kind)
{
    for (size_t i = 0; i < g_n; i++)
        if (g_table[i]->kind == kind)
            return g_table[i];
    return NULL;
}

uint64_t rp_engine_thread_cpu_ns(pid_t tid)
{
    struct timespec ts;
    clockid_t c = (clockid_t)(((unsigned)~tid << 3) | 6u);   /* threads.h */
    if (tid <= 0 || clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int rp_engine_setting(const struct rp_ctl_setting *set, size_t n, enum rp_ctl_key key,
                      uint64_t *value)
{
    int given = 0;
    for (size_t i = 0; i < n; i++)
        if (set[i].key == key)
            *value = set[i].value, given = 1;
    return given;
}
