/* devpower.h - device power keys (device files) and per-site device
 * overrides (machine files); private to device.c and machine.c. */
#ifndef PF_DEVPOWER_H
#define PF_DEVPOWER_H

#include "cfgread.h"
#include "hardware.h"

/* device.power.{tensor,vector,hbm,package,cap,voltage_floor}, with the
 * defaults of docs/energy.md where a file gives none (after tdp, idle,
 * context and efficiency.gemm are read); device.power.model and that
 * model's own group power.MODEL as written (pf_device.power_params, checked
 * by module power's pf_power_check). */
int pf_read_power_model(const reader *r, pf_device *d);

/* machine.node.device_override: what a site runs differently from the part's
 * file (power cap, TDP, idle/context power, memory, bandwidth, efficiencies),
 * e.g. JURECA-DC's GH200 at 700 W against JEDI's 680 W. */
int pf_read_device_override(const reader *r, pf_device *d);

#endif
