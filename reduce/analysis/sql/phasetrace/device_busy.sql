-- How busy each device was: the runs' device_wall slices (the whole
-- on-NPU wall of each run, placed on the host axis) per device of each
-- process, against the stretch from its first run's start to its last's
-- end.

INCLUDE PERFETTO MODULE phasetrace.runs;

-- One row per device of a process.
CREATE PERFETTO VIEW phasetrace_device_busy(
  -- Process.
  pid LONG,
  -- Device (device_wall's dev=).
  dev LONG,
  -- Runs with a device_wall drawn.
  runs LONG,
  -- The first device_wall's start, trace time.
  first_ts TIMESTAMP,
  -- The last device_wall's end.
  last_end_ts TIMESTAMP,
  -- The device_walls' total, host time.
  busy_ns DURATION,
  -- busy_ns over last_end_ts − first_ts.
  busy_fraction DOUBLE
) AS
SELECT
  r.pid,
  extract_arg(w.arg_set_id, 'debug.dev') AS dev,
  count(*) AS runs,
  min(w.ts) AS first_ts,
  max(w.ts + w.dur) AS last_end_ts,
  sum(w.dur) AS busy_ns,
  sum(w.dur) * 1.0 / max(max(w.ts + w.dur) - min(w.ts), 1) AS busy_fraction
FROM phasetrace_run_slice AS w
JOIN phasetrace_run_root AS r USING (run)
WHERE w.category = 'device' AND w.full_name = 'chip.run.runner_run.device_wall'
GROUP BY r.pid, dev
ORDER BY r.pid, dev;
