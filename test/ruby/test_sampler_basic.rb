# frozen_string_literal: true

# The sampler's capabilities through the public API: modes and their
# weights, synthetic frames, frequency range ends, the signal-less worker,
# raw samples, snapshots, deferred profiling, labels, blame, validation.
require_relative "test_sampler_helper"

class TestSamplerBasic < Test::Unit::TestCase
  include SamplerTestHelper

  def teardown
    ensure_stopped
  end

  def test_cpu_mode_weights_are_the_thread_cpu_time
    cpu_used = nil
    Rperf.start(frequency: 1000, mode: :cpu)
    Thread.new do
      Thread.current.name = "burner"
      before = thread_cpu
      burn(0.3)
      cpu_used = thread_cpu - before
    end.join
    report = report_of(Rperf.stop)
    seq = seq_of(report, "burner")
    sampled = thread_weight(report, seq) / 1e9
    # Samples miss at most the first interval (clock start) and the tail
    # after the last tick; they never invent time.
    assert_operator sampled, :<=, cpu_used * 1.05 + 0.002, "cpu weights exceed the thread's CPU time"
    assert_operator sampled, :>=, cpu_used * 0.7, "cpu weights cover too little of the thread's CPU time"
    in_burn = weight(report) { |labels, s, _| s == seq && labels.any? { _1.include?("burn") } } / 1e9
    assert_operator in_burn, :>=, sampled * 0.9, "the burning method carries the weight"
  end

  def test_wall_mode_records_blocked_and_wait_with_stacks
    Rperf.start(frequency: 1000, mode: :wall)
    sleeper = Thread.new { Thread.current.name = "sleeper"; sleep_here(0.2) }
    hogs = Array.new(2) { |i| Thread.new { Thread.current.name = "hog#{i}"; burn(0.15) } }
    [sleeper, *hogs].each(&:join)
    report = report_of(Rperf.stop)

    seq = seq_of(report, "sleeper")
    blocked = synthetic_weight(report, "[GVL blocked]", seq: seq) / 1e9
    assert_in_delta 0.2, blocked, 0.05, "[GVL blocked] of a thread sleeping 0.2 s"
    stacks = report["samples"].select { |sid, _, s, _| s == seq && stack_labels(report, sid).first == "[GVL blocked]" }
    assert(stacks.any? { |sid, *| stack_labels(report, sid).any? { _1.include?("sleep_here") } },
           "the blocked time keeps the stack that blocked")

    waited = hogs.size.times.sum { |i| synthetic_weight(report, "[GVL wait]", seq: seq_of(report, "hog#{i}")) } / 1e9
    assert_operator waited, :>, 0.05, "two CPU-bound threads wait for each other"
  end

  def sleep_here(seconds)
    sleep(seconds)
  end

  def test_wall_weights_do_not_count_synthetic_time_twice
    Rperf.start(frequency: 1000, mode: :wall)
    t0 = monotonic
    Thread.new do
      Thread.current.name = "mixed"
      3.times { burn(0.03); sleep(0.05) }
    end.join
    lifetime = monotonic - t0
    report = report_of(Rperf.stop)
    total = thread_weight(report, seq_of(report, "mixed")) / 1e9
    assert_operator total, :<=, lifetime * 1.05 + 0.002, "wall weights of one thread exceed its lifetime"
    assert_operator total, :>=, lifetime * 0.6
  end

  def test_frequency_one_ticks_once_a_second
    Rperf.start(frequency: 1, mode: :wall)
    sleep 1.25
    report = report_of(Rperf.stop)
    assert_operator report["stats"]["trigger_count"], :>=, 1, "a 1 Hz timer (interval of a whole second) fires"
    assert_operator report["stats"]["trigger_count"], :<=, 2
  end

  def test_frequency_ten_thousand
    Rperf.start(frequency: 10_000, mode: :cpu)
    burn(0.1)
    stats = report_of(Rperf.stop)["stats"]
    assert_operator stats["trigger_count"], :>, 200
    assert_operator stats["sampling_count"], :>, 100
  end

  def test_signal_false_uses_the_condvar_worker
    Rperf.start(frequency: 500, mode: :cpu, signal: false)
    burn(0.15)
    stats = report_of(Rperf.stop)["stats"]
    assert_operator stats["trigger_count"], :>, 30
    assert_operator stats["sampling_count"], :>, 20
    assert_equal 0, stats["ractor_signals"]
  end

  def test_aggregate_false_returns_raw_samples
    Rperf.start(frequency: 1000, mode: :cpu, aggregate: false)
    burn(0.1)
    result = Rperf.stop
    raw = result.fetch(:raw_samples)
    report = report_of(result)
    assert_operator raw.size, :>, 20
    assert_operator raw.size, :>=, report["samples"].size
    assert_equal report["samples"].sum { _2 }, raw.sum { _2 }, "raw and aggregated weights agree"
    frames, weight_ns, seq, label_set = raw.first
    assert_kind_of Array, frames
    assert_operator weight_ns, :>, 0
    assert_operator seq, :>=, 1
    assert_equal 0, label_set
  end

  def test_snapshot_keeps_running_and_clear_starts_a_new_interval
    assert_nil Rperf.snapshot
    Rperf.start(frequency: 1000, mode: :cpu)
    burn(0.1)
    first = report_of(Rperf.snapshot)
    burn(0.05)
    second = report_of(Rperf.snapshot(clear: true))
    assert Rperf.running?
    assert_operator second["samples"].sum { _2 }, :>, first["samples"].sum { _2 }, "without clear, weights accumulate"
    burn(0.05)
    third = report_of(Rperf.snapshot)
    assert_operator third["samples"].sum { _2 }, :<, second["samples"].sum { _2 }, "after clear only the new interval"
    assert_operator third["stats"]["sampling_count"], :<, second["stats"]["sampling_count"]
    assert_equal first["frames"][4..].first(3), third["frames"][4..].first(3), "frame ids are stable across clears"
    final = report_of(Rperf.stop)
    assert_operator final["samples"].sum { _2 }, :>=, third["samples"].sum { _2 }
  end

  def test_defer_samples_only_inside_profile_blocks
    Rperf.start(frequency: 1000, mode: :cpu, defer: true)
    burn(0.1)
    paused = report_of(Rperf.snapshot)
    assert_equal 0, paused["stats"]["trigger_count"], "the timer is disarmed while no profile block runs"
    assert_equal 0, paused["stats"]["sampling_count"]
    cpu_used = nil
    Rperf.profile do
      before = thread_cpu
      burn(0.15)
      cpu_used = thread_cpu - before
    end
    burn(0.1)
    report = report_of(Rperf.stop)
    sampled = report["samples"].sum { _2 } / 1e9
    assert_operator report["stats"]["sampling_count"], :>, 50
    assert_operator sampled, :<=, cpu_used * 1.1 + 0.005, "time outside profile blocks is not sampled"
    assert_operator sampled, :>=, cpu_used * 0.6
  end

  def test_labels_split_samples
    Rperf.start(frequency: 1000, mode: :wall)
    Rperf.profile(endpoint: "a") { burn(0.05); sleep(0.03) }
    report = report_of(Rperf.stop)
    id = report["label_sets"].find { _1["labels"] == { "endpoint" => "a" } }.fetch("id")
    assert_operator weight(report) { |labels, _, l| l == id && !SYNTHETIC.include?(labels.first) }, :>, 0.02e9
    assert_operator weight(report) { |labels, _, l| l == id && labels.first == "[GVL blocked]" }, :>, 0.02e9
  end

  def test_blame_weights_holder_samples_by_waiters
    Rperf.start(frequency: 1000, mode: :wall)
    workers = Array.new(3) { Thread.new { burn(0.15) } }
    # Threads other tests left alive (log writers, servers) may wait too.
    others = Thread.list.size - 1
    workers.each(&:join)
    report = report_of(Rperf.stop)
    blame = report.fetch("blame")
    assert_operator blame.size, :>, 0, "holders that made others wait are blamed"
    samples = report["samples"].to_h { |sid, w, seq, l| [[sid, seq, l], w] }
    blame.each do |sid, seq, label_set, blame_ns|
      weight_ns = samples.fetch([sid, seq, label_set])
      # At most the other threads alive (2 workers, main and leftovers) waited.
      assert_operator blame_ns, :<=, weight_ns * others
    end
  end

  def test_invalid_keywords_are_rejected_with_the_reason
    {
      { frequency: 0 } => /frequency: 0 is invalid/,
      { frequency: 10_001 } => /frequency: 10001 is invalid/,
      { frequency: 1.5 } => /frequency: 1.5 is invalid/,
      { mode: :both } => /mode: :both is invalid/,
      { aggregate: nil } => /aggregate: nil is invalid/,
      { signal: "9" } => /signal: "9" is invalid/,
      { signal: 9 } => /signal: 9 is invalid/,
      { defer: 1 } => /defer: 1 is invalid/
    }.each do |kwargs, message|
      error = assert_raise(ArgumentError, kwargs.inspect) { Rperf.start(**kwargs) }
      assert_match message, error.message
      refute Rperf.running?
    end
  end

  def test_start_with_a_block_returns_the_result_and_keeps_exceptions
    result = Rperf.start(frequency: 1000, mode: :cpu) { burn(0.05) }
    refute Rperf.running?
    assert_kind_of Rperf::Report, result
    assert_operator report_of(result)["stats"]["sampling_count"], :>, 0
    error = assert_raise(ZeroDivisionError) { Rperf.start(mode: :wall) { 1 / 0 } }
    assert_match(/divided/, error.message)
    refute Rperf.running?, "the profiler stops even when the block raises"
  end
end
