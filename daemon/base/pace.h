// pace.h: the real-time schedule of one model as arithmetic on a clock the caller reads.
//
// Step k (from 0) of a schedule started at t0 is due at t0 + (k + 1) * period, with
// period = dt / rate. The simulation thread reads CLOCK_MONOTONIC and hands the readings in;
// tests hand in a made-up clock, so the counting of overruns, bursts and resyncs is checked
// without depending on how loaded the machine is.
#ifndef PD_PACE_H
#define PD_PACE_H

#include <stddef.h>
#include <stdint.h>

// Rate factors accepted for real-time mode, and the shortest and longest wall time a step may
// be given: every deadline of a run of centuries stays representable in int64 nanoseconds,
// and a real-time thread is never asked to step faster than this (it would spin flat out).
#define PACE_RATE_MIN 1e-3
#define PACE_RATE_MAX 1e3
#define PACE_PERIOD_MIN_NS 10000.0          // 10 us
#define PACE_PERIOD_MAX_NS 3600e9           // one hour

typedef struct {
  int64_t t0;          // origin of the schedule (ns)
  int64_t k;           // steps taken since the origin
  double period;       // ns per step
  int late_run;        // deadlines missed in a row
  int64_t miss_since;  // end of the first step of the current run of misses (resyncs included)
  int64_t overruns;    // steps that ended after the next deadline
  int64_t resyncs;     // schedules restarted because the model fell too far behind
} pace;

// What pace_step_done saw (bits).
enum {
  PACE_OVERRUN = 1,    // the step ended after the next step's deadline
  PACE_BURST = 2,      // ... and that made `burst` deadlines missed in a row
  PACE_RESYNC = 4,     // ... more than max_lag behind: the schedule restarts from `end`
};

// How long (ns) the steps have been overrunning without one on time, at `end` (0: on time).
int64_t pace_missing_for(const pace *p, int64_t end);

// 0 when a real-time schedule with this step and rate is computable (every deadline fits);
// otherwise -1 and a message naming the accepted range.
int pace_check(double dt, double rate, char *err, size_t errlen);
// Starts (or restarts) the schedule at `now` with `period` ns per step.
void pace_start(pace *p, int64_t now, double period);
// Absolute deadline of the next step.
int64_t pace_deadline(const pace *p);
// How the thread waits at `now`: a time to sleep until while serving commands (a coarse wait
// ending `slice` before the deadline), or 0 when the deadline is within 1.5 slices and the
// thread should sleep to the deadline itself and step.
int64_t pace_coarse_wait(const pace *p, int64_t now, int64_t slice);
// Accounts for the step that just ended at `end`: advances k, counts an overrun when `end`
// is past the next deadline, flags a burst when that makes `burst` in a row, and restarts the
// schedule at `end` when it is more than `max_lag` behind. *behind gets how far past the next
// deadline the step ended (0 when on time). Returns PACE_* bits.
int pace_step_done(pace *p, int64_t end, int burst, int64_t max_lag, int64_t *behind);

// The input watchdog of a real-time model: when no input has arrived for `timeout` ns, the
// inputs go to their safe value once (WD_TIMEOUT); the next input ends that (WD_RESUMED).
typedef struct {
  int64_t timeout;     // ns; 0: off
  int64_t last;        // when the last input arrived (or the watch started)
  int tripped;
} watchdog;

enum { WD_NONE = 0, WD_TIMEOUT = 1, WD_RESUMED = 2 };

void watchdog_start(watchdog *w, int64_t now, int64_t timeout);
// An input arrived at `now`.
int watchdog_input(watchdog *w, int64_t now);
// Before a step at `now`.
int watchdog_poll(watchdog *w, int64_t now);

#endif
