/* plan_doc.c - `preflight plan`'s section for a proposal, as Markdown
 * (--format md) and as LaTeX (--format tex): the heading, the first table (at
 * most 8 columns: scale, split, speed, efficiency, wall time, node-hours and
 * their range), the second (the details per scale), the figure, the
 * paragraph and the sources and assumptions, each listed once.  No machine
 * path is printed: the figure is named by its file name (the proposal keeps
 * it beside the text), files by plan_file_label.  The tables and the notes
 * are the same for both formats (plan_render.c, plan_notes.c). */
#include "plan.h"

#include "report/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path) {
  const char *s = path ? strrchr(path, '/') : NULL;
  return s ? s + 1 : path;
}

/* ---- Markdown ---- */

static void md_table(FILE *out, const plan_table *t) {
  for (int c = 0; c < t->ncol; c++) fprintf(out, "%s %s", c ? " |" : "|", t->head[c]);
  fprintf(out, " |\n");
  for (int c = 0; c < t->ncol; c++) fprintf(out, "%s", t->align[c] == 'r' ? "|---:" : "|---");
  fprintf(out, "|\n");
  for (int r = 0; r < t->nrow; r++) {
    int last = t->span[r][0] ? 2 : t->ncol;
    for (int c = 0; c < last; c++) fprintf(out, "%s %s", c ? " |" : "|", t->cell[r][c]);
    if (t->span[r][0]) {
      fprintf(out, " | %s", t->span[r]);
      for (int c = 3; c < t->ncol; c++) fprintf(out, " |");
    }
    fprintf(out, " |\n");
  }
}

void pf_plan_markdown(FILE *out, const plan_doc *d, const char *plot) {
  fprintf(out, "## Compute resources: %s on %s\n\n", d->model_name, d->machine_name);
  fprintf(out, "Predicted with preflight %s (%s) for %s in %s%s%s.\n\n", pf_version(), pf_git(), d->run, d->precision,
          d->tuned & 1 ? "; the parallel split is the best one preflight finds at each scale" : "",
          d->tuned & 2 ? "; global batch: the model's published batch" : "");
  plan_table *t = malloc(2 * sizeof *t);
  if (!t) return;
  plan_tables(d, &t[0], &t[1]);
  md_table(out, &t[0]);
  fprintf(out, "\nDetails per scale:\n\n");
  md_table(out, &t[1]);
  free(t);
  fprintf(out, "\n");
  if (plot) fprintf(out, "![Node-hours and wall time against the number of nodes](%s)\n\n", base_name(plot));
  plan_paragraph(out, d);
  fprintf(out, "\nSources and assumptions:\n\n");
  plan_note notes[PLAN_MAXNOTES];
  int nn = plan_notes(d, notes);
  for (int i = 0; i < nn; i++)
    fprintf(out, "- %s%s: %s\n", notes[i].what, notes[i].assumed ? " (assumption)" : "", notes[i].text);
}

/* ---- LaTeX (booktabs) ---- */

static void tex_esc(FILE *out, const char *s) {
  for (; *s; s++) switch (*s) {
    case '%': case '&': case '_': case '#': case '$': case '{': case '}': fprintf(out, "\\%c", *s); break;
    case '~': fputs("\\textasciitilde{}", out); break;
    case '^': fputs("\\textasciicircum{}", out); break;
    case '\\': fputs("\\textbackslash{}", out); break;
    default: fputc(*s, out);
    }
}

static void tex_table(FILE *out, const plan_table *t, const char *caption, const char *label) {
  fprintf(out, "\\begin{table}[htbp]\n\\centering\n\\caption{");
  tex_esc(out, caption);
  fprintf(out, "}\n\\label{%s}\n\\begin{tabular}{", label);
  for (int c = 0; c < t->ncol; c++) fputc(t->align[c], out);
  fprintf(out, "}\n\\toprule\n");
  for (int c = 0; c < t->ncol; c++) { if (c) fputs(" & ", out); tex_esc(out, t->head[c]); }
  fprintf(out, " \\\\\n\\midrule\n");
  for (int r = 0; r < t->nrow; r++) {
    int last = t->span[r][0] ? 2 : t->ncol;
    for (int c = 0; c < last; c++) { if (c) fputs(" & ", out); tex_esc(out, t->cell[r][c]); }
    if (t->span[r][0]) {
      fprintf(out, " & \\multicolumn{%d}{l}{", t->ncol - 2);
      tex_esc(out, t->span[r]);
      fputc('}', out);
    }
    fprintf(out, " \\\\\n");
  }
  fprintf(out, "\\bottomrule\n\\end{tabular}\n\\end{table}\n\n");
}

/* The paragraph, escaped. */
static void tex_paragraph(FILE *out, const plan_doc *d) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return;
  plan_paragraph(m, d);
  if (fclose(m) == 0) tex_esc(out, buf);
  free(buf);
}

void pf_plan_tex(FILE *out, const plan_doc *d, const char *plot) {
  fprintf(out, "%% preflight %s (%s): needs \\usepackage{booktabs}%s\n", pf_version(), pf_git(),
          plot ? " and \\usepackage{graphicx}" : "");
  fprintf(out, "\\subsection*{Compute resources: ");
  tex_esc(out, d->model_name);
  fprintf(out, " on ");
  tex_esc(out, d->machine_name);
  fprintf(out, "}\n\n");
  char cap[512];
  snprintf(cap, sizeof cap, "Predicted by preflight %s for %s in %s%s: %s on %s.", pf_version(), d->run, d->precision,
           d->tuned & 1 ? ", parallel split tuned at each scale" : "", d->model, d->machine);
  plan_table *t = malloc(2 * sizeof *t);
  if (!t) return;
  plan_tables(d, &t[0], &t[1]);
  tex_table(out, &t[0], cap, "tab:preflight-plan");
  tex_table(out, &t[1], "Details per scale: micro-batch, pipeline schedule, iteration time, jobs, device-hours, "
                        "billing units and facility energy.", "tab:preflight-plan-details");
  free(t);
  const char *kind = plot ? strrchr(plot, '.') : NULL;
  if (kind && strcmp(kind, ".svg") != 0) {
    fprintf(out, "\\begin{figure}[htbp]\n\\centering\n\\includegraphics[width=\\linewidth]{");
    tex_esc(out, base_name(plot));
    fprintf(out, "}\n\\caption{Node-hours and wall time against the number of nodes.}\n\\end{figure}\n\n");
  } else if (plot) {
    fprintf(out, "%% LaTeX does not include SVG: write the figure with --plot FILE.pdf\n\n");
  }
  tex_paragraph(out, d);
  fprintf(out, "\n\\paragraph{Sources and assumptions.}\n\\begin{itemize}\n");
  plan_note notes[PLAN_MAXNOTES];
  int nn = plan_notes(d, notes);
  for (int i = 0; i < nn; i++) {
    fprintf(out, "\\item ");
    tex_esc(out, notes[i].what);
    fprintf(out, "%s: ", notes[i].assumed ? " (assumption)" : "");
    tex_esc(out, notes[i].text);
    fputc('\n', out);
  }
  fprintf(out, "\\end{itemize}\n");
}
