# frozen_string_literal: true

# The extension built with RPERF_EXT_STALL_EVENTS=1: its hooks stall now and
# then between their clock read and their slot write, as a hook preempted
# there does on a busy machine. A clearing cut that falls in the stall reads
# the old state in its views; the event must then count after the cut, in
# the next report alone, with its wait edges. Each report's edges must sum
# to each thread's wait, and its states to each thread's lifetime, however
# the stalls and the cuts interleave. Run by bin/test with that build first
# on the load path.
require "tmpdir"
require "json"
require_relative "../ruby/contention_helper"

class TestStalledEvents < Test::Unit::TestCase
  include ContentionHelper

  # Threads of the main Ractor that block and wake (READY runs without the
  # GVL, beside the cut) and four Ractors of two CPU-bound threads each
  # (their hooks run in parallel with the cut), under a clearing snapshot
  # every millisecond.
  SERIES = <<~RUBY
    Warning[:experimental] = false
    require "rperf"
    require "json"
    abort "not the stalling build" unless Rperf::STALLED_EVENTS
    burn = proc do |seconds, threads|
      Array.new(threads) do
        Thread.new do
          start = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
          x = 0
          x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - start < seconds
        end
      end.each(&:join)
      :done
    end
    session = Rperf.contention
    workers = 4.times.map { Ractor.new(0.8, 2, &burn) }
    stop = false
    sleepers = 2.times.map do
      Thread.new do
        until stop
          x = 0
          20_000.times { x += 1 }
          sleep 0.0003
        end
      end
    end
    sleep 0.1
    session.snapshot(clear: true) # the Ractors' start-up, before each is identified
    reports = []
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    while Process.clock_gettime(Process::CLOCK_MONOTONIC) - started < 0.5
      reports << session.snapshot(clear: true)
      sleep 0.001
    end
    stop = true
    sleepers.each(&:join)
    workers.each(&:take)
    reports << session.stop
    rows = reports.flat_map do |r|
      sums = r.edge_sums
      r.threads.map { |t| [t.seq, t.gvl_wait_ns, sums[t.seq].to_i, t.accounted_ns, t.lifetime_ns] }
    end
    File.write(ARGV.fetch(0), JSON.generate(rows))
  RUBY

  def test_clearing_cuts_count_a_stalled_event_once
    Dir.mktmpdir do |dir|
      out = File.join(dir, "rows.json")
      run_ruby_child(dir, "ARGV.replace([#{out.inspect}])\n#{SERIES}")
      rows = JSON.parse(File.read(out))
      assert_operator rows.size, :>, 100
      waiting = rows.count { |_, wait, *| wait > 1_000_000 }
      assert_operator waiting, :>, 20, "threads waited in many reports"
      edges_off = rows.reject { |_, wait, sum, *| (sum - wait).abs <= wait * 0.02 + 100_000 }
      assert_empty edges_off.first(5),
                   "#{edges_off.size} of #{rows.size} rows [seq, gvl_wait, edge sum, ...] off the edge law"
      states_off = rows.reject { |*, acc, life| (acc - life).abs <= life * 0.02 + 200_000 }
      assert_empty states_off.first(5),
                   "#{states_off.size} of #{rows.size} rows [..., states, lifetime] off the lifetime law"
    end
  end
end
