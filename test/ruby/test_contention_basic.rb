# frozen_string_literal: true

# The walking skeleton: start/stop with the GVL hooks give, per thread,
# real measured GVL wait and blocked time and the thread's name.
require "tmpdir"
require_relative "contention_helper"

class TestContentionBasic < Test::Unit::TestCase
  include ContentionHelper

  def teardown
    Rperf.stop if Rperf.running?
  end

  # 4 threads that each need ~0.3 s of CPU (three 100 ms timeslices) share
  # one GVL: every thread must wait a substantial part of its life (ideally
  # 3/4; > 30% asserted). Running is time holding the GVL, which includes
  # time the OS gave the holder's CPU to another process: equal work is
  # equal CPU time, not equal running time (on a busy machine one worker
  # held the GVL 518 ms against a mean of 284). So each worker's running
  # (with its GC) covers the CPU time it used, and together they held the
  # one GVL no longer than the run lasted.
  def test_four_cpu_threads_all_wait
    cpu = {}
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    report = Rperf.contention do
      cpu_threads(4, 0.3).each do |t|
        t.join
        cpu[t.name] = t[:cpu_ns]
      end
    end
    elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - started
    workers = by_name(report, "cpu")
    assert_equal 4, workers.size
    workers.each do |t|
      assert_operator t.gvl_wait_share, :>, 0.30,
                      "#{t.name} waited #{t.gvl_wait_ns} ns of #{t.lifetime_ns} ns"
      if (used = cpu.fetch(t.name))
        assert_operator t.running_ns + t.gc_ns, :>=, used - 2_000_000, "#{t.name} used #{used} ns of CPU: #{t.to_h}"
      end
      assert t.exited
    end
    assert_operator workers.sum { _1.running_ns + _1.gc_ns }, :<=, elapsed
    assert_conservation(report)
  end

  # One CPU thread alone has nobody to wait for, except its creator at
  # birth: a new thread becomes READY at Thread.new and waits until the
  # main thread lets go of the GVL in #join (recorded by design). That one
  # wait can take several ms under a sanitizer or on a loaded machine, so
  # the bound is 2% of the run plus 15 ms, and the number of waits is the
  # sharper check: one at birth, perhaps one more around GC or exit.
  def test_single_cpu_thread_barely_waits
    report = Rperf.contention do
      cpu_threads(1, 0.3).each(&:join)
    end
    t = by_name(report, "cpu").first
    assert t, "the cpu thread is in the report"
    assert_operator t.gvl_wait_ns, :<, t.lifetime_ns * 0.02 + 15_000_000,
                    "waited #{t.gvl_wait_ns} ns of #{t.lifetime_ns}"
    assert_operator t.waits, :<=, 3, "waits: #{t.waits}"
    assert_operator t.running_ns, :>, t.lifetime_ns * 0.9
  end

  # Sleeping and IO threads release the GVL: their time is blocked.
  def test_sleep_and_io_threads_are_blocked
    report = Rperf.contention do
      r, w = IO.pipe
      sleeper = Thread.new { Thread.current.name = "sleeper"; sleep 0.2 }
      reader = Thread.new { Thread.current.name = "reader"; r.read(1) }
      sleep 0.2
      w.write("x")
      [sleeper, reader].each(&:join)
      [r, w].each(&:close)
    end
    %w[sleeper reader].each do |name|
      t = report.thread(name)
      assert t, "no thread named #{name}"
      assert_operator t.blocked_ns, :>=, 150_000_000, "#{name} blocked #{t.blocked_ns} ns"
      assert_operator t.blocked_ns, :>, t.lifetime_ns * 0.8
    end
    assert_conservation(report)
  end

  # Rperf.start/stop return the per-thread numbers with names.
  def test_start_stop_result_has_thread_totals
    Rperf.start(mode: :wall)
    cpu_threads(2, 0.25, prefix: "pair").each(&:join)
    result = Rperf.stop
    threads = result[:threads].select { |t| t[:name].start_with?("pair") }
    assert_equal 2, threads.size
    threads.each do |t|
      assert_operator t[:gvl_wait_ns], :>, 50_000_000, "#{t[:name]} waited #{t[:gvl_wait_ns]} ns (two threads alternate in 100 ms slices)"
      %i[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].each { |k| assert_kind_of Integer, t[k] }
    end
    assert_equal :wall, result[:mode]
    refute Rperf.running?
  end

  def test_save_writes_report_json
    report = Rperf.contention { cpu_threads(2, 0.05).each(&:join) }
    Dir.mktmpdir do |dir|
      path = File.join(dir, "report.json")
      report.save(path)
      data = JSON.parse(File.read(path))
      assert_equal "rperf-gvl-report", data["format"]
      assert_equal 1, data["version"]
      assert_equal report.threads.map(&:seq), data["threads"].map { |t| t["seq"] }
      gz = File.join(dir, "report.json.gz")
      report.save(gz)
      assert_equal "\x1f\x8b".b, File.binread(gz, 2)
      loaded = Rperf::Report.load(gz)
      assert_equal report.to_h["threads"], loaded.to_h["threads"]
    end
  end
end

