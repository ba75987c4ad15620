/* test_plot.c - the figure layout (model/io/plot.c): legends inside the canvas even for a name wider than
 * it, one colour per series name across panels (and for a series drawn "like" another), the kind of
 * image a suffix names, and PNG/PDF bytes from cairo. */
#include "check.h"
#include "io/io.h"
#include "io/plotdraw.h" /* pf_plot_text_w: the width the layout reserves */

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The fill of the first data point of a series in an SVG, or "" (buf). */
static const char *fill_of(const char *svg, const char *series, char *buf, size_t n) {
  char key[160];
  snprintf(key, sizeof key, "data-series=\"%s\"", series);
  const char *at = strstr(svg, key);
  buf[0] = '\0';
  const char *f = at ? strstr(at, "fill=\"") : NULL;
  if (f) snprintf(buf, n, "%.7s", f + 6);
  return buf;
}

int main(void) {
  pf_plot fig;
  pf_plot_init(&fig);
  double x[3] = {1, 2, 4}, y[3] = {10, 19, 35}, z[3] = {10, 20, 40};
  char longname[200];
  memset(longname, 'w', 150);
  longname[150] = '\0';
  pf_plot_panel *a = pf_plot_panel_add(&fig, "A", "nodes", "tokens/s", true, true);
  pf_plot_panel *b = pf_plot_panel_add(&fig, "B", "nodes", "efficiency (%)", true, false);
  CHECK(pf_plot_add(a, "first", PF_PLOT_LINES, 3, x, y) == 0);
  CHECK(pf_plot_add(a, "second", PF_PLOT_LINES, 3, x, z) == 0);
  CHECK(pf_plot_add_like(a, "ideal: first", "first", PF_PLOT_DASHED, 3, x, z) == 0);
  CHECK(pf_plot_add(a, longname, PF_PLOT_POINTS, 3, x, y) == 0);
  CHECK(pf_plot_add(b, "second", PF_PLOT_LINES, 3, x, y) == 0); /* second in panel B: the colour of A's */
  CHECK(pf_plot_add(b, "first", PF_PLOT_LINES, 3, x, y) == 0);
  char *svg = pf_plot_svg(&fig);
  CHECK(svg != NULL);
  char f1[16], f2[16], f3[16];
  fill_of(svg, "first", f1, sizeof f1);
  fill_of(svg, "ideal: first", f3, sizeof f3);
  CHECK(f1[0] == '#' && strcmp(f1, f3) == 0);
  /* B's "second" (its first series) has A's second colour, not the first one */
  const char *bpanel = strstr(strstr(svg, "<g class=\"panel\">") + 1, "<g class=\"panel\">");
  CHECK(bpanel != NULL);
  fill_of(bpanel, "second", f2, sizeof f2);
  CHECK(f2[0] == '#' && strcmp(f1, f2) != 0);
  char f2a[16];
  CHECK(strcmp(fill_of(svg, "second", f2a, sizeof f2a), f2) == 0);
  /* every legend text ends inside the canvas; the long name is cut */
  double w = 0, h = 0;
  CHECK(sscanf(strstr(svg, "<svg "), "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lf\" height=\"%lf\"", &w, &h) == 2);
  int legends = 0;
  for (const char *p = strstr(svg, "class=\"legend\""); p; p = strstr(p + 1, "class=\"legend\"")) {
    const char *t = p;
    while (t > svg && strncmp(t, "<text", 5) != 0) t--;
    double tx = 0, fs = 0;
    CHECK(sscanf(t, "<text x=\"%lf\"", &tx) == 1);
    CHECK(sscanf(strstr(t, "font-size=\"") + 11, "%lf", &fs) == 1);
    const char *s = strchr(p, '>') + 1, *e = strstr(s, "</text>");
    char txt[256];
    snprintf(txt, sizeof txt, "%.*s", (int)(e - s), s);
    CHECK(tx >= 0 && tx + pf_plot_text_w(txt, fs, false) <= w);
    legends++;
  }
  CHECK(legends == 6);
  CHECK(strstr(svg, "...</text>") != NULL);
  free(svg);
  /* suffixes */
  pf_plot_kind k;
  CHECK(pf_plot_kind_of("a.svg", "--plot", &k) == 0 && k == PF_PLOT_SVG);
  CHECK(pf_plot_kind_of("a.pdf", "--plot", &k) == 0 && k == PF_PLOT_PDF);
  CHECK(pf_plot_kind_of("dir/a.png", "--plot", &k) == 0 && k == PF_PLOT_PNG);
  CHECK(pf_plot_kind_of("a.jpg", "--plot", &k) < 0);
  CHECK(pf_plot_kind_of(".png", "--plot", &k) < 0);
  /* cairo's bytes: a PNG signature, a PDF header */
  char *buf = NULL;
  size_t len = 0;
  CHECK(pf_plot_cairo(&fig, PF_PLOT_PNG, &buf, &len) == 0 && len > 8 && memcmp(buf, "\x89PNG\r\n\x1a\n", 8) == 0);
  free(buf);
  CHECK(pf_plot_cairo(&fig, PF_PLOT_PDF, &buf, &len) == 0 && len > 8 && memcmp(buf, "%PDF-", 5) == 0);
  free(buf);
  pf_plot_free(&fig);
  return pf_check_done();
}
