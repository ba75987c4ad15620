/* progress.h - one progress bar on stderr for long work (sweep, tune,
 * validate, calibrate): items or bytes done, rate and time left.
 *
 * The bar is drawn only when stderr is a terminal and main() enabled it
 * (pf_progress_enable), never in workers, and at most ten times a second; it
 * is erased when the work ends, so results and messages print on clean lines.
 * $PREFLIGHT_PROGRESS=0 turns it off, =1 draws it even when stderr is not a
 * terminal (for tests).  One line per process: a bar begun while another
 * runs is drawn inside it (plan's scales, each tuned), and ends with its end.
 */
#ifndef PREFLIGHT_PROGRESS_H
#define PREFLIGHT_PROGRESS_H

#include <stdbool.h>

void pf_progress_enable(bool on);   /* main(): allow the bar in this process */
void pf_progress_disable(void);     /* workers: never draw */

/* Start a bar of `total` units (items, or bytes when bytes is true); total
 * 0 means unknown (no ETA).  label is borrowed until pf_progress_end(). */
void pf_progress_begin(const char *label, long long total, bool bytes);
void pf_progress_item(void);                /* one more item done */
void pf_progress_set(long long done);       /* absolute progress (bytes read) */
void pf_progress_tick(void);                /* redraw if due (rate, ETA) */
void pf_progress_pause(void);               /* erase the bar before printing a line; the next
                                               update draws it again */
void pf_progress_end(void);                 /* erase the bar */

#endif
