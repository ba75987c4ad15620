/* sanity.c - a prediction from inputs that passed their checks (core/bounds.c
 * and every reader) must be a number a proposal can quote: an iteration time,
 * throughput, power and energy that are finite and positive, an MFU in
 * (0, 100 %], no negative term in the breakdown.  Anything else is the
 * engine's failure, not a result (issue 30; docs/exit-codes.md: a simulation
 * engine failure is exit 2 with its cause), so no command prints it: predict,
 * sweep, tune, plan, compare and validate all go through pf_predict. */
#include "predict.h"

#include "core/core.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static int bad(const char *what, double x, const char *want) {
  return pf_error_set(PF_ESIM, "simulation engine failure: the prediction's %s is %g, not %s, from inputs that "
                      "passed their checks; this is a bug in preflight, please report it with the command",
                      what, x, want);
}

/* Test hook (tests/robustness/cases.txt): PREFLIGHT_TEST_BREAK_ENGINE=nan makes every prediction's iteration
 * time NaN, =kill kills the process predicting (a sweep's worker, as the out-of-memory killer would), so that
 * each command is seen to stop with the engine's failure; no engine bug is at hand to test it with. */
static double test_hook(double t) {
  const char *h = getenv("PREFLIGHT_TEST_BREAK_ENGINE");
  if (h && strcmp(h, "kill") == 0) raise(SIGKILL);
  return h && strcmp(h, "nan") == 0 ? NAN : t;
}

int pf_prediction_check(const pf_prediction *p) {
  const struct { const char *what; double x; } pos[] = {
    {"iteration time (s)", test_hook(p->iteration_time_s)}, {"throughput (samples/s)", p->samples_per_s},
    {"MFU", p->mfu}, {"GPU energy per iteration (J)", p->energy.gpu_J},
    {"node energy per iteration (J)", p->energy.node_J}, {"facility energy per iteration (J)", p->energy.facility_J},
    {"average power per GPU (W)", p->energy.avg_power_per_gpu_W},
    {"average power per node (W)", p->energy.avg_power_per_node_W}};
  for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
    if (!(isfinite(pos[i].x) && pos[i].x > 0)) return bad(pos[i].what, pos[i].x, "finite and positive");
  /* MFU against the dense peak of the precision the job runs in: above 100 % the model ran faster than the
   * hardware can (a 1 % margin for the rounding of a datasheet peak) */
  if (p->mfu > 1.01) return bad("MFU", p->mfu, "at most 1 (100 %)");
  const double *terms = (const double *)&p->breakdown_s;
  for (size_t i = 0; i < sizeof p->breakdown_s / sizeof *terms; i++)
    if (!(isfinite(terms[i]) && terms[i] >= 0)) return bad("breakdown term", terms[i], "finite and non-negative");
  if (!(isfinite(p->eval_iteration_s) && p->eval_iteration_s >= 0))
    return bad("evaluation pass time (s)", p->eval_iteration_s, "finite and non-negative");
  return 0;
}
