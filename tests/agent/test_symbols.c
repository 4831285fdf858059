/*
 * tests/agent/test_symbols.c — src/code/symbols.c and src/code/elfsyms.c without a JVM:
 *   - a pc inside a stripped object but in none of its symbols is named after the
 *     object ("[libz.so.1]"), one name for all such pcs of the object;
 *   - rp_symbols_find locates HotSpot's local SafeFetch fault labels in libjvm's
 *     .symtab (the crash guard passes those faults to HotSpot);
 *   - libc's static start_thread, which its .dynsym lacks, is named from libc's
 *     debug file (libc6-dbg), found by build id, on a real thread's stack;
 *   - split_debug.sh's libraries: a static function named from the debug file
 *     found by build id (under a debug root of the test's), by .gnu_debuglink
 *     and build id, by .gnu_debuglink and CRC32; a debug file whose CRC32 is not
 *     the link's is refused ("[lib]");
 *   - damaged files: truncated at every offset, mutated at random, a symbol
 *     table claiming 1 TiB, a budget too small: no crash, nothing kept that the
 *     budget does not allow.
 * usage: test_symbols [FULL_LIB [STRIPPED_LIB]] (meson passes split_debug.sh's
 * outputs). libjvm.so is dlopen'ed from the JDK that runs `java` (or JAVA_HOME);
 * each part whose input is missing prints one SKIP line.
 */
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "../../src/code/elfsyms.h"
#include "../../src/code/symbols.h"

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

/* ------------------------------------------------------- debug files -- */

struct build_id { const char *lib; char hex[129]; };

/* The build id of a loaded object, from its PT_NOTE segments in memory (not
 * through the code under test). */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *argp)
{
    (void)size;
    struct build_id *b = argp;
    const char *slash = strrchr(info->dlpi_name, '/');
    if (!slash || strcmp(slash + 1, b->lib) != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        size_t align = ph->p_align == 8 ? 8 : 4;
        for (size_t off = 0; off + 12 <= ph->p_memsz;) {
            const ElfW(Nhdr) *nh = (const void *)(p + off);
            size_t name = off + 12, desc = name + ((nh->n_namesz + align - 1) & ~(align - 1));
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                !memcmp(p + name, "GNU", 4) && nh->n_descsz <= 64) {
                for (size_t k = 0; k < nh->n_descsz; k++)
                    snprintf(b->hex + 2 * k, 3, "%02x", p[desc + k]);
                return 1;
            }
            off = desc + ((nh->n_descsz + align - 1) & ~(align - 1));
        }
    }
    return 1;
}

static int has_name(const struct rp_elfsyms *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->syms[i].name, name))
            return 1;
    return 0;
}

static void *thread_backtrace(void *arg)
{
    return (void *)(intptr_t)backtrace(arg, 32);
}

/* libc's start_thread is static: only libc's debug file names it. A thread's
 * own stack, as backtrace() sees it, must show it by name. */
static void test_libc_debug_file(void)
{
    struct build_id b = {"libc.so.6", ""};
    dl_iterate_phdr(find_build_id, &b);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", RP_ELFSYMS_DEBUG_ROOT, b.hex,
             b.hex[0] ? b.hex + 2 : "");
    struct stat st;
    if (!b.hex[0] || stat(path, &st) != 0) {
        printf("SKIP: no debug file for libc.so.6 (%s): apt-get install libc6-dbg\n",
               b.hex[0] ? path : "libc has no build id");
        return;
    }
    void *pcs[32];
    pthread_t t;
    void *n = NULL;
    REQUIRE(pthread_create(&t, NULL, thread_backtrace, pcs) == 0 &&
            pthread_join(t, &n) == 0, "a thread");
    int found = 0;
    for (intptr_t i = 1; i < (intptr_t)n; i++) {
        uint64_t pc = (uint64_t)(uintptr_t)pcs[i] - 1;   /* inside the call */
        struct rp_native_sym sym;
        rp_symbols_resolve(pc, &sym);
        if (strcmp(sym.name, "start_thread"))
            continue;
        found = 1;
        CHECK(!strcmp(sym.lib, "libc.so.6"), "start_thread in %s", sym.lib);
        Dl_info info;
        CHECK(dladdr((void *)(uintptr_t)pc, &info) && (!info.dli_sname ||
              strcmp(info.dli_sname, "start_thread")),
              "dladdr names start_thread: the test proves nothing");
    }
    CHECK(found, "no frame of a thread's stack named start_thread (debug file %s)", path);
}

/* Copy `from` to `to`. */
static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    REQUIRE(in && out, "copy %s to %s", from, to);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        REQUIRE(fwrite(buf, 1, n, out) == n, "write %s", to);
    fclose(in);
    REQUIRE(fclose(out) == 0, "close %s", to);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    REQUIRE(f, "open %s", path);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    uint8_t *buf = malloc(*len);
    REQUIRE(buf && fread(buf, 1, *len, f) == *len, "read %s", path);
    fclose(f);
    return buf;
}

static void write_file(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f && fwrite(buf, 1, len, f) == len && fclose(f) == 0, "write %s", path);
}

/* A pc a few bytes into the static function of a loaded split library. */
static uint64_t hidden_pc(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(h, "dlopen %s: %s", path, dlerror());
    void *(*fn)(void) = (void *(*)(void))dlsym(h, "symtest_hidden_fn");
    REQUIRE(fn, "symtest_hidden_fn in %s", path);
    return (uint64_t)(uintptr_t)fn() + 4;
}

static void test_split_libraries(const char *full, const char *dir, const char *tmp)
{
    char path[PATH_MAX], root[PATH_MAX];
    struct rp_elfsyms s;
    const char *fn = "symtest_static_work";

    rp_elfsyms_load(full, tmp, SIZE_MAX, &s);
    CHECK(s.source == RP_ELFSYMS_SYMTAB && has_name(&s, fn), "unstripped: .symtab "
          "(source %d)", s.source);
    rp_elfsyms_free(&s);

    /* By build id, under a debug root of the test's own. */
    snprintf(path, sizeof path, "%s/libsymtest_bid.so", dir);
    hidden_pc(path);
    struct build_id b = {"libsymtest_bid.so", ""};
    dl_iterate_phdr(find_build_id, &b);
    REQUIRE(b.hex[0], "libsymtest_bid.so has a build id");
    snprintf(root, sizeof root, "%s/root/.build-id/%.2s", tmp, b.hex);
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", root);
    REQUIRE(system(cmd) == 0, "%s", cmd);
    snprintf(root, sizeof root, "%s/root/.build-id/%.2s/%s.debug", tmp, b.hex, b.hex + 2);
    char debug[PATH_MAX];
    snprintf(debug, sizeof debug, "%s/libsymtest_bid.debug", dir);
    copy_file(debug, root);
    snprintf(root, sizeof root, "%s/root", tmp);
    rp_elfsyms_load(path, root, SIZE_MAX, &s);
    CHECK(s.source == RP_ELFSYMS_DEBUG_BUILD_ID && has_name(&s, fn) &&
          has_name(&s, "symtest_hidden_fn"), "by build id: source %d, %zu symbols, %s",
          s.source, s.n, s.debug_path);
    rp_elfsyms_free(&s);
    /* The same library with an empty root: its debug link, next to it. */
    rp_elfsyms_load(path, tmp, SIZE_MAX, &s);
    CHECK(s.source == RP_ELFSYMS_DEBUG_LINK && has_name(&s, fn) &&
          !strcmp(s.debug_path, debug), "by debug link and build id: source %d, %s",
          s.source, s.debug_path);
    rp_elfsyms_free(&s);
    /* Too small a budget keeps nothing, and says so. */
    rp_elfsyms_load(path, tmp, 64, &s);
    CHECK(s.n == 0 && s.over_budget && s.bytes == 0, "a 64-byte budget: %zu kept", s.n);
    rp_elfsyms_free(&s);

    /* No build id: the debug link's CRC32. */
    snprintf(path, sizeof path, "%s/libsymtest_crc.so", dir);
    rp_elfsyms_load(path, tmp, SIZE_MAX, &s);
    CHECK(s.source == RP_ELFSYMS_DEBUG_LINK && has_name(&s, fn), "by CRC: source %d",
          s.source);
    rp_elfsyms_free(&s);
    struct rp_native_sym sym;
    rp_symbols_resolve(hidden_pc(path), &sym);
    CHECK(!strcmp(sym.name, fn) && !strcmp(sym.lib, "libsymtest_crc.so"),
          "the agent's lookup: %s in %s", sym.name, sym.lib);

    /* A CRC32 that is not the debug file's: refused, though its symbols are right. */
    snprintf(path, sizeof path, "%s/libsymtest_badcrc.so", dir);
    rp_elfsyms_load(path, tmp, SIZE_MAX, &s);
    CHECK(s.source == RP_ELFSYMS_DYNSYM && !has_name(&s, fn) &&
          has_name(&s, "symtest_hidden_fn"), "a wrong CRC: source %d", s.source);
    rp_elfsyms_free(&s);
    rp_symbols_resolve(hidden_pc(path), &sym);
    CHECK(!strcmp(sym.name, "[libsymtest_badcrc.so]"), "a wrong CRC named %s", sym.name);
    CHECK(rp_elfsyms_crc32(0, "123456789", 9) == 0xcbf43926u, "CRC32 check value");
}

/* Sorted, within the budget, names that end: whatever the file held. */
static int sane(const struct rp_elfsyms *s, size_t budget)
{
    if (s->bytes > budget || (s->n && !s->syms))
        return 0;
    for (size_t i = 1; i < s->n; i++)
        if (s->syms[i].start < s->syms[i - 1].start || strlen(s->syms[i].name) > 1 << 20)
            return 0;
    return 1;
}

static void test_damaged(const char *full, const char *dir, const char *tmp)
{
    char bad[PATH_MAX], debug[PATH_MAX];
    snprintf(bad, sizeof bad, "%s/damaged.so", tmp);
    if (dir)
        snprintf(debug, sizeof debug, "%s/libsymtest_bid.debug", dir);
    const char *inputs[2] = {full, dir ? debug : NULL};
    uint64_t rng = 0x2545f4914f6cdd1dull;
    for (int k = 0; k < 2 && inputs[k]; k++) {
        size_t len;
        uint8_t *orig = read_file(inputs[k], &len), *buf = malloc(len);
        REQUIRE(buf, "memory");
        struct rp_elfsyms s;
        int bad_ones = 0;
        /* Truncated at every offset. */
        for (size_t cut = 0; cut < len; cut += 1 + cut / 512) {
            write_file(bad, orig, cut);
            rp_elfsyms_load(bad, tmp, 1 << 20, &s);
            bad_ones += !sane(&s, 1 << 20);
            rp_elfsyms_free(&s);
        }
        CHECK(bad_ones == 0, "%s truncated: %d bad results", inputs[k], bad_ones);
        /* Mutated: a few bytes of the headers and section table at random. */
        const Elf64_Ehdr *eh = (const void *)orig;
        for (int i = 0; i < 3000; i++) {
            memcpy(buf, orig, len);
            for (int m = 0; m < 4; m++) {
                rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                size_t span = eh->e_shnum * sizeof(Elf64_Shdr);
                size_t at = rng % 3 == 0 ? (rng >> 8) % sizeof *eh
                          : eh->e_shoff + (rng >> 8) % span;
                if (at < len)
                    buf[at] = (uint8_t)(rng >> 40);
            }
            write_file(bad, buf, len);
            rp_elfsyms_load(bad, tmp, 1 << 20, &s);
            bad_ones += !sane(&s, 1 << 20);
            rp_elfsyms_free(&s);
        }
        CHECK(bad_ones == 0, "%s mutated: %d bad results", inputs[k], bad_ones);
        /* A symbol table that claims 1 TiB is not read: the .dynsym is used. */
        memcpy(buf, orig, len);
        Elf64_Shdr *sh = (Elf64_Shdr *)(buf + eh->e_shoff);
        for (unsigned i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == SHT_SYMTAB)
                sh[i].sh_size = 1ull << 40;
        write_file(bad, buf, len);
        rp_elfsyms_load(bad, tmp, SIZE_MAX, &s);
        CHECK(sane(&s, SIZE_MAX) && s.source != RP_ELFSYMS_SYMTAB, "%s with a 1 TiB "
              ".symtab: source %d", inputs[k], s.source);
        rp_elfsyms_free(&s);
        free(buf);
        free(orig);
    }
}

int main(int argc, char **argv)
{
    test_unknown_named_after_lib();
    test_find_safefetch();
    test_libc_debug_file();
    char tmp[] = "/tmp/rp-symbols-XXXXXX";
    REQUIRE(mkdtemp(tmp), "a temporary directory");
    char dir[PATH_MAX] = "";
    if (argc > 2) {
        snprintf(dir, sizeof dir, "%s", argv[2]);
        char *slash = strrchr(dir, '/');
        REQUIRE(slash, "a path: %s", argv[2]);
        *slash = '\0';
        test_split_libraries(argv[1], dir, tmp);
    } else {
        printf("SKIP: no split libraries (objcopy missing): debug links not tested\n");
    }
    if (argc > 1)
        test_damaged(argv[1], argc > 2 ? dir : NULL, tmp);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", tmp);
    return check_exit("test_symbols");
}
