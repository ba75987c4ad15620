/* sgsetup.c - SimGrid start-up shared by the pipeline DES and the full engine (see sgsetup.h). */
#include "sgsetup.h"

#include "core/core.h"

#include <simgrid/engine.h>
#include <xbt/config.h>
#include <xbt/log.h>

void pf_simgrid_start(const char *platform, int stack_kib) {
  int argc = 1;
  char arg0[] = "preflight";
  char *argv[] = {arg0, NULL};
  xbt_log_control_set("root.thres:critical");
  simgrid_init(&argc, argv);
  sg_cfg_set_string("network/model", "CM02");
  sg_cfg_set_boolean("network/crosstraffic", "no");
  sg_cfg_set_double("network/TCP-gamma", 1e12);
  sg_cfg_set_int("contexts/stack-size", stack_kib);
  simgrid_load_platform(platform);
  pf_temp_remove(platform); /* loaded: the file is no longer needed */
}
