# frozen_string_literal: true

# bench/bench_hooks.rb — the cost of the GVL/GC hooks per event.
#
#   ruby -I lib -I build/ext bench/bench_hooks.rb [rounds]
#
# Workload: 4 threads that hand the GVL to each other as often as possible
# (Thread.pass) plus one that sleeps in tiny steps, so nearly all the time
# is spent in GVL transitions. It runs without the profiler and with it
# (sampler at 1 Hz so it adds almost nothing), alternating, and prints:
#   - events/s and the wall-time difference per hook event (end to end:
#     hooks + everything the profiler makes the VM do),
#   - the profiler's own estimate stats.hook_time_ns / stats.hook_events
#     (1 in 1024 events timed with an extra clock read).
require "rperf"

ROUNDS = Integer(ARGV.fetch(0, "5"))
PASSES = 20_000

def workload
  passers = 4.times.map { Thread.new { PASSES.times { Thread.pass } } }
  sleeper = Thread.new { 2000.times { sleep 0.00001 } }
  (passers + [sleeper]).each(&:join)
end

def timed
  t = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
  yield
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t
end

workload # warm up
plain = []
profiled = []
events = []
in_hook = []
ROUNDS.times do
  plain << timed { workload }
  report = nil
  profiled << timed { report = Rperf.contention(frequency: 1, timeline: true) { workload } }
  events << report.stats["hook_events"]
  in_hook << report.stats["hook_time_ns"].fdiv([report.stats["hook_events"], 1].max)
end

median = ->(xs) { xs.sort[xs.size / 2] }
p_ns = median.(plain)
q_ns = median.(profiled)
ev = median.(events)
printf("rounds: %d, hook events per run: %d (%.0f/s)\n", ROUNDS, ev, ev / (q_ns / 1e9))
printf("wall: %.1f ms without, %.1f ms with the profiler (%+.1f%%)\n", p_ns / 1e6, q_ns / 1e6,
       (q_ns - p_ns) * 100.0 / p_ns)
printf("end-to-end cost per hook event: %.0f ns\n", (q_ns - p_ns).fdiv(ev))
printf("in-hook time per event (profiler's estimate): %.0f ns\n", median.(in_hook))
