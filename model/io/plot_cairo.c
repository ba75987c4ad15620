/* plot_cairo.c - PDF and PNG figures: plot.c's layout drawn by cairo
 * (https://www.cairographics.org, Debian's libcairo2), the maintained 2D
 * library behind GTK and Firefox's printing, rather than an encoder of our
 * own.  The page is the SVG's size at 96 pixels per inch (0.75 pt per pixel)
 * for PDF, and twice its pixels for PNG (a sharp figure in a proposal's
 * page).  The PDF's creation date is left out, so that the same figure gives
 * the same bytes. */
#include "plotdraw.h"

#include "core/core.h"

#include <cairo-pdf.h>
#include <cairo.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* ---- bytes written into memory ---- */

typedef struct {
  char *buf;
  size_t len, cap;
  bool failed;
} membuf;

static cairo_status_t mem_write(void *closure, const unsigned char *data, unsigned int n) {
  membuf *m = closure;
  if (m->len + n > m->cap) {
    size_t cap = m->cap ? m->cap : 65536;
    while (cap < m->len + n) cap *= 2;
    char *b = realloc(m->buf, cap);
    if (!b) { m->failed = true; return CAIRO_STATUS_WRITE_ERROR; }
    m->buf = b;
    m->cap = cap;
  }
  memcpy(m->buf + m->len, data, n);
  m->len += n;
  return CAIRO_STATUS_SUCCESS;
}

/* ---- the canvas ---- */

/* "#rrggbb" or "#rgb" */
static void set_colour(cairo_t *cr, const char *hex) {
  unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);
  if (strlen(hex) == 4) v = ((v >> 8) & 15) * 0x110000 + ((v >> 4) & 15) * 0x1100 + (v & 15) * 0x11;
  cairo_set_source_rgb(cr, ((v >> 16) & 255) / 255.0, ((v >> 8) & 255) / 255.0, (v & 255) / 255.0);
}

static void set_dash(cairo_t *cr, pf_dash d) {
  static const double lng[] = {6, 4}, sht[] = {4, 3};
  if (d == PF_DASH_NONE) cairo_set_dash(cr, NULL, 0, 0);
  else cairo_set_dash(cr, d == PF_DASH_LONG ? lng : sht, 2, 0);
}

static void cr_group(pf_canvas *c, bool begin) { (void)c, (void)begin; }

static void cr_line(pf_canvas *c, double x1, double y1, double x2, double y2, const char *colour, double width,
                    pf_dash dash, const char *cls) {
  (void)cls;
  cairo_t *cr = c->ctx;
  set_colour(cr, colour);
  set_dash(cr, dash);
  cairo_set_line_width(cr, width);
  cairo_move_to(cr, x1, y1);
  cairo_line_to(cr, x2, y2);
  cairo_stroke(cr);
}

static void cr_rect(pf_canvas *c, double x, double y, double w, double h, const char *stroke) {
  cairo_t *cr = c->ctx;
  set_colour(cr, stroke);
  set_dash(cr, PF_DASH_NONE);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, x, y, w, h);
  cairo_stroke(cr);
}

static void cr_polyline(pf_canvas *c, int n, const double *x, const double *y, const char *colour, pf_dash dash) {
  cairo_t *cr = c->ctx;
  set_colour(cr, colour);
  set_dash(cr, dash);
  cairo_set_line_width(cr, 1.8);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  for (int i = 0; i < n; i++) (i ? cairo_line_to : cairo_move_to)(cr, x[i], y[i]);
  cairo_stroke(cr);
}

static void cr_point(pf_canvas *c, double x, double y, double r, const char *colour, const char *series, double dx,
                     double dy) {
  (void)series, (void)dx, (void)dy;
  cairo_t *cr = c->ctx;
  set_colour(cr, colour);
  cairo_new_sub_path(cr);
  cairo_arc(cr, x, y, r, 0, 2 * PI);
  cairo_fill(cr);
}

static void cr_text(pf_canvas *c, double x, double y, pf_anchor anchor, double size, bool bold, bool rotated,
                    const char *cls, const char *s) {
  (void)cls;
  cairo_t *cr = c->ctx;
  cairo_save(cr);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  double shift = anchor == PF_ANCHOR_START ? 0 : anchor == PF_ANCHOR_MIDDLE ? e.x_advance / 2 : e.x_advance;
  cairo_translate(cr, x, y);
  if (rotated) cairo_rotate(cr, -PI / 2);
  set_colour(cr, "#000000");
  cairo_move_to(cr, -shift, 0);
  cairo_show_text(cr, s);
  cairo_restore(cr);
}

/* Draw the figure on a surface of w x h pixels scaled by `scale`. */
static int draw(const pf_plot *f, cairo_surface_t *sf, double scale, double w, double h) {
  cairo_t *cr = cairo_create(sf);
  cairo_scale(cr, scale, scale);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_rectangle(cr, 0, 0, w, h);
  cairo_fill(cr);
  pf_canvas c = {cr, cr_group, cr_line, cr_rect, cr_polyline, cr_point, cr_text};
  pf_plot_draw(f, &c);
  int bad = cairo_status(cr) != CAIRO_STATUS_SUCCESS;
  cairo_destroy(cr);
  return bad ? pf_error_set(PF_EIO, "cairo: %s", cairo_status_to_string(cairo_surface_status(sf))) : 0;
}

int pf_plot_cairo(const pf_plot *f, pf_plot_kind kind, char **buf, size_t *len) {
  double w, h;
  pf_plot_size(f, &w, &h);
  membuf m = {0};
  cairo_surface_t *sf;
  double scale = kind == PF_PLOT_PDF ? 0.75 : 2.0;
  if (kind == PF_PLOT_PDF) sf = cairo_pdf_surface_create_for_stream(mem_write, &m, w * scale, h * scale);
  else sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)ceil(w * scale), (int)ceil(h * scale));
  if (cairo_surface_status(sf) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(sf);
    return pf_error_set(PF_ENOMEM, "cairo: %s", cairo_status_to_string(cairo_surface_status(sf)));
  }
  if (kind == PF_PLOT_PDF) {
    cairo_pdf_surface_set_metadata(sf, CAIRO_PDF_METADATA_CREATOR, "preflight");
    cairo_pdf_surface_set_metadata(sf, CAIRO_PDF_METADATA_CREATE_DATE, "");
  }
  int rc = draw(f, sf, scale, w, h);
  if (rc == 0 && kind == PF_PLOT_PNG && cairo_surface_write_to_png_stream(sf, mem_write, &m) != CAIRO_STATUS_SUCCESS)
    rc = pf_error_set(m.failed ? PF_ENOMEM : PF_EIO, "cairo: the PNG could not be encoded");
  cairo_surface_finish(sf);
  if (rc == 0 && (m.failed || cairo_surface_status(sf) != CAIRO_STATUS_SUCCESS))
    rc = pf_error_set(m.failed ? PF_ENOMEM : PF_EIO, "cairo: the PDF could not be written");
  cairo_surface_destroy(sf);
  if (rc < 0) { free(m.buf); return rc; }
  *buf = m.buf;
  *len = m.len;
  return 0;
}
