/*
 * tests/agent/sigprof_taken.c — LD_PRELOAD library that installs a SIGPROF handler
 * before the JVM starts, as another profiler or the application might. The agent
 * must then refuse to start (signal=PROF is taken) and say so.
 */
#include <signal.h>
#include <string.h>

static void on_prof(int sig)
{
    (void)sig;
}

__attribute__((constructor)) static void take_sigprof(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
}
