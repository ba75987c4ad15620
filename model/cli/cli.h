/* cli.h - the preflight command-line front end: one function per sub-command.
 * Each returns a process exit status (0, 1, 2, 3) and prints results on
 * stdout, diagnostics on stderr. */
#ifndef PREFLIGHT_CLI_H
#define PREFLIGHT_CLI_H

int pf_cmd_machines(int argc, char **argv);
int pf_cmd_models(int argc, char **argv);
int pf_cmd_predict(int argc, char **argv);
int pf_cmd_sweep(int argc, char **argv);
int pf_cmd_plan(int argc, char **argv);
int pf_cmd_tune(int argc, char **argv);
int pf_cmd_compare(int argc, char **argv);
int pf_cmd_calibrate(int argc, char **argv);
int pf_cmd_validate(int argc, char **argv);
int pf_cmd_merge(int argc, char **argv);
/* `machines new` (machines_new.c); v holds the parsed options. */
struct pf_optvals;
int pf_cli_machines_new(const struct pf_optvals *v);

/* Report an error code with its detail on stderr as "preflight CMD: detail",
 * and return the exit status for it. */
int pf_cli_fail(const char *cmd, int code);

#endif
