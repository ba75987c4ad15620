/* progress.c - the progress bar of progress.h.
 *
 * Line format: "sweep  12/64 [#####-----------]  3.2 items/s  ETA 16 s", redrawn
 * in place with a carriage return and erased with "\r\033[K" at the end.  The
 * rate is the mean since the start (the items of a sweep differ in cost, so a
 * short window would swing); the ETA is what is left at that rate.
 */
#define _DEFAULT_SOURCE
#include "progress.h"

#include "interrupt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
  bool enabled, disabled, active, drawn, bytes;
  const char *label;
  long long total, done;
  double t0, last;
} B;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void pf_progress_enable(bool on) { B.enabled = on; }
void pf_progress_disable(void) {
  B.disabled = true;
  B.active = false;
}

static bool wanted(void) {
  if (B.disabled) return false;
  const char *e = getenv("PREFLIGHT_PROGRESS");
  if (e && strcmp(e, "0") == 0) return false;
  if (e && strcmp(e, "1") == 0) return true;
  return B.enabled && isatty(STDERR_FILENO);
}

void pf_progress_begin(const char *label, long long total, bool bytes) {
  B.active = wanted();
  B.drawn = false;
  B.label = label;
  B.total = total > 0 ? total : 0;
  B.done = 0;
  B.bytes = bytes;
  B.t0 = B.last = now_s();
}

static void fmt_count(char *buf, size_t n, long long x, bool bytes) {
  if (!bytes) snprintf(buf, n, "%lld", x);
  else if (x >= (1LL << 30)) snprintf(buf, n, "%.1f GiB", x / (double)(1LL << 30));
  else if (x >= (1LL << 20)) snprintf(buf, n, "%.1f MiB", x / (double)(1LL << 20));
  else snprintf(buf, n, "%.0f KiB", x / 1024.0);
}

static void draw(bool force) {
  if (!B.active) return;
  double t = now_s();
  if (!force && t - B.last < 0.1) return;
  B.last = t;
  double el = t - B.t0, rate = el > 0 ? B.done / el : 0;
  char line[256], done[32], total[32], r[48] = "", eta[32] = "", bar[24] = "";
  fmt_count(done, sizeof done, B.done, B.bytes);
  fmt_count(total, sizeof total, B.total, B.bytes);
  if (B.total > 0) {
    int w = 20, k = (int)(w * (double)B.done / (double)B.total);
    if (k > w) k = w;
    for (int i = 0; i < w; i++) bar[i] = i < k ? '#' : '-';
    bar[w] = '\0';
  }
  if (el >= 0.5 && rate > 0) {
    if (B.bytes) snprintf(r, sizeof r, "  %.1f MiB/s", rate / (1 << 20));
    else snprintf(r, sizeof r, "  %.3g items/s", rate);
    if (B.total > B.done) {
      double left = (B.total - B.done) / rate;
      if (left < 90) snprintf(eta, sizeof eta, "  ETA %.0f s", left);
      else if (left < 5400) snprintf(eta, sizeof eta, "  ETA %.0f min", left / 60);
      else snprintf(eta, sizeof eta, "  ETA %.1f h", left / 3600);
    }
  }
  int n;
  if (B.total > 0) n = snprintf(line, sizeof line, "\r%s  %s/%s [%s]%s%s\033[K", B.label, done, total, bar, r, eta);
  else n = snprintf(line, sizeof line, "\r%s  %s%s\033[K", B.label, done, r);
  if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) B.active = false;
  B.drawn = true;
  pf_interrupt_line_drawn(1);
}

void pf_progress_item(void) {
  if (!B.active || B.bytes) return;
  B.done++;
  draw(B.done == B.total);
}

void pf_progress_set(long long done) {
  if (!B.active) return;
  B.done = done;
  draw(false);
}

void pf_progress_tick(void) { draw(false); }

void pf_progress_pause(void) {
  if (B.active && B.drawn) {
    static const char erase[] = "\r\033[K";
    if (write(STDERR_FILENO, erase, sizeof erase - 1) < 0) {}
    B.drawn = false;
    pf_interrupt_line_drawn(0);
  }
}

void pf_progress_end(void) {
  if (B.active && B.drawn) {
    static const char erase[] = "\r\033[K";
    if (write(STDERR_FILENO, erase, sizeof erase - 1) < 0) {}
    pf_interrupt_line_drawn(0);
  }
  B.active = false;
}
