/*
 * tests/agent/test_symbols.c — src/symbols.c without a JVM running:
 *   - a pc inside a stripped object but in none of its symbols is named after the
 *     object ("[libz.so.1]"), one name for all such pcs of the object;
 *   - rp_symbols_find locates HotSpot's local SafeFetch fault labels in libjvm's
 *     .symtab (the crash guard passes those faults to HotSpot).
 * libjvm.so is dlopen'ed from the JDK that runs `java` (or JAVA_HOME); without
 * one that part is skipped.
 */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../../src/symbols.h"

struct text { const char *lib; uint64_t start, end; };

static int find_text(struct dl_phdr_info *info, size_t size, void *argp)
{
    (void)size;
    struct text *t = argp;
    const char *slash = strrchr(info->dlpi_name, '/');
    if (!slash || strcmp(slash + 1, t->lib) != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
            t->start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            t->end = t->start + info->dlpi_phdr[i].p_memsz;
            return 1;
        }
    return 0;
}

static void test_unknown_named_after_lib(void)
{
    if (!dlopen("libz.so.1", RTLD_NOW)) {
        printf("SKIP: no libz.so.1\n");
        return;
    }
    struct text t = {"libz.so.1", 0, 0};
    REQUIRE(dl_iterate_phdr(find_text, &t) && t.end > t.start, "libz text");
    int gaps = 0, unknown = 0;
    for (uint64_t pc = t.start; pc < t.end; pc += 4) {
        struct rp_native_sym sym;
        rp_symbols_resolve(pc, &sym);
        if (sym.name[0] == '[') {
            gaps++;
            unknown += strcmp(sym.name, "[libz.so.1]") != 0;
        }
    }
    CHECK(gaps > 0, "no pc of libz's text is outside its exported functions");
    CHECK(unknown == 0, "%d of %d pcs in no symbol not named [libz.so.1]", unknown, gaps);
}

static void test_find_safefetch(void)
{
    char path[PATH_MAX + 64] = "";
    const char *jh = getenv("JAVA_HOME");
    char java[PATH_MAX];
    if (jh && *jh) {
        snprintf(path, sizeof path, "%s/lib/server/libjvm.so", jh);
    } else if (realpath("/usr/bin/java", java)) {
        char *bin = strstr(java, "/bin/java");
        if (bin)
            *bin = '\0';
        snprintf(path, sizeof path, "%s/lib/server/libjvm.so", java);
    }
    if (!path[0] || !dlopen(path, RTLD_NOW | RTLD_GLOBAL)) {
        printf("SKIP: no libjvm.so (%s)\n", path);
        return;
    }
    uint64_t f32 = rp_symbols_find("libjvm.so", "_SafeFetch32_fault");
    uint64_t fn = rp_symbols_find("libjvm.so", "_SafeFetchN_fault");
    struct text t = {"libjvm.so", 0, 0};
    REQUIRE(dl_iterate_phdr(find_text, &t), "libjvm text");
    /* JDK 19+ and backports have SafeFetch in libjvm; older JDKs generate a stub. */
    if (!f32 && !fn && !rp_symbols_find("libjvm.so", "SafeFetchN_impl")) {
        printf("SKIP: this libjvm has no SafeFetch of its own\n");
        return;
    }
    CHECK(f32 >= t.start && f32 < t.end, "_SafeFetch32_fault %#llx not in libjvm text",
          (unsigned long long)f32);
    CHECK(fn >= t.start && fn < t.end, "_SafeFetchN_fault %#llx not in libjvm text",
          (unsigned long long)fn);
    CHECK(rp_symbols_find("libjvm.so", "no_such_symbol_in_libjvm") == 0, "bogus found");
    CHECK(rp_symbols_find("libnotloaded.so", "_SafeFetchN_fault") == 0, "no object");
}

int main(void)
{
    test_unknown_named_after_lib();
    test_find_safefetch();
    return check_exit("test_symbols");
}
