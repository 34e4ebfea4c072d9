-- The bind segments of each run, the rows of "stracestat steps -table
-- binds", and their statistics over the warm binds: a callable's cold run
-- (its first in a process, cold=true on its chip.run and bind) builds what
-- the later runs reuse, and its bind is left out.

INCLUDE PERFETTO MODULE phasetrace.runs;

-- One row per bind segment of a run (chip.run.bind.<segment>), from the
-- log's segment span, a legacy bind phase line or a host_phase_records
-- pass, whichever the trace drew.
CREATE PERFETTO VIEW phasetrace_binds(
  -- The run's number: joins phasetrace_steps.run.
  run LONG,
  -- Process.
  pid LONG,
  -- Invocation.
  inv LONG,
  -- The segment: args, arena_build, ...
  segment STRING,
  -- span, bind_phase or host_phase_records.
  source STRING,
  -- Its start, trace time.
  start_ns TIMESTAMP,
  -- Its duration.
  dur_ns DURATION,
  -- The bind thread's CPU time within it (cpu_ns); NULL where not logged.
  on_cpu_ns DURATION,
  -- dur_ns − on_cpu_ns.
  off_cpu_ns DURATION
) AS
SELECT
  s.run,
  r.pid,
  extract_arg(r.arg_set_id, 'debug.inv') AS inv,
  substr(s.full_name, length('chip.run.bind.') + 1) AS segment,
  coalesce(extract_arg(s.arg_set_id, 'debug.src'), 'span') AS source,
  s.ts AS start_ns,
  s.dur AS dur_ns,
  extract_arg(s.arg_set_id, 'debug.cpu_ns') AS on_cpu_ns,
  s.dur - extract_arg(s.arg_set_id, 'debug.cpu_ns') AS off_cpu_ns
FROM phasetrace_run_slice AS s
JOIN phasetrace_run_root AS r USING (run)
WHERE s.category = 'bind'
  AND s.full_name GLOB 'chip.run.bind.*'
  AND NOT s.full_name GLOB 'chip.run.bind.*.*'
ORDER BY s.run, s.ts, s.id;

-- Per callable and segment, its durations over the warm binds.
CREATE PERFETTO VIEW phasetrace_bind_warm(
  -- Callable, hex.
  hid STRING,
  -- The segment.
  segment STRING,
  -- Warm binds that have it.
  binds LONG,
  -- Shortest.
  min_ns DURATION,
  -- Mean, truncated.
  mean_ns DURATION,
  -- Longest.
  max_ns DURATION,
  -- Mean on-CPU time of those that log cpu_ns.
  mean_on_cpu_ns DURATION,
  -- Mean off-CPU time of those that log cpu_ns.
  mean_off_cpu_ns DURATION
) AS
SELECT
  extract_arg(r.arg_set_id, 'debug.hid') AS hid,
  b.segment,
  count(*) AS binds,
  min(b.dur_ns) AS min_ns,
  cast(avg(b.dur_ns) AS INT) AS mean_ns,
  max(b.dur_ns) AS max_ns,
  cast(avg(b.on_cpu_ns) AS INT) AS mean_on_cpu_ns,
  cast(avg(b.off_cpu_ns) AS INT) AS mean_off_cpu_ns
FROM phasetrace_binds AS b
JOIN phasetrace_run_root AS r USING (run)
WHERE extract_arg(r.arg_set_id, 'debug.cold') IS NULL
GROUP BY hid, b.segment
ORDER BY hid, b.segment;
