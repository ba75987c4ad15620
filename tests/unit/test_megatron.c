/* test_megatron.c - Megatron-LM log parsing: current and older per-iteration
 * formats, the argument dump, warm-up skipping, and malformed logs rejected
 * with the line number. */
#include "check.h"

#include "core/core.h"
#include "study/study.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int parse(const char *t, pf_megatron_log *l) { return pf_megatron_parse(t, strlen(t), "m.log", l); }

static void test_current(void) {
  const char *t =
      "------------------------ arguments ------------------------\n"
      "  tensor_model_parallel_size ...................... 4\n"
      "  num_layers ...................................... 32\n"
      "  fp16 ............................................ True\n"
      "  vocab_size ...................................... None\n"
      "-------------------- end of arguments ---------------------\n"
      " [2026-01-01 10:00:00.000] iteration       10/     100 | consumed samples:         5120 | elapsed time per "
      "iteration (ms): 9000.0 | throughput per GPU (TFLOP/s/GPU): 80.0 | energy per GPU (J/iter/GPU): 3000.0 | power "
      "per GPU (W/GPU): 333.3 | learning rate: 1.0E-04 | global batch size:   512 | lm loss: 7.0E+00 |\n"
      " [2026-01-01 10:00:09.000] iteration       20/     100 | consumed samples:        10240 | elapsed time per "
      "iteration (ms): 1200.0 | throughput per GPU (TFLOP/s/GPU): 150.0 | energy per GPU (J/iter/GPU): 500.0 | power "
      "per GPU (W/GPU): 400.0 | global batch size:   512 |\n"
      "saving checkpoint at iteration      20 to /tmp/ckpt\n"
      " [2026-01-01 10:00:10.000] iteration       30/     100 | elapsed time per iteration (ms): 1000.0 | throughput "
      "per GPU (TFLOP/s/GPU): 180.0 | energy per GPU (J/iter/GPU): 400.0 | power per GPU (W/GPU): 400.0 |\n"
      " [2026-01-01 10:00:11.000] iteration       40/     100 | elapsed time per iteration (ms): 1100.0 | throughput "
      "per GPU (TFLOP/s/GPU): 160.0 | energy per GPU (J/iter/GPU): 450.0 | power per GPU (W/GPU): 410.0 |\n";
  pf_megatron_log *l = malloc(sizeof *l);
  CHECK_INT(parse(t, l), 0);
  CHECK_INT(l->nargs, 4);
  CHECK_STR(pf_megatron_arg(l, "tensor_model_parallel_size"), "4");
  CHECK_STR(pf_megatron_arg(l, "fp16"), "True");
  CHECK_INT(pf_megatron_arg_line(l, "num_layers"), 3);
  CHECK(pf_megatron_arg(l, "hidden_size") == NULL);
  CHECK_INT(l->niter, 4);
  CHECK_INT(l->iteration[3], 40);
  CHECK_INT(l->line[0], 7);
  CHECK_INT(l->total_iters, 100);
  CHECK_INT(l->gbs[0], 512);
  CHECK_STR(l->format, "ms");
  /* the first logged iteration (9 s warm-up) is skipped: median of 1.2, 1.0, 1.1 */
  CHECK_INT(l->used, 3);
  CHECK_NEAR(l->med_time_s, 1.1, 1e-12);
  CHECK_NEAR(l->med_tflops, 160.0, 1e-12);
  CHECK_NEAR(l->med_energy_J, 450.0, 1e-12);
  CHECK_NEAR(l->med_power_W, 400.0, 1e-12);
  pf_megatron_free(l);
  free(l);
}

static void test_old(void) {
  const char *t =
      "0: training ...\n"
      "3:  iteration        1/    1000 | consumed samples:          512 | elapsed time per iteration (s): 40.00 | "
      "learning rate: 1.5E-04 | global batch size:   512 | TFLOPs: 70.00 |\n"
      "3:  iteration        2/    1000 | consumed samples:         1024 | elapsed time per iteration (s): 20.00 | "
      "TFLOPs: 140.00 |\n"
      "3:  iteration        3/    1000 | consumed samples:         1536 | elapsed time per iteration (s): 22.00 | "
      "TFLOPs: 127.27 |\n";
  pf_megatron_log *l = malloc(sizeof *l);
  CHECK_INT(parse(t, l), 0);
  CHECK_INT(l->nargs, 0);
  CHECK_INT(l->niter, 3);
  CHECK_STR(l->format, "s");
  CHECK_NEAR(l->med_time_s, 21.0, 1e-12);
  CHECK_NEAR(l->med_tflops, (140.0 + 127.27) / 2, 1e-12);
  CHECK(isnan(l->med_energy_J));
  pf_megatron_free(l);
  /* a single logged iteration is used as it is */
  const char *one = " iteration       10/     100 | elapsed time per iteration (ms): 1500.0 |\n";
  CHECK_INT(parse(one, l), 0);
  CHECK_INT(l->used, 1);
  CHECK_NEAR(l->med_time_s, 1.5, 1e-12);
  pf_megatron_free(l);
  free(l);
}

static void test_malformed(void) {
  pf_megatron_log *l = malloc(sizeof *l);
  const char *badnum = " iteration       10/     100 | elapsed time per iteration (ms): 1500.0 |\n"
                       "\n"
                       " iteration       1x/     100 | elapsed time per iteration (ms): 1500.0 |\n";
  CHECK_INT(parse(badnum, l), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "m.log:3: iteration") != NULL);
  const char *badval = " iteration       10/     100 | elapsed time per iteration (ms): fast |\n";
  CHECK_INT(parse(badval, l), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "m.log:1: elapsed time per iteration (ms)") != NULL);
  const char *badtf = " iteration       10/     100 | elapsed time per iteration (ms): 10.0 | TFLOPs: 1,5 |\n";
  CHECK_INT(parse(badtf, l), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "m.log:1: TFLOPs") != NULL);
  const char *none = "------------------------ arguments ------------------------\n"
                     "  num_layers ...................................... 32\n"
                     "-------------------- end of arguments ---------------------\n"
                     "training ...\n";
  CHECK_INT(parse(none, l), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "no per-iteration lines") != NULL);
  CHECK(strstr(pf_error_detail(), "m.log:4") != NULL);
  CHECK_INT(parse("", l), PF_EPARSE);
  free(l);
}

/* The fixture logs the CLI tests use. */
static void test_fixtures(void) {
  const char *src = getenv("PF_SRC");
  if (!src) src = ".";
  char path[1024];
  pf_megatron_log *l = malloc(sizeof *l);
  snprintf(path, sizeof path, "%s/tests/fixtures/megatron/current.log", src);
  CHECK_INT(pf_megatron_read(path, l), 0);
  CHECK_INT(l->niter, 6);
  CHECK_INT(l->used, 5);
  CHECK_STR(pf_megatron_arg(l, "world_size"), "8");
  CHECK_NEAR(l->med_time_s, 5.6112, 1e-9);
  pf_megatron_free(l);
  snprintf(path, sizeof path, "%s/tests/fixtures/megatron/old.log", src);
  CHECK_INT(pf_megatron_read(path, l), 0);
  CHECK_INT(l->niter, 5);
  CHECK_STR(l->format, "s");
  pf_megatron_free(l);
  snprintf(path, sizeof path, "%s/tests/fixtures/megatron/malformed.log", src);
  CHECK_INT(pf_megatron_read(path, l), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "malformed.log:46:") != NULL);
  snprintf(path, sizeof path, "%s/tests/fixtures/megatron/no-iterations.log", src);
  CHECK_INT(pf_megatron_read(path, l), PF_EPARSE);
  snprintf(path, sizeof path, "%s/tests/fixtures/megatron/does-not-exist.log", src);
  CHECK_INT(pf_megatron_read(path, l), PF_ENOENT);
  free(l);
}

int main(void) {
  test_current();
  test_old();
  test_malformed();
  test_fixtures();
  return pf_check_done();
}
