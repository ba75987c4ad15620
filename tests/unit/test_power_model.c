/* test_power_model.c - a power model from outside model/ (docs/energy.md,
 * "Power models"): a toy model of constant busy power, registered through
 * pf_power_model_register() as the built-in utilisation model is, named by a
 * device file (power.model, with its own power.toy-constant group), checked
 * by pf_power_check(), and used by pf_energy_window() and the cap's clock
 * search.  Also the errors: a model the table lacks (file, line, key and the
 * valid names), a key the model lacks ("did you mean"), a wrong unit, a value
 * out of range, a required key missing, a group for a model the device does
 * not name, a name that is no model name. */
#include "check.h"
#include "core/core.h"
#include "machine/machine.h"
#include "power/power.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the toy: busy power is busy_W whatever the kernels do and at any clock */
static double toy_dynamic_J(const pf_device *d, const pf_energy_use *u, double r) {
  return (pf_power_param_value(d, "busy", d->tdp_W) - d->context_W) * pf_energy_busy_s(u, r);
}

static const pf_power_key toy_keys[] = {
    {"busy", PF_UNIT_POWER, 0, 3000, true, "mean power while compute kernels run"},
    {"note_ratio", PF_UNIT_NONE, 0, 1, false, "an unused plain number (shows a unit-less key)"},
};

static const pf_power_model toy = {
    .name = "toy-constant",
    .summary = "constant busy power (a test)",
    .keys = toy_keys,
    .nkeys = 2,
    .dynamic_J = toy_dynamic_J,
    .voltage = NULL,
};

static char dir[64];

/* a device file dir/ID.cfg whose power group ends with extra */
static const char *device_file(const char *id, const char *extra) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s.cfg", dir, id);
  FILE *f = fopen(path, "w");
  if (!f) return NULL;
  fprintf(f,
          "device = {\n"
          "  id = \"%s\"; name = \"Toy accelerator\"; vendor = \"nvidia\";\n"
          "  memory = \"80 GiB\"; memory_bw = \"3 TB/s\";\n"
          "  peak = { bf16 = \"1000 TFLOPS\"; fp16 = \"1000 TFLOPS\"; };\n"
          "  efficiency = { gemm = 0.8; hbm = 0.85; };\n"
          "  power = { tdp = \"700 W\"; idle = \"70 W\"; context = \"110 W\"; comm = \"245 W\";\n"
          "%s"
          "  };\n"
          "};\n",
          id, extra);
  fclose(f);
  return path;
}

/* a device naming the toy on line 7 with its group { keys } on line 8 */
static int load_toy(const char *id, const char *keys, pf_device *d) {
  char extra[256];
  snprintf(extra, sizeof extra, "    model = \"toy-constant\";\n    toy-constant = { %s };\n", keys);
  const char *path = device_file(id, extra);
  return path ? pf_device_load(path, d) : -1;
}

static bool detail_has(const char *s) {
  bool ok = strstr(pf_error_detail(), s) != NULL;
  if (!ok) fprintf(stderr, "error detail \"%s\" lacks \"%s\"\n", pf_error_detail(), s);
  return ok;
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/pf-power-model-XXXXXX");
  if (!mkdtemp(dir)) return 1;

  /* the built-in table: the utilisation model first, the default */
  CHECK(pf_power_model_count() >= 1);
  CHECK_STR(pf_power_model_at(0)->name, "utilisation");
  CHECK(pf_power_model_find("") == pf_power_model_at(0));
  CHECK(pf_power_model_find("toy-constant") == NULL);

  /* module machine reads the device file without knowing the model; module power finds it missing */
  pf_device dev;
  const char *toy_cfg = device_file("toy", "    model = \"toy-constant\"; toy-constant = { busy = \"450 W\"; };\n");
  CHECK_INT(pf_device_load(toy_cfg, &dev), 0);
  CHECK_STR(dev.power_model, "toy-constant");
  CHECK_INT(dev.power_nparams, 1);
  CHECK_INT(dev.power_model_line, 7);
  CHECK_INT(pf_power_check(&dev), PF_EPARSE);
  CHECK(detail_has("toy.cfg:7: device.power.model: unknown power model \"toy-constant\"; valid: utilisation"));

  /* registered through the built-ins' call, it is found, listed and used */
  CHECK_INT(pf_power_model_register(&toy), 0);
  CHECK_INT(pf_power_model_register(&toy), PF_EINVAL); /* the name is taken */
  pf_power_model bad = toy;
  bad.name = "two words";
  CHECK_INT(pf_power_model_register(&bad), PF_EINVAL);
  bad.name = "no-function";
  bad.dynamic_J = NULL;
  CHECK_INT(pf_power_model_register(&bad), PF_EINVAL);
  char names[128];
  pf_power_model_names(names, sizeof names);
  CHECK_STR(names, "utilisation, toy-constant");
  CHECK_INT(pf_power_check(&dev), 0);
  CHECK(pf_power_model_of(&dev) == &toy);
  CHECK_NEAR(pf_power_param_value(&dev, "busy", 0), 450, 0);
  CHECK_NEAR(pf_power_param_value(&dev, "note_ratio", 0.5), 0.5, 0);

  /* pf_energy_window on a node of four such devices: busy power is the toy's, whatever the utilisation */
  static pf_scenario sc;
  pf_scenario_init(&sc);
  CHECK_INT(pf_machine_load("westai-h100", &sc.machine), 0);
  sc.machine.dev = dev;
  sc.nodes = 1;
  sc.gpus = 4;
  pf_energy_use u = {.window_s = 1.0, .busy_s = 0.5, .tensor_util_s = 0.3, .vector_util_s = 0.05,
                     .hbm_util_s = 0.1, .compute_bound_s = 0.3, .comm_s = 0.1, .clock_ratio = 1.0};
  pf_energy e, e2;
  pf_energy_window(&sc, &u, &e);
  CHECK_NEAR(e.gpu_busy_W, 450, 1e-12);
  CHECK_NEAR(e.gpu_J, 4 * (110 * 1.0 + (450 - 110) * 0.5 + (245 - 110) * 0.1), 1e-12);
  pf_energy_use v = u;
  v.tensor_util_s *= 2;
  v.hbm_util_s *= 2;
  pf_energy_window(&sc, &v, &e2);
  CHECK_NEAR(e2.gpu_J, e.gpu_J, 1e-12);
  CHECK_NEAR(pf_energy_voltage(&dev, 0.5), 1.0, 0); /* no DVFS curve: 1 */
  /* the cap's clock search asks the model: constant 450 W fits 500 W at full clock, never fits 400 W */
  sc.power_cap_W = 500;
  CHECK_NEAR(pf_energy_clock_for_cap(&sc, &u), 1.0, 0);
  sc.power_cap_W = 400;
  CHECK_NEAR(pf_energy_clock_for_cap(&sc, &u), 0.2, 0);
  /* the same device on the default model draws what its utilisation says */
  pf_device util = dev;
  util.power_model[0] = '\0';
  util.power_nparams = 0;
  CHECK_INT(pf_power_check(&util), 0);
  CHECK(pf_power_model_of(&util) == pf_power_model_find("utilisation"));
  CHECK(pf_energy_busy_W(&util, &u, 1.0) != pf_energy_busy_W(&dev, &u, 1.0));

  /* the model's keys, checked by module power with file:line and key */
  pf_device d2;
  CHECK_INT(load_toy("toy2", "bussy = \"450 W\";", &d2), 0);
  CHECK_INT(pf_power_check(&d2), PF_EPARSE);
  CHECK(detail_has("toy2.cfg:8: device.power.toy-constant.bussy: unknown key; did you mean \"busy\"?"));
  pf_config_set_lenient(true); /* a warning under --lenient, then the required key is missing */
  CHECK_INT(pf_power_check(&d2), PF_EPARSE);
  CHECK(detail_has("toy2.cfg:7: device.power.toy-constant.busy: missing required setting"));
  pf_config_set_lenient(false);
  CHECK_INT(load_toy("toy3", "busy = 450.0;", &d2), 0);
  CHECK_INT(pf_power_check(&d2), PF_EPARSE);
  CHECK(detail_has("device.power.toy-constant.busy: expected a power"));
  CHECK_INT(load_toy("toy4", "busy = \"4 kW\";", &d2), 0);
  CHECK_INT(pf_power_check(&d2), PF_EPARSE);
  CHECK(detail_has("device.power.toy-constant.busy: 4000 is outside [0, 3000]"));
  CHECK_INT(load_toy("toy5", "busy = \"4 parsecs\";", &d2), PF_EUNIT);
  CHECK(detail_has("device.power.toy-constant.busy: \"4 parsecs\" is neither a number nor a quantity"));

  /* module machine: a group for a model the device does not name is an unknown key; a name must be a name */
  CHECK_INT(pf_device_load(device_file("toy6", "    toy-constant = { busy = \"450 W\"; };\n"), &d2), PF_EPARSE);
  CHECK(detail_has("device.power.toy-constant: unknown key"));
  CHECK_INT(pf_device_load(device_file("toy7", "    model = \"two words\";\n"), &d2), PF_EPARSE);
  CHECK(detail_has("device.power.model: \"two words\" is not a model name"));
  /* a shipped device names no model: the utilisation model, no key of its own */
  CHECK_INT(pf_device_load("h100-sxm-80", &d2), 0);
  CHECK_STR(d2.power_model, "");
  CHECK_INT(pf_power_check(&d2), 0);
  CHECK(pf_power_model_of(&d2) == pf_power_model_at(0));

  static const char *const files[] = {"toy", "toy2", "toy3", "toy4", "toy5", "toy6", "toy7"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char p[128];
    snprintf(p, sizeof p, "%s/%s.cfg", dir, files[i]);
    unlink(p);
  }
  rmdir(dir);
  return pf_check_done();
}
