# frozen_string_literal: true

# bench/bench_release.rb — the cost of a release: a READY that names its
# releaser, which records a release edge and walks the releaser's stack.
#
#   ruby -I lib -I build/ext bench/bench_release.rb [rounds] [depth]
#
# Workload: two threads pass a token through two Queues, each pop blocked
# until the other thread's push wakes it, so every push is a release (two
# per round trip), made `depth` Ruby frames deep (the stack walk grows with
# it). It runs without the profiler and with it in full attribution (sampler
# at 1 Hz, no timeline: the release path and the hooks, little else),
# interleaved, and prints the median wall time per release of each and the
# difference: the whole profiler's cost per release (the hooks of the
# SUSPENDED, READY and RESUMED around it included), and the hooks' own
# estimate of their time (stats.hook_time_ns, 1 event in 1024 timed) per
# release, which is steadier on a loaded machine. Run it with the build
# before a change and after it to see what the change adds per release.
require "rperf"

ROUNDS = Integer(ARGV.fetch(0, "7"))
DEPTH = Integer(ARGV.fetch(1, "30"))
TRIPS = 20_000

def nested(depth, &block) = depth.zero? ? block.call : nested(depth - 1, &block)

def ping_pong
  ping = Queue.new
  pong = Queue.new
  other = Thread.new { nested(DEPTH) { TRIPS.times { pong << ping.pop } } }
  nested(DEPTH) do
    TRIPS.times do
      ping << 1
      pong.pop
    end
  end
  other.join
end

def timed
  t = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
  yield
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t
end

releases = 2 * TRIPS
ping_pong # warm up
plain = []
full = []
captured = []
in_hook = []
ROUNDS.times do
  plain << timed { ping_pong }
  report = nil
  full << timed { report = Rperf.contention(frequency: 1, timeline: false) { ping_pong } }
  captured << report.stats.fetch("release_stacks", 0)
  in_hook << report.stats["hook_time_ns"].fdiv(releases)
end
median = ->(xs) { xs.sort[xs.size / 2] }
p_ns = median.(plain)
f_ns = median.(full)
printf("rounds %d, depth %d, %d releases per run; release stacks captured per run (median): %d\n",
       ROUNDS, DEPTH, releases, median.(captured))
printf("plain %.0f ns/release, full %.0f ns/release, profiler cost %+.0f ns/release (%+.1f%%)\n",
       p_ns.fdiv(releases), f_ns.fdiv(releases), (f_ns - p_ns).fdiv(releases), (f_ns - p_ns) * 100.0 / p_ns)
printf("in-hook time per release (hooks' estimate, all events of a release): %.0f ns\n", median.(in_hook))
