// pace.c: the real-time schedule (pace.h). Pure arithmetic: no clock, no I/O.
#include "base/pace.h"

#include <math.h>
#include <stdio.h>

int pace_check(double dt, double rate, char *err, size_t errlen) {
  if (!isfinite(rate) || rate < PACE_RATE_MIN || rate > PACE_RATE_MAX) {
    snprintf(err, errlen, "rate must be in [%g, %g]", PACE_RATE_MIN, PACE_RATE_MAX);
    return -1;
  }
  double period = dt / rate * 1e9;
  if (!isfinite(dt) || dt <= 0 || !(period >= PACE_PERIOD_MIN_NS) ||
      !(period <= PACE_PERIOD_MAX_NS)) {
    snprintf(err, errlen,
             "rate %g gives %g s of wall time per step of %g s; it must be between %g s and "
             "%g s (rate in [%g, %g] for this model)",
             rate, period * 1e-9, dt, PACE_PERIOD_MIN_NS * 1e-9, PACE_PERIOD_MAX_NS * 1e-9,
             fmax(PACE_RATE_MIN, dt * 1e9 / PACE_PERIOD_MAX_NS),
             fmin(PACE_RATE_MAX, dt * 1e9 / PACE_PERIOD_MIN_NS));
    return -1;
  }
  return 0;
}

int64_t pace_missing_for(const pace *p, int64_t end) {
  return p->miss_since ? end - p->miss_since : 0;
}

void pace_start(pace *p, int64_t now, double period) {
  p->t0 = now;
  p->k = 0;
  p->period = period;
  p->late_run = 0;
}

static int64_t due(const pace *p, int64_t k) {
  return p->t0 + (int64_t)llround((double)k * p->period);
}

int64_t pace_deadline(const pace *p) { return due(p, p->k + 1); }

int64_t pace_coarse_wait(const pace *p, int64_t now, int64_t slice) {
  int64_t deadline = pace_deadline(p);
  return deadline - now > 3 * slice / 2 ? deadline - slice : 0;
}

int pace_step_done(pace *p, int64_t end, int burst, int64_t max_lag, int64_t *behind) {
  p->k++;
  int64_t next = pace_deadline(p);
  *behind = end > next ? end - next : 0;
  if (end <= next) {
    p->late_run = 0;
    p->miss_since = 0;
    return 0;
  }
  if (p->miss_since == 0)
    p->miss_since = end;
  // Behind schedule, the next steps run back to back until the model has caught up, so a
  // hiccup costs no simulated time. Only a lag beyond max_lag is given up (resync).
  int flags = PACE_OVERRUN;
  p->overruns++;
  if (++p->late_run == burst)
    flags |= PACE_BURST;
  if (*behind > max_lag) {
    flags |= PACE_RESYNC;
    p->resyncs++;
    pace_start(p, end, p->period);
  }
  return flags;
}

void watchdog_start(watchdog *w, int64_t now, int64_t timeout) {
  w->timeout = timeout > 0 ? timeout : 0;
  w->last = now;
  w->tripped = 0;
}

int watchdog_input(watchdog *w, int64_t now) {
  w->last = now;
  if (!w->tripped)
    return WD_NONE;
  w->tripped = 0;
  return WD_RESUMED;
}

int watchdog_poll(watchdog *w, int64_t now) {
  if (!w->timeout || w->tripped || now - w->last <= w->timeout)
    return WD_NONE;
  w->tripped = 1;
  return WD_TIMEOUT;
}
