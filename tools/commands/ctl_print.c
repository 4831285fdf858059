/*
 * tools/commands/ctl_print.c — how the control client prints what an agent
 * sent (ctl_client.h): a reply indented for people (rp_jv_print), and text from
 * a file or socket another user may have written with its control characters
 * escaped (rp_print_untrusted).
 *
 * Either way nothing that could move the terminal's cursor or change its state
 * reaches it: C0 and C1 controls and DEL come out as escapes (\u00NN in JSON,
 * \xNN in plain text). Strings are printed as JSON strings, so the pretty
 * output stays JSON.
 */
#include "ctl_client.h"

#include <string.h>

static void print_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (c < 0x20 || c == 0x7f)
                fprintf(f, "\\u%04x", c);
            else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
                     (unsigned char)s[i + 1] <= 0x9f)
                fprintf(f, "\\u%04x", (unsigned char)s[++i]);   /* C1 control */
            else
                fputc(c, f);
        }
    }
    fputc('"', f);
}

void rp_print_untrusted(FILE *f, const char *s, int json)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
            fprintf(f, "\\u%04x", *++p);
        else if (*p == 0x7f)
            fputs(json ? "\\u007f" : "\\x7f", f);
        else if (*p < 0x20 && json)
            fputc(*p == '\t' ? '\t' : ' ', f);   /* JSON whitespace, or invalid */
        else if (*p < 0x20)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
}

static int is_scalar(const struct rp_jv *v)
{
    return v->type != RP_JV_ARR && v->type != RP_JV_OBJ;
}

static void print_value(FILE *f, const struct rp_jv *v, int level)
{
    switch (v->type) {
    case RP_JV_NULL: fputs("null", f); return;
    case RP_JV_BOOL: fputs(v->b ? "true" : "false", f); return;
    case RP_JV_NUM: fputs(v->str, f); return;
    case RP_JV_STR: print_string(f, v->str, v->len); return;
    default: break;
    }
    int obj = v->type == RP_JV_OBJ;
    if (v->n == 0) {
        fputs(obj ? "{}" : "[]", f);
        return;
    }
    int inline_ = !obj;
    for (size_t i = 0; inline_ && i < v->n; i++)
        inline_ = is_scalar(&v->items[i]);
    fputc(obj ? '{' : '[', f);
    for (size_t i = 0; i < v->n; i++) {
        if (i)
            fputs(inline_ ? ", " : ",", f);
        if (!inline_)
            fprintf(f, "\n%*s", 2 * (level + 1), "");
        if (obj) {
            print_string(f, v->keys[i], strlen(v->keys[i]));
            fputs(": ", f);
        }
        print_value(f, &v->items[i], level + 1);
    }
    if (!inline_)
        fprintf(f, "\n%*s", 2 * level, "");
    fputc(obj ? '}' : ']', f);
}

void rp_jv_print(FILE *f, const struct rp_jv *v)
{
    print_value(f, v, 0);
    fputc('\n', f);
}
