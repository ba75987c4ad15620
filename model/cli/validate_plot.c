/* validate_plot.c - the parity plot of `preflight validate --plot FILE.svg|.pdf|.png`:
 * predicted against measured, one panel per metric (the most frequent
 * first), log axes, y = x with the +-10 % band, drawn by plot.c (the one home
 * of figures).  The caption names the runs' file without its folder (no
 * machine path in a figure).  Bounds (>= x) are drawn at the bound, ranges at their
 * middle; every point carries its exact coordinates. */
#include "validate_out.h"

#include "core/core.h"
#include "io/io.h"
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double pdisp(const pf_vpoint *p, double x) { return p->metric == PF_MET_SCALING ? 100 * x : x; }

int pf_vplot_write(const pf_vsum *s, const char *title, const char *path) {
  int count[PF_MET_COUNT] = {0};
  for (int i = 0; i < s->npts; i++) count[s->pts[i].metric]++;
  pf_plot fig;
  pf_plot_init(&fig);
  double *x = malloc((size_t)(s->npts + 1) * sizeof *x), *y = malloc((size_t)(s->npts + 1) * sizeof *y);
  int rc = x && y ? 0 : pf_error_set(PF_ENOMEM, "out of memory"), shown = 0, left = 0;
  for (int k = 0; k < PF_MET_COUNT && rc == 0; k++) {
    int best = -1;
    for (int m = 0; m < PF_MET_COUNT; m++) if (count[m] > 0 && (best < 0 || count[m] > count[best])) best = m;
    if (best < 0) break;
    if (shown == PF_PLOT_MAXPANELS) { left += count[best]; count[best] = 0; continue; }
    pf_metric m = (pf_metric)best;
    char lx[96], ly[96], ptitle[160];
    snprintf(lx, sizeof lx, "measured %s (%s)", pf_metric_name(m), pf_metric_unit(m));
    snprintf(ly, sizeof ly, "predicted %s (%s)", pf_metric_name(m), pf_metric_unit(m));
    snprintf(ptitle, sizeof ptitle, "%s: %d rows", pf_metric_name(m), count[best]);
    pf_plot_panel *p = pf_plot_panel_add(&fig, ptitle, lx, ly, true, true);
    p->parity_band = 0.10;
    int n = 0;
    for (int i = 0; i < s->npts; i++) {
      const pf_vpoint *q = &s->pts[i];
      if (q->metric != best) continue;
      double meas = q->bound == PF_BOUND_RANGE ? 0.5 * (q->measured + q->measured_hi) : q->measured;
      x[n] = pdisp(q, meas);
      y[n++] = pdisp(q, q->predicted);
    }
    rc = pf_plot_add(p, "rows", PF_PLOT_POINTS, n, x, y);
    count[best] = 0;
    shown++;
  }
  char more[96] = "";
  if (left > 0) snprintf(more, sizeof more, " %d rows of further metrics are not drawn (see the table).", left);
  snprintf(fig.caption, sizeof fig.caption,
           "Predicted (preflight %s) against measured, %.200s: one panel per metric, log axes; solid y = x, dashed "
           "+-10 %%. Bounds (>= x) are drawn at the bound, ranges at their middle.%s",
           pf_version(), strrchr(title, '/') ? strrchr(title, '/') + 1 : title, more);
  if (rc == 0) rc = pf_plot_write(&fig, path);
  free(x);
  free(y);
  pf_plot_free(&fig);
  return rc;
}
