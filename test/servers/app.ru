# frozen_string_literal: true

# The server tests' Rack app: CPU, a GVL hog, IO and a trivial endpoint,
# with Rperf::Rack::Middleware writing JSON lines to $RPERF_TEST_LOG, and
# /__threads answering the profile's per-thread totals (a snapshot).
# With $RPERF_TEST_METRICS_DIR, the requests also feed the metrics there,
# served at /metrics by Rperf::Rack::Metrics. The profiler starts when the
# app loads: in the master of a Puma cluster with preload_app!, so its
# workers get theirs by following the fork.
require "json"
require "rperf"
require "rperf/rack"

Rperf.start(mode: :counters) unless Rperf.running?

# Seconds of this thread's CPU time.
def burn(seconds)
  start = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
  x = 0
  x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - start < seconds
  x
end

log = File.open(ENV.fetch("RPERF_TEST_LOG"), "a")
log.sync = true
# With $RPERF_TEST_METRICS_DIR: every request counted there, and GET
# /metrics answering every worker's counters (outside the measured requests).
metrics = ENV.fetch("RPERF_TEST_METRICS_DIR", nil)
use Rperf::Rack::Metrics, dir: metrics if metrics
use Rperf::Rack::Middleware, output: log, format: :json, units: :ns, metrics_dir: metrics

run(lambda do |env|
  case env["PATH_INFO"]
  when "/cpu" then burn(0.002)
  when "/hog" then burn(0.05)
  when "/io" then sleep 0.005
  when "/__threads"
    threads = Rperf.snapshot.threads.map { |t| t.to_h.slice(:seq, :name, :running_ns, :gvl_wait_ns, :blocked_ns) }
    return [200, { "content-type" => "application/json" }, [JSON.generate(pid: Process.pid, threads: threads)]]
  end
  [200, { "content-type" => "text/plain" }, ["ok\n"]]
end)
