/* imgread.c - reads a PNG back with cairo (the library that wrote it) and
 * prints "WIDTH HEIGHT INKED": its size in pixels and how many pixels are not
 * white, so that a test sees a figure that loads and is not blank
 * (tests/cli/proposal_output.sh).  Exit 1 when the file does not load. */
#include <cairo.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: pf-imgread FILE.png\n"); return 2; }
  cairo_surface_t *s = cairo_image_surface_create_from_png(argv[1]);
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    fprintf(stderr, "pf-imgread: %s: %s\n", argv[1], cairo_status_to_string(cairo_surface_status(s)));
    cairo_surface_destroy(s);
    return 1;
  }
  cairo_surface_flush(s);
  int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
  int stride = cairo_image_surface_get_stride(s);
  const unsigned char *data = cairo_image_surface_get_data(s);
  long inked = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint32_t px = *(const uint32_t *)(data + (size_t)y * (size_t)stride + 4 * (size_t)x);
      if ((px & 0xFFFFFF) != 0xFFFFFF) inked++;
    }
  printf("%d %d %ld\n", w, h, inked);
  cairo_surface_destroy(s);
  return 0;
}
