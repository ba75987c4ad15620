/* fullest.c - what `--engine full` will cost, known before it runs (issue 30
 * item 7): the events it will simulate, counted from the same inputs the run
 * reads (fullsim.c): per GPU, each forward and backward of its schedule is an
 * execution plus at most one point-to-point send; each collective pattern
 * (a stage's gradient reduction, the parameter all-gather, the tied
 * embeddings) adds one flow per flow and repetition of each step; each GPU
 * runs one optimizer execution.  Above PF_FULLSIM_MAX_EVENTS the run is
 * refused unless --force: SimGrid's cost grows faster than the event count
 * (every flow re-shares the links it crosses), so a run past the limit takes
 * many minutes (docs/engine.md). */
#include "fullsim.h"

#include "core/core.h"

#include <stdio.h>

static double pattern_events(const pf_coll_pattern *c) {
  double n = 0;
  for (int k = 0; c && k < c->nsteps; k++) n += (double)c->steps[k].nflows * (c->steps[k].reps > 0 ? c->steps[k].reps : 1);
  return n;
}

double pf_fullsim_estimate(const pf_fullsim_input *in) {
  const pf_plan *p = &in->sc->plan;
  int V = p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1;
  double gpus = in->sc->gpus;
  double n = gpus * (4.0 * p->grad_accum * V + 1);
  for (int s = 0; s < p->pp; s++) n += pattern_events(&in->grad[s]) + (in->ag ? pattern_events(&in->ag[s]) : 0);
  return n + pattern_events(in->emb);
}

int pf_fullsim_admit(const pf_fullsim_input *in) {
  double n = pf_fullsim_estimate(in);
  if (n <= PF_FULLSIM_MAX_EVENTS || in->sc->force) return 0;
  return pf_error_set(PF_EINVAL, "--engine full would simulate about %.3g events (%d GPUs x %d microbatches and "
                      "the collectives' flows), more than its limit of %.3g (a run of many minutes): use the "
                      "default engine, or --force to run it anyway", n, in->sc->gpus, in->sc->plan.grad_accum,
                      (double)PF_FULLSIM_MAX_EVENTS);
}
