-- The slices of phasetrace's runs. phasetrace (github.com/phasetrace/phasetrace)
-- writes every slice of a run, host and device, with an integer argument
-- run (debug.run) and its whole dotted name in full_name (debug.full_name):
-- the label is its last word. The modules of this package join on them.

-- Every slice that belongs to a run, with its run number and full name.
CREATE PERFETTO TABLE phasetrace_run_slice(
  -- The slice.
  id ID(slice.id),
  -- Its start, trace time (CLOCK_MONOTONIC ns).
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- host, bind, device, "device,derived", ...
  category STRING,
  -- The slice's track.
  track_id JOINID(track.id),
  -- Its arguments.
  arg_set_id ARGSETID,
  -- The run's number: 1 for the first run the logs complete.
  run LONG,
  -- The span's dotted name (chip.run.bind.args, chip.run.runner_run.device_wall.orch).
  full_name STRING
) AS
SELECT
  s.id,
  s.ts,
  s.dur,
  s.category,
  s.track_id,
  s.arg_set_id,
  extract_arg(s.arg_set_id, 'debug.run') AS run,
  extract_arg(s.arg_set_id, 'debug.full_name') AS full_name
FROM slice AS s
WHERE extract_arg(s.arg_set_id, 'debug.run') IS NOT NULL;

-- Each run's root, its chip.run, with the process and thread that ran it
-- and its pipeline slot.
CREATE PERFETTO TABLE phasetrace_run_root(
  -- The run's number.
  run LONG,
  -- The chip.run slice.
  id ID(slice.id),
  -- Its start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- Its arguments.
  arg_set_id ARGSETID,
  -- The process.
  pid LONG,
  -- The thread (the span's tid).
  tid LONG,
  -- Its slot_id, the pipeline lane; NULL without one.
  slot LONG
) AS
SELECT
  r.run,
  r.id,
  r.ts,
  r.dur,
  r.arg_set_id,
  process.pid,
  coalesce(extract_arg(r.arg_set_id, 'debug.os_tid'), thread.tid) AS tid,
  extract_arg(r.arg_set_id, 'debug.slot_id') AS slot
FROM phasetrace_run_slice AS r
JOIN thread_track AS tt ON r.track_id = tt.id
JOIN thread USING (utid)
JOIN process USING (upid)
WHERE r.full_name = 'chip.run' AND extract_arg(r.arg_set_id, 'debug.depth') = 0;
