# Deferred profiles (defer: true): a thread's state is not followed while the
# profiler is paused, so on resume it must not keep a state it held at pause
# time. The main thread was running when the profile started (paused); it then
# blocks in Thread#value while a worker's Rperf.profile block runs. It must be
# charged as blocked (or waiting) during the block, not as running. A state
# open at the pause ends there, and what a report counted of it is not taken
# back from the next one.
require "tmpdir"
require_relative "contention_helper"

class TestDeferResume < Test::Unit::TestCase
  include ContentionHelper

  def test_thread_blocked_during_pause_is_not_running_after_resume
    Rperf.contention(defer: true)
    worker = Thread.new do
      Thread.current.name = "worker"
      sleep 0.05 # the main thread is inside Thread#value by now
      Rperf.profile { burn_work(0.15) }
    end
    worker.value
    report = Rperf.contention_stop
    main = report.threads.find { |t| t.seq == 1 }
    w = report.threads.find { |t| t.name == "worker" }
    assert_not_nil main
    assert_not_nil w
    assert_operator w.running_ns, :>, 50_000_000, w.to_h.inspect
    # The main thread did no Ruby work during the profile block.
    assert_operator main.running_ns, :<, w.running_ns * 0.2, main.to_h.inspect
  ensure
    Rperf.stop if Rperf.running?
  end

  STATES = %i[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze

  # A thread blocked in Queue#pop when the profile pauses: a report cut in
  # the pause counts its open state up to the pause, and the resume must
  # not take that back from what the thread does next. It did: the next
  # report and the next label rows lost as much (a labelled 50 ms sleep
  # after the resume counted 0 ms blocked).
  def test_a_state_open_at_a_pause_is_not_taken_back_after_the_resume
    %i[counters wall].each do |mode|
      Rperf.start(mode: mode, defer: true, **(mode == :counters ? {} : { timeline: true }))
      jobs = Queue.new
      inner = {}
      worker = Thread.new do
        Thread.current.name = "worker"
        while (step = jobs.pop)
          Rperf.profile do
            Rperf.label(step: step) do
              before = Rperf.thread_contention
              sleep 0.05
              after = Rperf.thread_contention
              inner[step] = STATES.to_h { |k| [k, after[k] - before[k]] }
            end
          end
        end
      end
      # Step one, then the worker blocks in Queue#pop while recorded.
      Rperf.profile do
        jobs << "one"
        sleep 0.15
      end
      sleep 0.05 # paused
      reports = [Rperf.snapshot(clear: true)]
      Rperf.profile do
        jobs << "two"
        sleep 0.15
      end
      jobs << nil
      worker.join
      reports << Rperf.stop
      %w[one two].each do |step|
        rows = reports.flat_map { |r| r.labels.select { |row| row.labels["step"] == step } }
        STATES.each do |k|
          assert_operator rows.sum(&k), :>=, inner[step][k] - 100_000,
                          "#{mode}: step=#{step} #{k} below the thread's own reads inside the label"
        end
      end
      reports.each do |report|
        w = report.thread("worker")
        assert_operator w.blocked_ns, :>=, 40_000_000, "#{mode}: #{w.to_h}"
        next if mode == :counters

        # The state ended at the pause keeps its timeline interval.
        covered = report.intervals.select { |iv| iv.thread == w.seq }.sum(&:duration_ns)
        assert_in_delta w.accounted_ns, covered, w.accounted_ns * 0.02 + 200_000, "#{mode}: #{w.to_h}"
      end
    ensure
      Rperf.stop if Rperf.running?
    end
  end

  # A resume rebases the other threads of its Ractor while one of them may
  # be in READY, which runs without the GVL: both write that thread's slot.
  # A lost seqlock increment once left a slot odd for good, and the next
  # report spun forever holding the GVL. Many pauses and resumes beside
  # threads waking each other; every snapshot must come back.
  def test_resumes_beside_waking_threads_never_leave_a_slot_mid_write
    Dir.mktmpdir do |dir|
      run_ruby_child(dir, <<~RUBY, timeout: 60)
        require "rperf"
        Rperf.start(mode: :counters, defer: true)
        stop = false
        pairs = 2.times.flat_map do
          a = Queue.new
          b = Queue.new
          [Thread.new { (a.pop; b << 1) until stop }, Thread.new { (a << 1; b.pop) until stop }]
        end
        t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        n = 0
        while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < 3
          Rperf.profile { n += 1 }
          Thread.pass if n % 64 == 0
          Rperf.snapshot if n % 2000 == 0
        end
        stop = true
        exit!(Rperf.stop ? 0 : 1)
      RUBY
    end
  end
end
