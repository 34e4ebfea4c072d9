-- The steps table: one row per run, the same rows and columns as
-- "stracestat steps" (reduce/analysis: StepColumns documents each).
-- Device durations are the device's own (device-domain ns) as logged: a
-- slice whose boundary was repaired keeps them in logged_device_ts/dur.

INCLUDE PERFETTO MODULE phasetrace.runs;

-- Each run's device slices with their logged device-domain times.
CREATE PERFETTO TABLE _phasetrace_device(
  run LONG,
  full_name STRING,
  device_ts LONG,
  device_dur LONG,
  bound_ns LONG,
  dev LONG
) AS
SELECT
  run,
  full_name,
  coalesce(extract_arg(arg_set_id, 'debug.logged_device_ts'), extract_arg(arg_set_id, 'debug.device_ts')) AS device_ts,
  coalesce(extract_arg(arg_set_id, 'debug.logged_device_dur'), extract_arg(arg_set_id, 'debug.device_dur')) AS device_dur,
  extract_arg(arg_set_id, 'debug.bound_ns') AS bound_ns,
  extract_arg(arg_set_id, 'debug.dev') AS dev
FROM phasetrace_run_slice
WHERE category = 'device';

-- Per run, its device columns.
CREATE PERFETTO TABLE _phasetrace_run_device(
  run LONG,
  dev LONG,
  device_wall_ns LONG,
  preamble_ns LONG,
  so_load_ns LONG,
  graph_build_ns LONG,
  post_orch_ns LONG,
  orch_ns LONG,
  sched_ns LONG,
  config_validate_ns LONG,
  arena_wire_ns LONG,
  sm_reset_ns LONG,
  effective_ns LONG,
  bound_ns LONG
) AS
SELECT
  run,
  max(iif(full_name = 'chip.run.runner_run.device_wall', dev, NULL)) AS dev,
  sum(iif(full_name = 'chip.run.runner_run.device_wall', device_dur, NULL)) AS device_wall_ns,
  sum(iif(full_name = 'chip.run.runner_run.device_wall.preamble', device_dur, NULL)) AS preamble_ns,
  sum(iif(full_name = 'chip.run.runner_run.device_wall.so_load', device_dur, NULL)) AS so_load_ns,
  sum(iif(full_name = 'chip.run.runner_run.device_wall.graph_build', device_dur, NULL)) AS graph_build_ns,
  sum(iif(full_name = 'chip.run.runner_run.device_wall.post_orch', device_dur, NULL)) AS post_orch_ns,
  sum(iif(full_name = 'chip.run.runner_run.device_wall.orch', device_dur, NULL)) AS orch_ns,
  sum(iif(full_name = 'chip.run.runner_run.device_wall.sched', device_dur, NULL)) AS sched_ns,
  sum(iif(full_name = 'chip.run.runner_run.device_wall.config_validate', device_dur, NULL)) AS config_validate_ns,
  sum(iif(full_name = 'chip.run.runner_run.device_wall.arena_wire', device_dur, NULL)) AS arena_wire_ns,
  sum(iif(full_name = 'chip.run.runner_run.device_wall.sm_reset', device_dur, NULL)) AS sm_reset_ns,
  max(iif(full_name IN ('chip.run.runner_run.device_wall.orch', 'chip.run.runner_run.device_wall.sched'), device_ts + device_dur, NULL))
    - min(iif(full_name IN ('chip.run.runner_run.device_wall.orch', 'chip.run.runner_run.device_wall.sched'), device_ts, NULL)) AS effective_ns,
  max(bound_ns) AS bound_ns
FROM _phasetrace_device
GROUP BY run;

-- Per run, the start of its first bind and runner_run.
CREATE PERFETTO TABLE _phasetrace_run_host(
  run LONG,
  bind_ns LONG,
  runner_ts LONG
) AS
SELECT
  run,
  (SELECT b.dur FROM phasetrace_run_slice AS b WHERE b.run = h.run AND b.full_name = 'chip.run.bind' ORDER BY b.id LIMIT 1) AS bind_ns,
  min(iif(full_name = 'chip.run.runner_run', ts, NULL)) AS runner_ts
FROM phasetrace_run_slice AS h
WHERE category IN ('host', 'bind')
GROUP BY run;

-- One row per run (a chip.run and the slices sharing its run number), in
-- run order: the columns of "stracestat steps".
CREATE PERFETTO VIEW phasetrace_steps(
  -- The run's number in the trace (debug.run).
  run LONG,
  -- Process.
  pid LONG,
  -- Thread of its chip.run.
  tid LONG,
  -- Its chip.run's slot_id (pipeline lane); NULL without one.
  slot LONG,
  -- Device (device_wall's dev=).
  dev LONG,
  -- Callable, hex.
  hid STRING,
  -- Invocation.
  inv LONG,
  -- chip.run's start, trace time.
  start_ns TIMESTAMP,
  -- start_ns on the trace's wall clock (Unix ns); NULL without wall-clock anchors.
  wall_ns LONG,
  -- chip.run's duration.
  chip_run_ns DURATION,
  -- chip.run.bind's duration.
  bind_ns DURATION,
  -- chip.run start to chip.run.runner_run start.
  prep_ns DURATION,
  -- start_ns minus the chip.run end of the previous run on its lane (pid, tid, slot).
  gap_ns DURATION,
  -- device_wall's device-domain duration.
  device_wall_ns DURATION,
  -- Device phases: device-domain durations.
  preamble_ns DURATION,
  so_load_ns DURATION,
  graph_build_ns DURATION,
  post_orch_ns DURATION,
  orch_ns DURATION,
  sched_ns DURATION,
  config_validate_ns DURATION,
  arena_wire_ns DURATION,
  sm_reset_ns DURATION,
  -- orch ∪ sched: max(ends) − min(starts), device ns.
  effective_ns DURATION,
  -- The widest bound_ns of its device slices.
  bound_ns LONG,
  -- Its callable's first run in its process.
  cold BOOL
) AS
SELECT
  r.run,
  r.pid,
  r.tid,
  r.slot,
  d.dev,
  extract_arg(r.arg_set_id, 'debug.hid') AS hid,
  extract_arg(r.arg_set_id, 'debug.inv') AS inv,
  r.ts AS start_ns,
  iif((SELECT count(*) FROM clock_snapshot WHERE clock_name = 'REALTIME') > 0, to_realtime(r.ts), NULL) AS wall_ns,
  r.dur AS chip_run_ns,
  h.bind_ns,
  h.runner_ts - r.ts AS prep_ns,
  r.ts - lag(r.ts + r.dur) OVER (PARTITION BY r.pid, r.tid, r.slot ORDER BY r.run) AS gap_ns,
  d.device_wall_ns,
  d.preamble_ns,
  d.so_load_ns,
  d.graph_build_ns,
  d.post_orch_ns,
  d.orch_ns,
  d.sched_ns,
  d.config_validate_ns,
  d.arena_wire_ns,
  d.sm_reset_ns,
  d.effective_ns,
  d.bound_ns,
  coalesce(extract_arg(r.arg_set_id, 'debug.cold'), 0) AS cold
FROM phasetrace_run_root AS r
LEFT JOIN _phasetrace_run_device AS d USING (run)
LEFT JOIN _phasetrace_run_host AS h USING (run)
ORDER BY r.run;
