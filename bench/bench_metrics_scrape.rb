# frozen_string_literal: true

# What one scrape costs: Rperf::Metrics.text (the analysis library reading
# a metrics directory and writing the exposition) on PROCESSES files of
# LABEL_SETS label sets each, as many workers of one host would write them,
# all of one app (the same label sets in every file, so they add up). The
# median of RUNS, in wall time and in the thread's CPU time, beside the
# yardstick operation timed in the same run; the exposition's size.
#
#   ruby -Ilib -Ibuild/ext bench/bench_metrics_scrape.rb [processes] [label_sets] [runs]
require "json"
require "tmpdir"
require "rperf"
require "rperf/metrics/store"
require_relative "stats"

PROCESSES = Integer(ARGV[0] || 50)
LABEL_SETS = Integer(ARGV[1] || 1000)
RUNS = Integer(ARGV[2] || 9)
FORMAT = Rperf::METRICS_FORMAT

def file(pid, start, sets)
  buckets = ->(n) { Array.new(n, 1) }
  {
    format: FORMAT[:name], version: FORMAT[:version], pid: pid, start_ticks: start,
    process: { threads: 8, running_ns: 10**12, gvl_wait_ns: 10**11, gc_ns: 10**10,
               blocked_ns: Array.new(FORMAT[:causes].size, 10**9), dropped: Array.new(FORMAT[:drops].size, 0),
               label_sets_folded: 0, units_unmeasured: 0 },
    units: Array.new(sets) do |i|
      { kind: "request", labels: { endpoint: "GET /resource#{i}/:id" },
        count: FORMAT[:wait_bounds_ns].size + 1, wall_ns: 123_456_789, running_ns: 23_456_789,
        gvl_wait_ns: 98_765_432, gc_ns: 1_234_568, blocked_ns: Array.new(FORMAT[:causes].size, 0),
        gvl_wait_buckets: buckets.(FORMAT[:wait_bounds_ns].size + 1),
        gvl_wait_ratio_buckets: [FORMAT[:wait_bounds_ns].size + 1 - FORMAT[:ratio_bounds_permille].size] +
                                Array.new(FORMAT[:ratio_bounds_permille].size, 1),
        gvl_wait_ratio_sum_ppm: 7_000_000 }
    end
  }
end


Dir.mktmpdir("rperf-bench-scrape") do |dir|
  # Files of exited processes (this pid with start times it never had),
  # read without folding: every scrape reads them all.
  PROCESSES.times do |i|
    File.write(File.join(dir, "rperf-#{Process.pid}-#{i + 1}.json"), JSON.generate(file(Process.pid, i + 1, LABEL_SETS)))
  end
  bytes = Dir[File.join(dir, "*.json")].sum { |f| File.size(f) }
  text = Rperf::Metrics.text(dir, fold: false)
  wall = []
  cpu = []
  yard = []
  RUNS.times do
    w0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    c0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
    Rperf::Metrics.text(dir, fold: false)
    cpu << Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - c0
    wall << Process.clock_gettime(Process::CLOCK_MONOTONIC) - w0
    c0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
    200_000.times { { a: 1 }.merge(b: 2) }
    yard << (Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - c0) / 200_000
  end
  puts format("%d files of %d label sets (%.1f MiB): one scrape %.1f ms wall, %.1f ms CPU; exposition %.1f MiB, %d lines",
              PROCESSES, LABEL_SETS, bytes / 1048576.0, BenchStats.median(wall) * 1000, BenchStats.median(cpu) * 1000,
              text.bytesize / 1048576.0, text.count("\n"))
  puts format("yardstick: { a: 1 }.merge(b: 2) takes %.3f µs CPU on this machine (%d runs, median)",
              BenchStats.median(yard) * 1e6, RUNS)
end
