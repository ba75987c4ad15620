/* validate_plot.c - the parity plot of `preflight validate --plot FILE.svg`:
 * predicted against measured on log axes with the +-10 % band, hand-written
 * SVG (no plotting dependency); bounds drawn as triangles that point the way
 * the bound allows, ranges as a bar. */
#include "validate_out.h"

#include "preflight/error.h"
#include "preflight/io.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- parity plot (SVG) ---- */

static double pdisp(const pf_vpoint *p, double x) { return p->metric == PF_MET_SCALING ? 100 * x : x; }

static void xml_text(FILE *f, const char *s) {
  for (const char *c = s; *c; c++) {
    if (*c == '<') fputs("&lt;", f);
    else if (*c == '&') fputs("&amp;", f);
    else fputc(*c, f);
  }
}

int pf_vplot_write(const pf_vsum *s, const char *title, const char *path) {
  static const char *colors[PF_MET_COUNT] = {"#1f77b4", "#17becf", "#d62728", "#9467bd",
                                             "#8c564b", "#2ca02c", "#ff7f0e", "#e377c2"};
  double vmin = INFINITY, vmax = 0;
  int n = 0;
  for (int i = 0; i < s->npts; i++) {
    const pf_vpoint *r = &s->pts[i];
    double a = pdisp(r, r->measured), b = pdisp(r, r->predicted);
    double a2 = r->bound == PF_BOUND_RANGE ? pdisp(r, r->measured_hi) : a;
    vmin = fmin(vmin, fmin(a, fmin(a2, b)));
    vmax = fmax(vmax, fmax(a, fmax(a2, b)));
    n++;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return pf_error_set(PF_ENOMEM, "out of memory");
  const double W = 640, H = 600, L = 80, R = 190, T = 40, B = 60;
  const double pw = W - L - R, ph = H - T - B;
  if (n == 0) { vmin = 0.1; vmax = 10; }
  double d0 = floor(log10(vmin)), d1 = ceil(log10(vmax));
  if (d1 <= d0) d1 = d0 + 1;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
             "font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H);
  fprintf(f, "<title>preflight validate: predicted vs measured (");
  xml_text(f, title);
  fprintf(f, ")</title>\n");
  fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
#define X(v) (L + (log10(v) - d0) / (d1 - d0) * pw)
#define Y(v) (T + ph - (log10(v) - d0) / (d1 - d0) * ph)
  double a = pow(10, d0), b = pow(10, d1);
  /* +-10 % band, then y = x */
  fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#dddddd\" opacity=\"0.7\"/>\n",
          X(a), Y(a * 1.1), X(b / 1.1), Y(b), X(b), Y(b * 0.9), X(a), Y(a * 0.9));
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>\n", X(a),
          Y(a), X(b), Y(b));
  fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", L, T, pw, ph);
  for (double d = d0; d <= d1 + 1e-9; d += 1) {
    double v = pow(10, d);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", X(v), T + ph, X(v), T + ph + 5);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", X(v), T + ph + 18, v);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L - 5, Y(v), L, Y(v));
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 8, Y(v) + 4, v);
  }
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">measured (row's unit; efficiencies in %%)</text>\n",
          L + pw / 2, H - 15);
  fprintf(f, "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\">predicted</text>\n", T + ph / 2);
  fprintf(f, "<text x=\"%.1f\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">predicted vs measured: ", L + pw / 2);
  xml_text(f, title);
  fprintf(f, "</text>\n");
  bool used[PF_MET_COUNT] = {0};
  for (int i = 0; i < s->npts; i++) {
    const pf_vpoint *r = &s->pts[i];
    double mx = pdisp(r, r->measured), py = pdisp(r, r->predicted);
    const char *col = colors[r->metric];
    used[r->metric] = true;
    if (r->bound == PF_BOUND_EXACT)
      fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" fill-opacity=\"0.75\"><title>line %d: %s</title></circle>\n",
              X(mx), Y(py), col, r->line, pf_metric_name((pf_metric)r->metric));
    else {
      if (r->bound == PF_BOUND_RANGE)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n", X(mx),
                Y(py), X(pdisp(r, r->measured_hi)), Y(py), col);
      double up = r->bound == PF_BOUND_UPPER ? -1 : 1; /* triangle points the way the bound allows */
      double x0 = X(mx), y0 = Y(py);
      fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\">"
                 "<title>line %d: %s (%s bound)</title></polygon>\n",
              x0 + 6 * up, y0, x0 - 4 * up, y0 - 5, x0 - 4 * up, y0 + 5, col, r->line,
              pf_metric_name((pf_metric)r->metric), pf_bound_name((pf_bound)r->bound));
    }
  }
  double ly = T + 10;
  for (int m = 0; m < PF_MET_COUNT; m++) {
    if (!used[m]) continue;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
            L + pw + 15, ly, colors[m], L + pw + 25, ly + 4, pf_metric_name((pf_metric)m));
    ly += 18;
  }
  fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"#dddddd\"/><text x=\"%.1f\" y=\"%.1f\">"
             "within 10 %%</text>\n", L + pw + 9, ly - 5, L + pw + 25, ly + 4);
  ly += 18;
  fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"black\"/><text x=\"%.1f\" "
             "y=\"%.1f\">bound (lower: right)</text>\n", L + pw + 21, ly, L + pw + 11, ly - 5, L + pw + 11, ly + 5,
          L + pw + 25, ly + 4);
#undef X
#undef Y
  fprintf(f, "</svg>\n");
  fclose(f);
  int rc = pf_write_file_atomic(path, buf);
  free(buf);
  return rc;
}

