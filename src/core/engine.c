/*
 * src/core/engine.c — the engine table (see engine.h) and the small helpers the
 * entries share. It names no engine: the lifecycle adds the entries.
 */
#include <stdatomic.h>
#include <stdint.h>
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

/* The switch of an RP_ENGINE_SWITCH_ATTACHED entry, on the attached thread: the
 * entry is static data, so a call that timed out may still run it. */
static int switch_on(void *e, char *err, size_t errlen)
{
    return ((const struct rp_engine_entry *)e)->switch_kind(1, err, errlen);
}

static int switch_off(void *e, char *err, size_t errlen)
{
    return ((const struct rp_engine_entry *)e)->switch_kind(0, err, errlen);
}

int rp_engine_switch(const struct rp_engine_entry *e, int on, char *err, size_t errlen)
{
    if (!(e->flags & RP_ENGINE_SWITCH_ATTACHED))
        return e->switch_kind(on, err, errlen);
    return rp_engine_call(on ? switch_on : switch_off, (void *)(uintptr_t)e, err, errlen);
}

/* The value of `key` among set[0..n) into *value. @return 1 if given. */
static int given(const struct rp_ctl_setting *set, size_t n, enum rp_ctl_key key,
                 uint64_t *value)
{
    for (size_t i = 0; i < n; i++)
        if (set[i].key == key) {
            *value = set[i].value;
            return 1;
        }
    return 0;
}

int rp_engine_apply(const struct rp_engine_entry *e, const struct rp_ctl_setting *set,
                    size_t n, struct rp_engine_saved *saved, char *err, size_t errlen)
{
    *saved = (struct rp_engine_saved){{0}, {0}};
    for (int i = 0; i < RP_ENGINE_SETTINGS_MAX && e->settings[i].key; i++) {
        const struct rp_engine_setting *st = &e->settings[i];
        uint64_t v = st->get();
        if (!given(set, n, st->key, &v) && !st->always)
            continue;
        saved->v[i] = st->get();
        if (st->set(v, err, errlen) != 0) {
            rp_engine_restore(e, saved);
            return -1;
        }
        saved->applied[i] = 1;
    }
    return 0;
}

void rp_engine_restore(const struct rp_engine_entry *e, const struct rp_engine_saved *saved)
{
    char err[256];
    for (int i = RP_ENGINE_SETTINGS_MAX - 1; i >= 0; i--)
        if (saved->applied[i])
            e->settings[i].set(saved->v[i], err, sizeof err);
}
