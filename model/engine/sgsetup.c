/* sgsetup.c - SimGrid start-up shared by the pipeline DES and the full engine (see sgsetup.h). */
#include "sgsetup.h"

#include "core/core.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>
#include <xbt/config.h>
#include <xbt/log.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void pf_simgrid_start(const char *platform, int stack_kib) {
  int argc = 1;
  char arg0[] = "preflight";
  char *argv[] = {arg0, NULL};
  /* SimGrid's own diagnostics never reach the user raw (issue 30): every category is silenced, critical
   * ones ("Oops! Deadlock detected") included; what goes wrong in a simulation shows in its result, which
   * pf_prediction_check (study/sanity.c) refuses as an engine failure with its cause */
  xbt_log_control_set("root.thres:critical");
  xbt_log_threshold_set(&_XBT_LOGV(XBT_LOG_ROOT_CAT), xbt_log_priority_infinite);
  simgrid_init(&argc, argv);
  xbt_log_threshold_set(&_XBT_LOGV(XBT_LOG_ROOT_CAT), xbt_log_priority_infinite);
  sg_cfg_set_string("network/model", "CM02");
  sg_cfg_set_boolean("network/crosstraffic", "no");
  sg_cfg_set_double("network/TCP-gamma", 1e12);
  sg_cfg_set_int("contexts/stack-size", stack_kib);
  simgrid_load_platform(platform);
  pf_temp_remove(platform); /* loaded: the file is no longer needed */
}

static int finished;        /* actors that reached pf_simgrid_actor_done (one simulation per forked process) */
static const char *running; /* the engine's name, for the test hook */

void pf_simgrid_actor_done(void) {
  static bool hooked;
  const char *h = getenv("PREFLIGHT_TEST_SIMGRID_DEADLOCK");
  if (h && (strcmp(h, "1") == 0 || strcmp(h, running) == 0) && !hooked) { /* the hook: wait for no message */
    hooked = true;
    sg_mailbox_get(sg_mailbox_by_name("preflight-test-deadlock"));
  }
  finished++;
}

int pf_simgrid_run(const char *engine, int actors) {
  running = engine;
  simgrid_run();
  return actors - finished;
}

void pf_simgrid_exchange(sg_comm_t *pend, sg_mailbox_t in, double recv) {
  sg_comm_t cs[2];
  void *data;
  int nc = 0;
  if (*pend) cs[nc++] = *pend;
  if (in) cs[nc++] = sg_mailbox_get_async(in, &data);
  if (nc > 0) sg_comm_wait_all(cs, (size_t)nc);
  *pend = NULL;
  if (in && recv > 0) sg_actor_sleep_for(recv);
}
