/* progress.c - the progress bar of progress.h.
 *
 * Line format: "sweep  12/64 [#####-----------]  3.2 items/s  ETA 16 s", redrawn
 * in place with a carriage return and erased with "\r\033[K" at the end.  The
 * rate is the innermost bar's mean since its start (the items of a sweep
 * differ in cost, so a short window would swing); the ETA is what is left of
 * the whole work's fraction at the pace since the outermost bar began.  A
 * count never passes its total: an item reported past it (a loop that counts
 * more than it announced) leaves the bar full, never "48484/3".
 */
#define _DEFAULT_SOURCE
#include "progress.h"

#include "interrupt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One bar: a level of the stack.  A loop inside a loop (plan's scales, each
 * tuned; sweep --tune-each) begins a bar inside the running one: the line
 * shows every level's count ("plan  2/7  tune  1234/48484 [###---]"), the
 * bar the whole work's fraction (the outer items done plus the inner
 * fraction of the current one) and the ETA from the outermost bar's start. */
typedef struct {
  const char *label;
  long long total, done;
  bool bytes;
  double t0;
} level;

enum { MAXDEPTH = 4 };
static struct {
  bool enabled, disabled, active, drawn;
  int depth;          /* levels begun and not ended (nested begins past MAXDEPTH are counted, not drawn) */
  level L[MAXDEPTH];
  double last;
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

/* The level updates go to: the innermost one drawn. */
static level *top(void) { return B.depth > 0 ? &B.L[(B.depth < MAXDEPTH ? B.depth : MAXDEPTH) - 1] : NULL; }

void pf_progress_begin(const char *label, long long total, bool bytes) {
  if (B.depth == 0) {
    B.active = wanted();
    B.drawn = false;
    B.last = now_s();
  }
  B.depth++;
  if (B.depth > MAXDEPTH) return;
  level *l = top();
  *l = (level){label, total > 0 ? total : 0, 0, bytes, now_s()};
}

static void fmt_count(char *buf, size_t n, long long x, bool bytes) {
  if (!bytes) snprintf(buf, n, "%lld", x);
  else if (x >= (1LL << 30)) snprintf(buf, n, "%.1f GiB", x / (double)(1LL << 30));
  else if (x >= (1LL << 20)) snprintf(buf, n, "%.1f MiB", x / (double)(1LL << 20));
  else snprintf(buf, n, "%.0f KiB", x / 1024.0);
}

/* The whole work's fraction done, from the innermost level out; -1 when a level's total is unknown. */
static double fraction(int depth) {
  double f = 0;
  for (int i = depth - 1; i >= 0; i--) {
    const level *l = &B.L[i];
    if (l->total <= 0) return -1;
    double inner = i == depth - 1 ? 0 : f;
    f = ((double)l->done + inner) / (double)l->total;
    if (f > 1) f = 1;
  }
  return f;
}

/* "label  done/total" of every level into line. */
static size_t counts(char *line, size_t len, int depth) {
  size_t n = 0;
  for (int i = 0; i < depth && n < len; i++) {
    const level *l = &B.L[i];
    char done[32], total[32];
    fmt_count(done, sizeof done, l->done, l->bytes);
    fmt_count(total, sizeof total, l->total, l->bytes);
    if (l->total > 0) n += (size_t)snprintf(line + n, len - n, "%s%s  %s/%s", i ? "  " : "", l->label, done, total);
    else n += (size_t)snprintf(line + n, len - n, "%s%s  %s", i ? "  " : "", l->label, done);
  }
  return n < len ? n : len - 1;
}

static void draw(bool force) {
  if (!B.active || B.depth == 0) return;
  double t = now_s();
  if (!force && t - B.last < 0.1) return;
  B.last = t;
  int depth = B.depth < MAXDEPTH ? B.depth : MAXDEPTH;
  const level *in = &B.L[depth - 1];
  double el = t - B.L[0].t0, el_in = t - in->t0, rate = el_in > 0 ? in->done / el_in : 0;
  double f = fraction(depth);
  char line[512], r[48] = "", eta[32] = "", bar[24] = "";
  if (f >= 0) {
    int w = 20, k = (int)(w * f);
    for (int i = 0; i < w; i++) bar[i] = i < k ? '#' : '-';
    bar[w] = '\0';
  }
  if (el >= 0.5 && rate > 0) {
    if (in->bytes) snprintf(r, sizeof r, "  %.1f MiB/s", rate / (1 << 20));
    else snprintf(r, sizeof r, "  %.3g items/s", rate);
    if (f > 0 && f < 1) {
      double left = el * (1 - f) / f;
      if (left < 90) snprintf(eta, sizeof eta, "  ETA %.0f s", left);
      else if (left < 5400) snprintf(eta, sizeof eta, "  ETA %.0f min", left / 60);
      else snprintf(eta, sizeof eta, "  ETA %.1f h", left / 3600);
    }
  }
  char c[320];
  counts(c, sizeof c, depth);
  int n;
  if (f >= 0) n = snprintf(line, sizeof line, "\r%s [%s]%s%s\033[K", c, bar, r, eta);
  else n = snprintf(line, sizeof line, "\r%s%s\033[K", c, r);
  if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) B.active = false;
  B.drawn = true;
  pf_interrupt_line_drawn(1);
}

void pf_progress_item(void) {
  level *l = top();
  if (!B.active || !l || l->bytes || B.depth > MAXDEPTH) return;
  if (l->done < l->total || l->total == 0) l->done++;
  draw(l->done == l->total);
}

void pf_progress_set(long long done) {
  level *l = top();
  if (!B.active || !l || B.depth > MAXDEPTH) return;
  l->done = done;
  draw(false);
}

void pf_progress_tick(void) { draw(false); }

static void erase(void) {
  if (B.active && B.drawn) {
    static const char seq[] = "\r\033[K";
    if (write(STDERR_FILENO, seq, sizeof seq - 1) < 0) {}
    B.drawn = false;
    pf_interrupt_line_drawn(0);
  }
}

void pf_progress_pause(void) { erase(); }

void pf_progress_end(void) {
  if (B.depth == 0) return;
  if (--B.depth > 0) return; /* an inner bar: the outer one's next item redraws the line */
  erase();
  B.active = false;
}
