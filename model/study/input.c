/* input.c - the input pipeline a step consumes from (predict.h): what one node's GPUs read per iteration, what a
 * priced pipeline (--input-rate, --input-sample-time, a fit's rate) costs, and the rate an unpriced one must reach
 * for the step not to wait on it (docs/model.md, "Input pipeline"). */
#include "predict.h"

#include "job/job.h"

double pf_sample_bytes(const pf_scenario *sc) {
  return sc->sample_bytes > 0 ? sc->sample_bytes : sc->workload.sample_bytes;
}

/* samples a node's GPUs consume per iteration */
static double node_samples(const pf_scenario *sc) {
  double gpn = sc->gpus < sc->machine.gpus_per_node ? sc->gpus : sc->machine.gpus_per_node;
  return (double)sc->plan.gbs * gpn / sc->gpus;
}

/* Input pipeline per iteration (off unless --input-rate or --input-sample-time is given): a node's loaders
 * read the samples of its GPUs at input_rate_Bps, and each GPU's loader prepares its replica's samples at
 * input_sample_s each; prefetching overlaps it with the step, so the step waits only for what is longer
 * (tf.data / DataLoader with prefetch: the consumer blocks only when the queue is empty). */
bool pf_input_priced(const pf_scenario *sc) { return sc->input_rate_Bps > 0 || sc->input_sample_s > 0; }

double pf_input_time(const pf_scenario *sc) {
  const pf_plan *p = &sc->plan;
  if (!pf_input_priced(sc)) return 0;
  double bytes = pf_sample_bytes(sc);
  double read = sc->input_rate_Bps > 0 && bytes > 0 ? node_samples(sc) * bytes / sc->input_rate_Bps : 0;
  double prep = sc->input_sample_s * p->gbs / ((double)p->dp * p->cp);
  return read > prep ? read : prep;
}

/* what the node's GPUs consume per second at a step of step_s, whatever delivers it */
double pf_input_need_Bps(const pf_scenario *sc, double step_s) {
  double bytes = pf_sample_bytes(sc);
  return bytes > 0 && step_s > 0 ? node_samples(sc) * bytes / step_s : 0;
}
