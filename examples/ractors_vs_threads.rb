# frozen_string_literal: true

# The same CPU work four ways apart: on 4 threads of one Ractor (they share
# one GVL, so at any moment one runs and three wait) and on 4 Ractors (each
# has its own GVL: no GVL wait, the work spreads over the cores). Prints the
# wall time, the contention summary and one log line per label for each.
#
#   ruby -Ilib -Ibuild/ext examples/ractors_vs_threads.rb [--size N]
#
# Ractors are experimental in Ruby 3.3 and print a warning saying so.
require "etc"
require "optparse"
require "rperf"
require "rperf/contention_log"

def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)

size = 30
OptionParser.new { |o| o.on("--size N", Integer, "fib size per worker") { |v| size = v } }.parse!(ARGV)
WORKERS = 4

$stdout.sync = true
log = Rperf::ContentionLog.new(output: $stdout)

def timed
  t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  result = yield
  [result, Process.clock_gettime(Process::CLOCK_MONOTONIC) - t]
end

threads_report, threads_wall = timed do
  Rperf.contention(frequency: 100) do
    # labels belong to a thread: each worker sets its own
    WORKERS.times.map { Thread.new { Rperf.label(runner: "threads") { fib(size) } } }.each(&:join)
  end
end

ractors_report, ractors_wall = timed do
  Rperf.contention(frequency: 100) do
    # Rperf.label is for the main Ractor; the Ractors' threads show unlabelled
    WORKERS.times.map { Ractor.new(size) { |n| fib(n) } }.each(&:take)
  end
end

[["threads", threads_report, threads_wall], ["ractors", ractors_report, ractors_wall]].each do |name, report, wall|
  puts "== #{WORKERS} #{name}: #{format('%.3f', wall)} s wall"
  puts report.to_summary(top: 3)
  log.log_report(report, kind: "run")
  puts
end
puts format("ractors finished in %.0f%% of the threads' wall time on %d cores",
            100.0 * ractors_wall / threads_wall, Etc.nprocessors)
