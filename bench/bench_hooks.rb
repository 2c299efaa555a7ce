# frozen_string_literal: true

# bench/bench_hooks.rb — the cost of the GVL/GC hooks per event.
#
#   ruby -I lib -I build/ext bench/bench_hooks.rb [rounds]
#
# Workload: 4 threads that hand the GVL to each other as often as possible
# (Thread.pass) plus one that sleeps in tiny steps, so nearly all the time
# is spent in GVL transitions. It runs without the profiler, with it in
# full attribution (sampler at 1 Hz so it adds almost nothing, timeline on)
# and in counters mode (mode: :counters: the hooks keep per-thread totals
# only), interleaved, and prints per profiled variant:
#   - events/s and the wall-time difference per hook event (end to end:
#     hooks + everything the profiler makes the VM do),
#   - the profiler's own estimate stats.hook_time_ns / stats.hook_events
#     (1 in 1024 events timed with an extra clock read).
require "rperf"

ROUNDS = Integer(ARGV.fetch(0, "5"))
PASSES = 20_000
VARIANTS = {
  "full (1 Hz, timeline)" => { frequency: 1, timeline: true },
  "counters" => { mode: :counters }
}.freeze

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
runs = VARIANTS.keys.to_h { |name| [name, { wall: [], events: [], in_hook: [] }] }
ROUNDS.times do
  plain << timed { workload }
  VARIANTS.each do |name, opts|
    report = nil
    runs[name][:wall] << timed { report = Rperf.contention(**opts) { workload } }
    runs[name][:events] << report.stats["hook_events"]
    runs[name][:in_hook] << report.stats["hook_time_ns"].fdiv([report.stats["hook_events"], 1].max)
  end
end

median = ->(xs) { xs.sort[xs.size / 2] }
p_ns = median.(plain)
printf("rounds: %d, plain %.1f ms\n", ROUNDS, p_ns / 1e6)
runs.each do |name, r|
  q_ns = median.(r[:wall])
  ev = median.(r[:events])
  printf("%s: %d hook events per run (%.0f/s), %.1f ms (%+.1f%%), end-to-end %.0f ns/event, " \
         "in-hook %.0f ns/event (profiler's estimate)\n",
         name, ev, ev / (q_ns / 1e9), q_ns / 1e6, (q_ns - p_ns) * 100.0 / p_ns, (q_ns - p_ns).fdiv(ev),
         median.(r[:in_hook]))
end
