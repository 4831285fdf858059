/*
 * tools/outputs/out_tree.c — the `tree` format: the calling context tree as indented text.
 *
 * One line per node, root first, children under their parent sorted by total
 * weight, two spaces of indent per level up to OUT_INDENT_MAX levels (a deeper line
 * shows its depth as a number instead, out_indent, so no line costs more for being
 * deep). Each line gives the node's total and self weight (in the kind's unit),
 * both as a percentage of the whole profile, its total samples, and, when the unit
 * is time or a count of timer ticks, the estimated total and self time. --cutoff
 * (RP_OUT_TREE_CUTOFF unless given) hides every node whose total is below that
 * share of the profile; the siblings it hides are summarised in one "[...
 * hidden]" line, and the footer says how many branches were hidden in all, then
 * what the markers shown mean (legend.h).
 */
#include <string.h>

#include "legend.h"
#include "out_common.h"

struct tree_ctx {
    FILE *out;
    const struct rp_out_options *o;
    uint64_t whole;            /* root total weight: the 100% */
    uint32_t summarised;       /* parent whose hidden children were summarised */
    uint64_t hidden_branches, hidden_weight;
    int times;
    struct out_legend legend;
};

static void line(struct tree_ctx *c, const struct rp_profile *p, uint32_t node,
                 size_t depth)
{
    const struct rp_prof_node *n = &p->nodes[node];
    out_figures(c->out, p, n->total, n->self, c->whole, c->times);
    fputs("  ", c->out);
    out_indent(c->out, depth);
    if (node == 0)
        fputs(p->per_thread ? "[all threads]" : "[all]", c->out);
    else
        out_node_text(c->out, p, node);
    fputc('\n', c->out);
    out_legend_add_node(&c->legend, p, node);
}

static int below_cutoff(const struct tree_ctx *c, const struct rp_prof_node *n)
{
    return c->o->cutoff_pct > 0 &&
           out_pct(n->total[RP_PV_WEIGHT], c->whole) < c->o->cutoff_pct;
}

static int visit(const struct rp_profile *p, uint32_t node, size_t depth, void *arg)
{
    struct tree_ctx *c = arg;
    const struct rp_prof_node *n = &p->nodes[node];
    if (node == 0 || !below_cutoff(c, n)) {
        line(c, p, node, depth);
        return 0;
    }
    /* Siblings are sorted by total, so this node and all after it are hidden. */
    if (c->summarised != n->parent) {
        c->summarised = n->parent;
        uint64_t k = 0, w = 0, s = 0;
        for (uint32_t x = node; x != RP_PROF_NONE; x = p->nodes[x].next_sibling) {
            k++;
            w += p->nodes[x].total[RP_PV_WEIGHT];
            s += p->nodes[x].total[RP_PV_SAMPLES];
        }
        c->hidden_branches += k;
        c->hidden_weight += w;
        fprintf(c->out, "%14llu %14s %7.2f%% %8s %9llu", (unsigned long long)w, "",
                out_pct(w, c->whole), "", (unsigned long long)s);
        if (c->times)
            fprintf(c->out, " %12s %12s", "", "");
        fputs("  ", c->out);
        out_indent(c->out, depth);
        fprintf(c->out, "[%llu more below %.2f%% hidden]\n", (unsigned long long)k,
                c->o->cutoff_pct);
    }
    return 1;
}

int rp_out_tree(FILE *out, const struct rp_profile *p, const struct rp_out_options *o)
{
    struct tree_ctx c = {out, o, p->nodes[0].total[RP_PV_WEIGHT], RP_PROF_NONE, 0, 0,
                         p->ns_per_unit > 0, {0}};
    out_legend_init(&c.legend);
    out_header(out, p, o, "tree");
    fprintf(out, "%14s %14s %8s %8s %9s", "total", "self", "total%", "self%", "samples");
    if (c.times)
        fprintf(out, " %12s %12s", "total-time", "self-time");
    fputs("  call tree (callers above callees)\n", out);
    rp_prof_walk(p, 0, visit, &c);
    if (o->cutoff_pct > 0)
        fprintf(out, "# cutoff %.2f%%: %llu branch%s hidden, weight %llu (%.2f%%)%s\n",
                o->cutoff_pct, (unsigned long long)c.hidden_branches,
                c.hidden_branches == 1 ? "" : "es", (unsigned long long)c.hidden_weight,
                out_pct(c.hidden_weight, c.whole),
                c.hidden_branches ? "; --cutoff 0 shows every node" : "");
    out_legend_print(out, &c.legend, "# ");
    return ferror(out) ? -1 : 0;
}
