# frozen_string_literal: true

# The Sidekiq test's worker process: job classes that burn CPU, sleep, or
# hog the GVL; Rperf::JobMiddleware writing JSON lines to $RPERF_TEST_LOG;
# at startup it enqueues $RPERF_TEST_JOBS jobs of each class itself. The
# profiler starts when the jobs load (Sidekiq 6 runs one process).
require "json"
require "rperf"
require "rperf/job_middleware"

Rperf.start(mode: :counters)

def burn(seconds)
  start = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
  x = 0
  x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - start < seconds
  x
end

class CpuJob
  include Sidekiq::Worker
  def perform(_i) = burn(0.002)
end

class IoJob
  include Sidekiq::Worker
  sidekiq_options queue: "io"
  def perform(_i) = sleep(0.005)
end

class HogJob
  include Sidekiq::Worker
  def perform(_i) = burn(0.03)
end

log = File.open(ENV.fetch("RPERF_TEST_LOG"), "a")
log.sync = true
Sidekiq.configure_server do |config|
  config.server_middleware { |chain| chain.add Rperf::JobMiddleware, output: log, format: :json, units: :ns }
  config.on(:startup) do
    n = Integer(ENV.fetch("RPERF_TEST_JOBS"))
    [CpuJob, IoJob, HogJob].each { |job| Sidekiq::Client.push_bulk("class" => job, "args" => Array.new(n) { |i| [i] }) }
  end
end
