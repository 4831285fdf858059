/*
 * tests/convert/test_frame_norm.c — the string side of frame normalisation
 * (tools/model/frame_norm.h): hidden-class names as each JDK writes them, names
 * that only look alike and must stay, the package of a class, and the parameter
 * list of a method descriptor (--signatures).
 */
#include <stdio.h>
#include <string.h>

#include "frame_norm.h"

static int failed;

static void check_hidden(const char *klass, const char *want)
{
    size_t n = rp_norm_hidden_class(klass);
    if (n != strlen(want) || strncmp(klass, want, n)) {
        printf("FAIL: rp_norm_hidden_class(\"%s\") = \"%.*s\", not \"%s\"\n", klass,
               (int)n, klass, want);
        failed++;
    }
}

static void check_package(const char *klass, const char *want)
{
    size_t n = rp_norm_package_len(klass);
    if (n != strlen(want) || strncmp(klass, want, n)) {
        printf("FAIL: rp_norm_package_len(\"%s\") = \"%.*s\", not \"%s\"\n", klass,
               (int)n, klass, want);
        failed++;
    }
}

/* rp_norm_java_params of desc into a buffer of cap bytes: want, or NULL for -1. */
static void check_params(const char *desc, size_t cap, const char *want)
{
    char buf[256];
    memset(buf, 'x', sizeof buf);
    int n = rp_norm_java_params(desc, buf, cap);
    int ok = want ? n == (int)strlen(want) && !strcmp(buf, want) : n == -1 && !buf[0];
    if (!ok || buf[cap] != 'x') {
        printf("FAIL: rp_norm_java_params(\"%s\", %zu) = %d \"%s\", not \"%s\"\n", desc,
               cap, n, buf, want ? want : "(-1)");
        failed++;
    }
}

int main(void)
{
    /* JDK 17 (the JVM's name, and JVMTI's signature form the agent records) */
    check_hidden("app.Foo$$Lambda$14/0x0000000800c03000", "app.Foo$$Lambda");
    check_hidden("Lam$$Lambda$1.0x00007f26d0000a08", "Lam$$Lambda");
    /* JDK 21+ */
    check_hidden("app.Foo$$Lambda/0x000001000109c000", "app.Foo$$Lambda");
    check_hidden("app.Foo$$Lambda.0x000001000109c000", "app.Foo$$Lambda");
    /* JDK 8 */
    check_hidden("app.Foo$$Lambda$3/1831932724", "app.Foo$$Lambda");
    /* other hidden classes keep their name */
    check_hidden("java.lang.invoke.LambdaForm$MH/0x0000000800c04400",
                 "java.lang.invoke.LambdaForm$MH");
    check_hidden("java.lang.invoke.LambdaForm$DMH.0x0000000800c04800",
                 "java.lang.invoke.LambdaForm$DMH");
    /* not hidden: unchanged */
    check_hidden("app.Foo", "app.Foo");
    check_hidden("app.Foo$1", "app.Foo$1");
    check_hidden("app.Foo$$Lambda", "app.Foo$$Lambda");
    check_hidden("app.Foo$Lambda$14", "app.Foo$Lambda$14");
    check_hidden("app.v0x1", "app.v0x1");
    check_hidden("app.Foo/", "app.Foo/");
    check_hidden("0x12", "0x12");
    check_hidden("", "");

    check_package("app.net.Server$1", "app.net");
    check_package("Main", "");
    check_package("Lam$$Lambda$1.0x00007f26d0000a08", "");
    check_package("app.core.Loop$$Lambda.0x00007f26d0000a08", "app.core");
    check_package("", "");

    /* every field type, arrays of them, classes with their packages */
    check_params("()V", 64, "()");
    check_params("([JJ)V", 64, "(long[], long)");
    check_params("(Ljava/lang/String;I)Ljava/util/List;", 64, "(java.lang.String, int)");
    check_params("(BCDFIJSZ)V", 64, "(byte, char, double, float, int, long, short, boolean)");
    check_params("([[Ljava/lang/Object;[[[B)V", 64, "(java.lang.Object[][], byte[][][])");
    check_params("(Lapp/Outer$Inner;)V", 64, "(app.Outer$Inner)");
    /* a list too long for the buffer is cut, and says so */
    check_params("(Ljava/lang/String;Ljava/lang/String;)V", 24, "(java.lang.String, ...)");
    check_params("(JJJJ)V", 12, "(long, ...)");
    /* not descriptors */
    check_params("", 64, NULL);
    check_params("V", 64, NULL);
    check_params("(", 64, NULL);
    check_params("(Q)V", 64, NULL);
    check_params("(Ljava/lang/String)V", 64, NULL);
    check_params("(L;)V", 64, NULL);
    check_params("([)V", 64, NULL);

    printf("frame_norm: %s\n", failed ? "FAILED" : "ok");
    return failed ? 1 : 0;
}
