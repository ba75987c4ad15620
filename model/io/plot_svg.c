/* plot_svg.c - the SVG canvas of plot.c's layout, written with fprintf as
 * hwloc's lstopo writes its SVG: deterministic text, and every data point an
 * element carrying its exact coordinates (data-series, data-x, data-y with 17
 * significant digits) so that tests and users read the plotted numbers back. */
#include "plotdraw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void esc(FILE *f, const char *s) {
  for (; *s; s++) switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
}

static const char *dash_attr(pf_dash d) {
  return d == PF_DASH_LONG ? " stroke-dasharray=\"6 4\"" : d == PF_DASH_SHORT ? " stroke-dasharray=\"4 3\"" : "";
}

static void svg_group(pf_canvas *c, bool begin) { fputs(begin ? "<g class=\"panel\">\n" : "</g>\n", c->ctx); }

static void svg_line(pf_canvas *c, double x1, double y1, double x2, double y2, const char *colour, double width,
                     pf_dash dash, const char *cls) {
  FILE *f = c->ctx;
  fputs("<line", f);
  if (cls) fprintf(f, " class=\"%s\"", cls);
  fprintf(f, " x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"", x1, y1, x2, y2, colour);
  if (width != 1) fprintf(f, " stroke-width=\"%g\"", width);
  fprintf(f, "%s/>\n", dash_attr(dash));
}

static void svg_rect(pf_canvas *c, double x, double y, double w, double h, const char *stroke) {
  fprintf(c->ctx, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"%s\"/>\n", x, y,
          w, h, stroke);
}

static void svg_polyline(pf_canvas *c, int n, const double *x, const double *y, const char *colour, pf_dash dash) {
  FILE *f = c->ctx;
  fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s points=\"", colour, dash_attr(dash));
  for (int i = 0; i < n; i++) fprintf(f, "%.1f,%.1f ", x[i], y[i]);
  fputs("\"/>\n", f);
}

static void svg_point(pf_canvas *c, double x, double y, double r, const char *colour, const char *series, double dx,
                      double dy) {
  FILE *f = c->ctx;
  if (!series) { /* a legend's dot, not data */
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>\n", x, y, r, colour);
    return;
  }
  fputs("<circle class=\"pt\" data-series=\"", f);
  esc(f, series);
  fprintf(f, "\" data-x=\"%.17g\" data-y=\"%.17g\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>\n", dx, dy, x, y, r,
          colour);
}

static void svg_text(pf_canvas *c, double x, double y, pf_anchor anchor, double size, bool bold, bool rotated,
                     const char *cls, const char *s) {
  static const char *const name[] = {"start", "middle", "end"};
  FILE *f = c->ctx;
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%.0f\"", x, y, name[anchor], size);
  if (bold) fputs(" font-weight=\"bold\"", f);
  if (cls) fprintf(f, " class=\"%s\"", cls);
  if (rotated) fprintf(f, " transform=\"rotate(-90 %.1f %.1f)\"", x, y);
  fputc('>', f);
  esc(f, s);
  fputs("</text>\n", f);
}

char *pf_plot_svg(const pf_plot *fig) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  double w, h;
  pf_plot_size(fig, &w, &h);
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
             "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
          w, h, w, h);
  pf_canvas c = {f, svg_group, svg_line, svg_rect, svg_polyline, svg_point, svg_text};
  pf_plot_draw(fig, &c);
  fputs("</svg>\n", f);
  if (fclose(f) != 0) { free(buf); return NULL; }
  return buf;
}
