/*
 * tests/fault/itimer_prof.c — LD_PRELOAD library for the JVM fault tests: once
 * someone (the agent) has a SIGPROF handler, and RP_ITIMER_DELAY_MS later (default
 * 1000), a thread of ours starts the process-wide profiling timer,
 * setitimer(ITIMER_PROF) every RP_ITIMER_US microseconds (default 1000), as a
 * native library that profiles with the classic interval timer would. Its SIGPROFs
 * reach the agent's handler without a ringprof timer behind them.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

static void *arm_later(void *arg)
{
    (void)arg;
    long ms = env_long("RP_ITIMER_DELAY_MS", 1000), us = env_long("RP_ITIMER_US", 1000);
    /* SIGPROF's default action ends the process: wait for a handler (at most
     * 60 s, then give up without arming). */
    struct sigaction cur;
    struct timespec tick = {0, 10000000L};
    for (int i = 0; i < 6000; i++) {
        if (sigaction(SIGPROF, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO))
            break;
        nanosleep(&tick, NULL);
    }
    if (!(cur.sa_flags & SA_SIGINFO))
        return NULL;
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
    struct itimerval it = {{us / 1000000, us % 1000000}, {us / 1000000, us % 1000000}};
    setitimer(ITIMER_PROF, &it, NULL);
    return NULL;
}

__attribute__((constructor)) static void start_arming_thread(void)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_create(&t, &a, arm_later, NULL);
    pthread_attr_destroy(&a);
}
