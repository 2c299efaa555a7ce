# frozen_string_literal: true

# Ractors: each has its own GVL, so CPU-bound Ractors do not wait for each
# other; threads only wait on holders of their own Ractor.
require_relative "contention_helper"

class TestContentionRactors < Test::Unit::TestCase
  include ContentionHelper

  def setup
    @warning = Warning[:experimental]
    Warning[:experimental] = false
  end

  def teardown
    Rperf.stop if Rperf.running?
    Warning[:experimental] = @warning
  end

  RACTOR_BURN = proc do |seconds, threads|
    burn = lambda do
      start = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
      x = 0
      x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - start < seconds
      x
    end
    Array.new(threads) { Thread.new(&burn) }.each(&:join)
    :done
  end

  def test_parallel_ractors_barely_wait
    report = Rperf.contention do
      2.times.map { Ractor.new(0.2, 1, &RACTOR_BURN) }.each(&:take)
    end
    ractor_threads = report.threads.select { |t| t.ractor != 1 && t.running_ns > 100_000_000 }
    assert_operator ractor_threads.size, :>=, 2, report.threads.map(&:to_h).inspect
    ractor_threads.each do |t|
      # One thread per Ractor: nobody to wait for but the Ractor's own start-up.
      assert_operator t.gvl_wait_ns, :<, t.lifetime_ns * 0.1, t.to_h.inspect
    end
    assert_operator report.ractors.size, :>=, 3
    assert_conservation(report)
    assert_edges_sum(report)
  end

  # Threads inside one Ractor contend with each other only.
  def test_threads_wait_only_within_their_ractor
    report = Rperf.contention do
      2.times.map { Ractor.new(0.15, 3, &RACTOR_BURN) }.each(&:take)
    end
    seq_ractor = report.threads.to_h { |t| [t.seq, t.ractor] }
    report.edges.each do |e|
      assert_equal seq_ractor[e.waiter], e.ractor, e.to_h.inspect
      assert_equal e.ractor, seq_ractor[e.holder], e.to_h.inspect if e.holder_kind == "thread"
    end
    busy = report.threads.select { |t| t.ractor != 1 && t.running_ns > 50_000_000 }
    assert_operator busy.size, :>=, 4
    assert_operator busy.sum(&:gvl_wait_ns), :>, 0.2e9, "threads of one Ractor wait on each other"
    report.ractors.each do |r|
      assert_operator r[:running_ns], :<=, report.duration_ns * 1.01
    end
    assert_conservation(report)
    assert_edges_sum(report)
    assert_intervals_disjoint(report)
  end

  # Several rounds of Ractors with threads while profiling.
  def test_repeated_ractor_rounds
    3.times do
      report = Rperf.contention do
        4.times.map { Ractor.new(0.03, 2, &RACTOR_BURN) }.each(&:take)
      end
      assert_conservation(report)
      assert_edges_sum(report)
    end
  end
end
