# frozen_string_literal: true

# The Ruby API around the core: sessions, thread_contention, validation.
require_relative "contention_helper"

class TestApiContention < Test::Unit::TestCase
  include ContentionHelper

  def teardown
    Rperf.stop if Rperf.running?
  end

  def test_session_without_block
    session = Rperf.contention(frequency: 100)
    assert Rperf.running?
    cpu_threads(2, 0.03).each(&:join)
    mid = session.snapshot
    assert_kind_of Rperf::Report, mid
    report = Rperf.contention_stop
    refute Rperf.running?
    assert_operator report.threads.size, :>=, 3
    assert_same report, session.stop
    assert_raise(Rperf::StateError) { Rperf.contention_stop }
  end

  def test_block_exception_stops_the_profile
    assert_raise(ZeroDivisionError) { Rperf.contention { 1 / 0 } }
    refute Rperf.running?
  end

  def test_thread_contention_reads_own_totals
    assert_nil Rperf.thread_contention
    Rperf.start(mode: :wall)
    a = Rperf.thread_contention
    sleep 0.05
    burn_work(0.03)
    b = Rperf.thread_contention
    assert_equal %i[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns monotonic_ns blocked_by_cause runnable], b.keys
    states = %i[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].sum { |k| b[k] - a[k] }
    assert_in_delta b[:monotonic_ns] - a[:monotonic_ns], states, 1_000, "the state differences add up to the clock difference"
    assert_operator b[:blocked_ns] - a[:blocked_ns], :>=, 0.045e9
    assert_operator b[:running_ns] - a[:running_ns], :>=, 0.02e9
    other = Thread.new { Rperf.thread_contention }.value
    assert_operator other[:blocked_ns], :<, 0.045e9, "a new thread's totals are its own"
    # runnable: the totals when the sleep ended; since then nothing blocked,
    # and the states since add up to the clock since.
    r = b[:runnable]
    assert_operator r[:monotonic_ns], :>=, a[:monotonic_ns] + 45_000_000
    assert_equal b[:blocked_ns], r[:blocked_ns]
    since = %i[running_ns gvl_wait_ns gc_mark_ns gc_sweep_ns].sum { |k| b[k] - r[k] }
    assert_in_delta b[:monotonic_ns] - r[:monotonic_ns], since, 1_000
    assert_operator b[:running_ns] - r[:running_ns], :>=, 0.02e9
    # The cheap form: the same numbers in COUNTER_FIELDS order.
    c = Rperf.thread_counters
    assert_equal Rperf::COUNTER_FIELDS.size, c.size
    assert_operator c[Rperf::COUNTER_FIELDS.index(:running_ns)], :>=, b[:running_ns]
  end

  def test_option_validation
    assert_raise(ArgumentError) { Rperf.contention(max_threads: 0) {} }
    assert_raise(ArgumentError) { Rperf.contention(max_intervals: -1) {} }
    assert_raise(ArgumentError) { Rperf.contention(timeline: "yes") {} }
    assert_raise(ArgumentError) { Rperf.contention(frequency: 0) {} }
    assert_raise(ArgumentError) { Rperf.contention(mode: :bogus) {} }
    refute Rperf.running?
    Rperf.start
    assert_raise(Rperf::StateError) { Rperf.start }
  end

  def test_stop_when_not_running
    assert_nil Rperf.stop
    assert_nil Rperf.snapshot
  end

  def test_classic_result_hash
    Rperf.start(mode: :wall, frequency: 500)
    cpu_threads(2, 0.05).each(&:join)
    result = Rperf.stop
    %i[mode frequency trigger_count sampling_count sampling_time_ns detected_thread_count unique_frames
       unique_stacks start_time_ns duration_ns aggregated_samples label_sets threads report].each do |k|
      assert result.key?(k), "missing #{k}"
    end
    assert_equal 500, result[:frequency]
    refute_empty result[:aggregated_samples], "two CPU threads were sampled"
    result[:aggregated_samples].each do |frames, weight, seq, label|
      assert_kind_of Array, frames
      frames.each { |f| assert_equal 2, f.size }
      assert_operator weight, :>, 0
      assert_operator seq, :>=, 1
      assert_operator label, :>=, 0
    end
  end
end
