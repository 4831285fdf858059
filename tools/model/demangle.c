/*
 * tools/model/demangle.c — libiberty's demangler behind the tool's three styles
 * (demangle.h).
 */
#include "demangle.h"

#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

int rp_demangle_parse(const char *arg, enum rp_demangle_style *style)
{
    if (!strcmp(arg, "short"))
        *style = RP_DEMANGLE_SHORT;
    else if (!strcmp(arg, "full"))
        *style = RP_DEMANGLE_FULL;
    else if (!strcmp(arg, "none"))
        *style = RP_DEMANGLE_NONE;
    else
        return -1;
    return 0;
}

char *rp_demangle(const char *name, enum rp_demangle_style style)
{
    if (style == RP_DEMANGLE_NONE || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') ||
        strnlen(name, RP_DEMANGLE_MAX + 1) > RP_DEMANGLE_MAX)
        return NULL;
    /* DMGL_AUTO: C++ and both Rust manglings. Without DMGL_PARAMS the function's
     * parameters (and a template function's return type) are left out; template
     * arguments stay, as they tell instantiations apart. */
    int opts = DMGL_AUTO | DMGL_ANSI | (style == RP_DEMANGLE_FULL ? DMGL_PARAMS : 0);
    return cplus_demangle(name, opts);
}
