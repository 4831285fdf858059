/*
 * tests/agent/unwind_late.c — a library test_unwind loads and unloads while it
 * runs (dlopen, dlclose), to show that a refresh builds the new library's frame
 * table only and keeps every other one.
 */
int rp_late(int x);

int rp_late(int x)
{
    return x * 2 + 1;
}
