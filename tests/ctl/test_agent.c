/*
 * tests/ctl/test_agent.c — a trivial JVMTI agent for the `ringprof attach` test,
 * so that test does not depend on the real agent.
 *
 * Agent_OnAttach (and Agent_OnLoad) print "rp-test-agent: options=[OPTIONS]" on the
 * JVM's stdout and return 0. With the option string "fail" the agent refuses, the
 * way the real one does: it leaves its reason with rp_discovery_attach_error
 * (src/control/control_discovery.c), for `ringprof attach` to print, and returns 7 (not JNI_ERR, so
 * the test can tell the agent's own code came through).
 */
#include <stdio.h>
#include <string.h>
#include <jvmti.h>

#include "../../src/control/control.h"

#define FAIL_CODE 7

static jint start(const char *options)
{
    printf("rp-test-agent: options=[%s]\n", options ? options : "");
    fflush(stdout);
    if (options && !strcmp(options, "fail")) {
        rp_discovery_attach_error("the test agent refuses the option string 'fail'");
        return FAIL_CODE;
    }
    return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    (void)vm;
    (void)reserved;
    return start(options);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)vm;
    (void)reserved;
    return start(options);
}
