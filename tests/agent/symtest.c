/*
 * tests/agent/symtest.c — a library with a static function, for test_symbols.
 * Stripped (split_debug.sh), the library's .dynsym names only symtest_hidden_fn;
 * the static function is named in its debug file alone.
 */
typedef int (*symtest_fn)(int);

symtest_fn symtest_hidden_fn(void);

/* Static, not inlined, and big enough that a pc a few bytes in is inside it. */
__attribute__((noinline)) static int symtest_static_work(int x)
{
    int acc = x;
    for (int i = 0; i < x; i++) {
        __asm__ volatile("" : "+r"(acc));
        acc = acc * 31 + i;
    }
    return acc;
}

/* The address of the static function: the only way in from outside. */
symtest_fn symtest_hidden_fn(void)
{
    return symtest_static_work;
}
