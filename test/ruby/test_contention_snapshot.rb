# frozen_string_literal: true

# snapshot(clear: true) series: each report covers its own interval and
# the series adds up to the whole run; deferred profiles record only
# inside Rperf.profile.
require_relative "contention_helper"

class TestContentionSnapshot < Test::Unit::TestCase
  include ContentionHelper

  STATES = %i[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze

  def teardown
    Rperf.stop if Rperf.running?
  end

  # Threads that exit between two clearing snapshots: what they still had
  # pending (short [GVL wait] time below one sampling interval) goes into
  # the report they exited in, so every later report lists each thread its
  # samples name, and the analysis module accepts every report.
  def test_threads_exiting_between_clearing_snapshots
    reports = []
    3.times do
      Rperf.start(mode: :wall, timeline: true, frequency: 1000)
      workers = 3.times.map do
        Thread.new { Rperf.label(step: "work") { 6.times { fib(20); sleep 0.01 } } }
      end
      2.times { sleep 0.04; reports << Rperf.snapshot(clear: true) }
      workers.each(&:join)
      sleep 0.02
      reports << Rperf.stop
    end
    exited = reports.flat_map { |r| r.threads.select(&:exited) }
    assert_operator exited.size, :>=, 9, "the workers exited during the series"
    reports.each_with_index do |r, i|
      seqs = r.threads.map(&:seq)
      sampled = r.to_h["samples"].map { |sample| sample[2] }.uniq
      assert_empty sampled - seqs, "report #{i + 1}: samples of threads it does not list"
      next unless Rperf::HAVE_ANALYSIS

      assert_nothing_raised { Rperf::Report.from_json(r.to_json).to_summary }
    end
  end

  def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)

  def test_series_adds_up_to_thread_totals
    reports = []
    Rperf.start(mode: :wall, timeline: true)
    before = {}
    after = {}
    # The workers outlive the series (released after the last snapshot),
    # however fast their work goes: each must be in all seven reports.
    release = Queue.new
    workers = 3.times.map do |i|
      Thread.new do
        Thread.current.name = "w#{i}"
        before[i] = Rperf.thread_contention
        10.times { burn_work(0.01); sleep 0.01 }
        release.pop
        after[i] = Rperf.thread_contention
      end
    end
    6.times do
      sleep 0.04
      reports << Rperf.snapshot(clear: true)
    end
    3.times { release << true }
    workers.each(&:join)
    reports << Rperf.stop

    assert_equal (1..7).to_a, reports.map { |r| r.meta["sequence"] }
    reports.each do |r|
      assert_conservation(r)
      assert_intervals_disjoint(r)
      assert_edges_sum(r, tolerance: 0.05)
      r.intervals.each { |iv| assert_operator iv.end_ns, :<=, r.duration_ns }
    end
    # Consecutive reports tile the time axis.
    reports.each_cons(2) do |a, b|
      assert_in_delta a.meta["start_monotonic_ns"] + a.duration_ns, b.meta["start_monotonic_ns"], 1_000
    end
    3.times do |i|
      exact = STATES.to_h { |k| [k, after[i][k] - before[i][k]] }
      assert_equal 7, reports.count { |r| r.thread("w#{i}") }, "w#{i} lives through the whole series"
      series = STATES.to_h { |k| [k, reports.sum { |r| r.threads.select { |t| t.name == "w#{i}" }.sum { |t| t.public_send(k) } }] }
      # The reads happen inside the thread's life, the series covers all of it.
      assert_operator series[:running_ns], :>=, exact[:running_ns] * 0.98
      assert_operator series[:blocked_ns], :>=, exact[:blocked_ns] * 0.98
      total = reports.sum { |r| r.threads.select { |t| t.name == "w#{i}" }.sum(&:accounted_ns) }
      life = reports.sum { |r| r.threads.select { |t| t.name == "w#{i}" }.sum(&:lifetime_ns) }
      assert_in_delta life, total, life * 0.02 + 1_000_000
    end
  end

  def test_snapshot_without_clear_is_cumulative
    Rperf.start(mode: :wall, timeline: true)
    cpu_threads(2, 0.03).each(&:join)
    a = Rperf.snapshot
    cpu_threads(2, 0.03).each(&:join)
    b = Rperf.stop
    assert_equal a.meta["start_monotonic_ns"], b.meta["start_monotonic_ns"]
    assert_operator b.threads.size, :>, a.threads.size
    assert_operator a.threads.size, :>=, 3, "two workers and the caller"
    a.threads.each do |t|
      assert_operator b.threads.find { |x| x.seq == t.seq }.accounted_ns, :>=, t.accounted_ns
    end
  end

  # defer: true records nothing until Rperf.profile; blocked and waited
  # time from before the block is clipped to it.
  def test_deferred_profile_records_only_inside_profile_blocks
    Rperf.start(mode: :wall, timeline: true, defer: true)
    sleeper = Thread.new { Thread.current.name = "outside"; sleep 0.1 }
    sleep 0.12
    inside = nil
    Rperf.profile(section: "in") do
      inside = cpu_threads(2, 0.05, prefix: "inside")
      inside.each(&:join)
    end
    sleeper.join
    sleep 0.05
    report = Rperf.stop
    assert_equal 2, by_name(report, "inside").size
    by_name(report, "inside").each do |t|
      assert_operator t.running_ns, :>=, 0.05e9 * 0.5, "~0.05 s of work each, inside the profile"
    end
    main = report.threads.find { |t| t.seq == 1 }
    assert_operator report.stats["paused_ns"], :>, 0.15e9
    # The main thread's accounted time is only the profiled part.
    assert_operator main.accounted_ns, :<, report.duration_ns - 0.15e9
    assert_raise(Rperf::StateError) { Rperf.__send__(:_c_profile_dec) } if Rperf.running?
  end

  def test_profile_refcount_never_negative
    Rperf.start(mode: :wall, timeline: true, defer: true)
    Rperf.profile { Rperf.profile { burn_work(0.001) } }
    assert_raise(Rperf::StateError) { Rperf.__send__(:_c_profile_dec) }
    Rperf.stop
  end
end
