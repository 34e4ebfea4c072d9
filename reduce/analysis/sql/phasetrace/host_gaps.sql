-- The host's idle time between runs: on each lane (a process's thread and
-- pipeline slot), from the end of a run's chip.run to the start of the
-- next run's, in run order. A gap is the time no chip.run of the lane ran:
-- scheduling, Python, the caller's own work.

INCLUDE PERFETTO MODULE phasetrace.runs;

-- One row per gap of at least 0 ns between consecutive runs of a lane
-- (runs that overlap on a lane have none): the gap_ns of phasetrace_steps
-- as intervals on the trace's axis.
CREATE PERFETTO VIEW phasetrace_host_gaps(
  -- Where the gap starts: the previous run's chip.run end.
  ts TIMESTAMP,
  -- Its length.
  dur DURATION,
  -- The run after it.
  run LONG,
  -- The run before it.
  prev_run LONG,
  -- Process.
  pid LONG,
  -- Thread.
  tid LONG,
  -- Pipeline slot; NULL without one.
  slot LONG
) AS
SELECT ts, dur, run, prev_run, pid, tid, slot
FROM (
  SELECT
    lag(r.ts + r.dur) OVER lane AS ts,
    r.ts - lag(r.ts + r.dur) OVER lane AS dur,
    r.run,
    lag(r.run) OVER lane AS prev_run,
    r.pid,
    r.tid,
    r.slot
  FROM phasetrace_run_root AS r
  WINDOW lane AS (PARTITION BY r.pid, r.tid, r.slot ORDER BY r.run)
)
WHERE prev_run IS NOT NULL AND dur >= 0
ORDER BY ts, run;
