/* plot.h - charts for the figures a proposal and a validation report need:
 * scaling curves, cost versus scale, power-cap trade-offs and parity plots,
 * written as SVG, PDF or PNG (chosen by the file's suffix).  One layout
 * (plot.c) draws on a canvas (plotdraw.h): the SVG canvas writes text itself
 * (plot_svg.c) so that every point keeps its exact numbers; PDF and PNG are
 * drawn by cairo (plot_cairo.c).
 *
 * A figure is one or more panels stacked vertically, each with labelled axes
 * (the unit is part of the label), a title, series of points (optionally
 * joined by lines), an optional horizontal reference line (e.g. an efficiency
 * threshold) and, for parity plots, the y = x diagonal with a +-band.  Each
 * panel's legend sits under its axes, inside the canvas, wrapped into rows.
 * A series has one colour in every panel: the colour follows its name, or
 * the name it is drawn "like" (an ideal or a range drawn in the colour of
 * the series it belongs to).  Under the panels a caption says what was
 * plotted (conversions such as billing units go there, not on an axis: one
 * unit per axis).  Every point is written as an
 * element carrying its exact coordinates (data-series, data-x, data-y with 17
 * significant digits), so tests and users can read the plotted numbers back.
 */
#ifndef PREFLIGHT_PLOT_H
#define PREFLIGHT_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#define PF_PLOT_MAXSERIES 12
#define PF_PLOT_MAXPANELS 4

typedef enum { PF_PLOT_LINES, PF_PLOT_POINTS, PF_PLOT_DASHED } pf_plot_style;

typedef struct pf_plot_series {
  char name[96];
  char like[96];        /* the series whose colour it takes; "" = its own name */
  pf_plot_style style;
  int n;
  double *x, *y;        /* owned (pf_plot_add copies); points with a non-finite or, on a log axis,
                           non-positive coordinate are not drawn */
} pf_plot_series;

typedef struct pf_plot_panel {
  char title[160];
  char xlabel[96], ylabel[96]; /* with units, e.g. "nodes", "parallel efficiency (%)" */
  bool logx, logy;
  double ref_y;               /* horizontal reference line; NAN for none */
  char ref_label[64];
  double parity_band;         /* > 0: draw y = x and y = x (1 +- band) (parity plot) */
  int nseries;
  pf_plot_series series[PF_PLOT_MAXSERIES];
} pf_plot_panel;

typedef struct pf_plot {
  char caption[1024];
  int npanels;
  pf_plot_panel panel[PF_PLOT_MAXPANELS];
} pf_plot;

/* Start a figure; every panel's ref_y is NAN.  Free with pf_plot_free(). */
void pf_plot_init(pf_plot *f);
void pf_plot_free(pf_plot *f);
/* Add a panel; returns it (NULL when there are PF_PLOT_MAXPANELS already). */
pf_plot_panel *pf_plot_panel_add(pf_plot *f, const char *title, const char *xlabel, const char *ylabel, bool logx,
                                 bool logy);
/* Add a series (x and y copied).  Returns 0, or PF_EINVAL / PF_ENOMEM. */
int pf_plot_add(pf_plot_panel *p, const char *name, pf_plot_style style, int n, const double *x, const double *y);
/* The same, drawn in the colour of the series named `like` (NULL: its own). */
int pf_plot_add_like(pf_plot_panel *p, const char *name, const char *like, pf_plot_style style, int n,
                     const double *x, const double *y);

/* The image kinds, by the file's suffix. */
typedef enum { PF_PLOT_SVG, PF_PLOT_PDF, PF_PLOT_PNG } pf_plot_kind;
#define PF_PLOT_SUFFIXES ".svg, .pdf, .png"
/* The kind path's suffix asks for; PF_EINVAL naming `what` (the option) and the valid suffixes. */
int pf_plot_kind_of(const char *path, const char *what, pf_plot_kind *kind);

/* The figure as an SVG document (caller frees), or NULL when out of memory. */
char *pf_plot_svg(const pf_plot *f);
/* The figure as a PDF or PNG drawn by cairo (*len bytes, caller frees); 0 or PF_ENOMEM / PF_EIO. */
int pf_plot_cairo(const pf_plot *f, pf_plot_kind kind, char **buf, size_t *len);
/* Write the figure to path in the kind its suffix names, through a temporary file renamed into place. */
int pf_plot_write(const pf_plot *f, const char *path);

#endif
