# frozen_string_literal: true

# Each test here would fail on a known flaw of the design the sampler grew
# from: (1) resume re-based every thread on the caller's CPU clock, (2)
# stacks were captured while paused, (3) GC time was counted again by the
# next regular sample, (6) a 1 Hz timer put 1e9 in tv_nsec (see
# test_sampler_basic), (7) drops were silent, (9) overhead counters left
# out the work done in hooks.
require_relative "test_sampler_helper"

class TestSamplerFlaws < Test::Unit::TestCase
  include SamplerTestHelper

  def teardown
    ENV.delete("RPERF_SAMPLER_BUFFER_SAMPLES")
    ensure_stopped
  end

  # Flaw 1: a thread that burned CPU while paused must not have that time
  # charged after resume because its clock was re-based on another
  # thread's (the resuming thread's, much smaller) CPU clock.
  def test_resume_rebases_each_thread_on_its_own_cpu_clock
    Rperf.start(frequency: 1000, mode: :cpu, defer: true)
    go = Queue.new
    done = Queue.new
    worked = nil
    worker = Thread.new do
      Thread.current.name = "worker"
      Rperf.profile { burn(0.02) } # seen once: the sampler knows its clock
      burn(0.3)                   # paused: must not be counted
      go.pop
      before = thread_cpu
      burn(0.05)                  # resumed: counted
      worked = thread_cpu - before
      done << true
    end
    sleep 0.01 until worker.status == "sleep" || !worker.alive?
    Rperf.profile do
      go << true
      done.pop
    end
    worker.join
    report = report_of(Rperf.stop)
    charged = thread_weight(report, seq_of(report, "worker")) / 1e9
    assert_operator charged, :<=, worked + 0.02 + 0.02, "CPU time burned while paused was charged after resume"
  end

  # Flaw 2: while paused nothing is captured and the sampler's tables do
  # not grow, however much the program runs, blocks or collects garbage.
  def test_paused_captures_nothing_and_does_not_grow
    Rperf.start(frequency: 2000, mode: :wall, defer: true)
    threads = Array.new(3) do |i|
      Thread.new do
        burn(0.05)
        r, w = IO.pipe
        20.times { w.write("x"); r.read(1) }
        GC.start if i.zero?
        sleep 0.02
      end
    end
    threads.each(&:join)
    report = report_of(Rperf.stop)
    assert_equal 0, report["stats"]["sampling_count"]
    assert_equal 0, report["stats"]["synthetic_samples"]
    assert_equal [], report["samples"]
    assert_equal [], report["stacks"]
    assert_equal 4, report["frames"].size, "only the synthetic frames exist"
  end

  # Flaw 3: GC time recorded as [GC marking]/[GC sweeping] advances the
  # thread's sample clock, so a thread's weights never exceed its own clock.
  def collect_garbage_for(seconds, clock)
    keep = Array.new(200_000) { |i| [i, i.to_s] }
    before = clock.call
    stop_at = before + seconds
    GC.start while clock.call < stop_at
    keep.size
    clock.call - before
  end

  def gc_weights(report, seq)
    (synthetic_weight(report, "[GC marking]", seq: seq) + synthetic_weight(report, "[GC sweeping]", seq: seq)) / 1e9
  end

  def test_gc_time_is_counted_once_in_cpu_mode
    used = nil
    Rperf.start(frequency: 1000, mode: :cpu)
    Thread.new do
      Thread.current.name = "collector"
      collect_garbage_for(0.4, -> { thread_cpu })
      used = thread_cpu # the thread's whole CPU time (its clock starts with it)
    end.join
    report = report_of(Rperf.stop)
    seq = seq_of(report, "collector")
    assert_operator gc_weights(report, seq), :>, 0, "GC work is recorded as GC frames in cpu mode"
    total = thread_weight(report, seq) / 1e9
    assert_operator total, :<=, used * 1.1 + 0.05, "GC time was counted a second time by regular samples"
  end

  def test_gc_time_is_counted_once_in_wall_mode
    lifetime = nil
    Rperf.start(frequency: 1000, mode: :wall)
    Thread.new do
      Thread.current.name = "collector"
      t0 = monotonic
      collect_garbage_for(0.4, -> { monotonic })
      lifetime = monotonic - t0
    end.join
    report = report_of(Rperf.stop)
    seq = seq_of(report, "collector")
    gc = gc_weights(report, seq)
    assert_operator gc, :>, lifetime * 0.3, "GC work is recorded as GC frames"
    total = thread_weight(report, seq) / 1e9
    # Double counting would put the thread at lifetime + gc.
    assert_operator total, :<=, lifetime * 1.1 + 0.05, "GC time was counted a second time by regular samples"
  end

  # Flaw 7: samples that do not fit are counted and reported.
  def test_dropped_samples_are_reported
    ENV["RPERF_SAMPLER_BUFFER_SAMPLES"] = "2"
    Rperf.start(frequency: 10_000, mode: :wall)
    Array.new(8) do
      Thread.new do
        r, w = IO.pipe
        400.times { w.write("x"); r.read(1); sleep 0.0002 }
      end
    end.each(&:join)
    result = Rperf.stop
    report = report_of(result)
    assert_operator report["stats"]["dropped_samples"], :>, 0
    assert_equal report["stats"]["dropped_samples"], result[:dropped_samples], "the result shows the drop counter"
  end

  # Flaw 9: the overhead counters include stack captures done in hooks.
  def test_overhead_counters_include_hook_work
    Rperf.start(frequency: 1000, mode: :wall)
    Array.new(4) { Thread.new { 40.times { sleep 0.002 } } }.each(&:join)
    stats = report_of(Rperf.stop)["stats"]
    assert_operator stats["synthetic_samples"], :>, 0, "hooks captured stacks"
    assert_operator stats["synthetic_time_ns"], :>, 0
    assert_operator stats["sampling_time_ns"], :>=, stats["synthetic_time_ns"], "sampling time includes the hooks' captures"
    assert_operator stats["sampling_count"], :>=, stats["synthetic_samples"]
    assert_operator stats["hook_events"], :>, 100
  end
end
