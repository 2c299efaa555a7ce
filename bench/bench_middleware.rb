# frozen_string_literal: true

# Per-request cost of Rperf::Rack::Middleware: a trivial Rack app called
# directly, then through the middleware (logfmt and JSON lines to
# /dev/null), with the profiler running as docs/logging.md sets it up
# (mode: :counters, defer: true; the third argument "wall" starts it as
# before counters mode existed: mode: :wall, frequency: 100). Each configuration runs RUNS times, interleaved; the median µs
# per request is printed side by side, and the cost is the difference to
# the bare app. "profiler calls only" is the floor the log cannot go under:
# Rperf.profile with the label and two Rperf.thread_contention reads.
# "logfmt + metrics" less "logfmt" is what counting each request into a
# metrics directory adds.
#
#   ruby -Ilib -Ibuild/ext bench/bench_middleware.rb [requests_per_run] [runs] [counters|wall]
require "fileutils"
require "tmpdir"
require "rperf"
require "rperf/rack"
require_relative "stats"

REQUESTS = Integer(ARGV[0] || 20_000)
RUNS = Integer(ARGV[1] || 7)
START = { "counters" => { mode: :counters }, "wall" => { mode: :wall, frequency: 100 } }.fetch(ARGV[2] || "counters") do
  abort "bench_middleware: the profiler setup must be counters or wall"
end

APP = ->(_env) { [200, { "content-type" => "text/plain" }, ["ok"]] }
NULL = File.open(File::NULL, "w")

def env_for(i)
  { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/users/#{i % 1000}", "SCRIPT_NAME" => "",
    "QUERY_STRING" => "", "SERVER_NAME" => "127.0.0.1", "SERVER_PORT" => "80" }
end

# µs per request for one run; the env hashes are built outside the timing.
def run_once(app)
  envs = Array.new(REQUESTS) { |i| env_for(i) }
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
  envs.each { |env| app.call(env) }
  (Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0) / 1000.0 / REQUESTS
end


# The profiler calls the middleware makes, without the log: the floor.
PROFILER_ONLY = lambda do |env|
  Rperf.profile(endpoint: "GET /users/:id") do
    Rperf.thread_contention
    r = APP.call(env)
    Rperf.thread_contention
    r
  end
end

# The metrics part: the same middleware also counting every request into a
# metrics directory (docs/metrics.md), its file written once a second.
METRICS_DIR = Dir.mktmpdir("rperf-bench-metrics")
at_exit { FileUtils.rm_rf(METRICS_DIR) }

configs = {
  "bare app" => APP,
  "profiler calls only" => PROFILER_ONLY,
  "middleware, logfmt" => Rperf::Rack::Middleware.new(APP, log: Rperf::ContentionLog.new(output: NULL)),
  "middleware, logfmt + metrics" =>
    Rperf::Rack::Middleware.new(APP, log: Rperf::ContentionLog.new(output: NULL, metrics: METRICS_DIR)),
  "middleware, json" => Rperf::Rack::Middleware.new(APP, log: Rperf::ContentionLog.new(output: NULL, format: :json)),
  "middleware, no profiler labels" =>
    Rperf::Rack::Middleware.new(APP, log: Rperf::ContentionLog.new(output: NULL, label: false))
}

# The metrics part alone, which the table above cannot resolve on a busy
# machine: Metrics::Store#record of one request's finished unit (app,
# before and after windows), timed in the thread's CPU time, interleaved
# with the yardstick operation timed the same way.
def cpu_us_per(n)
  t0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
  n.times { yield }
  (Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond) - t0) / 1000.0 / n
end

def metrics_part
  store = Rperf::Metrics::Store.new(File.join(METRICS_DIR, "record"))
  mw = Rperf::Rack::Middleware.new(APP, log: Rperf::ContentionLog.new(output: NULL, async: false))
  env = env_for(7)
  env["rack.after_reply"] = hooks = []
  mw.call(env)
  hooks.each(&:call)
  unit = env[Rperf::Rack::ENV_KEY]
  abort "bench_middleware: the unit has no after window" unless unit.after_window&.states?
  record = []
  yard = []
  (RUNS + 1).times do |i|
    r = cpu_us_per(REQUESTS) { store.record(unit) }
    y = cpu_us_per(REQUESTS) { { a: 1 }.merge(b: 2) }
    next if i.zero? # warm-up

    record << r
    yard << y
  end
  store.close
  r = BenchStats.median(record)
  y = BenchStats.median(yard)
  puts format("metrics: Store#record per request %.2f µs CPU (%.1f yardsticks; yardstick %.3f µs CPU)", r, r / y, y)

  # End to end, paired: the middleware with and without metrics, one run
  # of each per round in thread CPU time, the median of the differences.
  plain = Rperf::Rack::Middleware.new(APP, log: Rperf::ContentionLog.new(output: NULL))
  counted = Rperf::Rack::Middleware.new(APP, log: Rperf::ContentionLog.new(output: NULL, metrics: File.join(METRICS_DIR, "paired")))
  envs = Array.new(REQUESTS) { |i| env_for(i) }
  diffs = (RUNS * 2 + 1).times.map do |i|
    a, b = i.even? ? [plain, counted] : [counted, plain] # ABBA: neither always first
    ta = cpu_us_per(1) { envs.each { |e| a.call(e) } } / REQUESTS
    tb = cpu_us_per(1) { envs.each { |e| b.call(e) } } / REQUESTS
    a.equal?(counted) ? ta - tb : tb - ta
  end.drop(1)
  puts format("metrics: the middleware with metrics, paired: %+.2f µs CPU per request (median of %d rounds)",
              BenchStats.median(diffs), diffs.size)
end

Rperf.start(**START, defer: true)
begin
  configs.each_value { |app| run_once(app) } # warm up
  results = configs.transform_values { [] }
  RUNS.times { configs.each { |name, app| results[name] << run_once(app) } } # interleaved runs
  base = BenchStats.median(results["bare app"])
  puts format("%-32s %12s %12s", "configuration", "µs/request", "cost µs")
  results.each do |name, xs|
    m = BenchStats.median(xs)
    puts format("%-32s %12.2f %12.2f", name, m, m - base)
  end
  puts "(#{RUNS} runs of #{REQUESTS} requests, median; profiler #{START}; Ruby #{RUBY_VERSION}, #{RUBY_PLATFORM})"
  # A yardstick for comparing machines: the same Ruby operation timed here.
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
  200_000.times { { a: 1 }.merge(b: 2) }
  per = (Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0) / 1000.0 / 200_000
  puts format("yardstick: { a: 1 }.merge(b: 2) takes %.3f µs on this machine", per)
  metrics_part
ensure
  Rperf.stop if Rperf.running?
end
