# frozen_string_literal: true

# mode: :counters — exact per-thread and per-label totals without a sampler,
# timeline or wait graph. Checked by conservation laws on known workloads
# (two CPU-bound threads that share one GVL for the same wall span), by
# label totals against each thread's own counter reads, by the report's
# shape and every view of it, by the native threads a start creates, and
# by the log middlewares in their documented setup.
require "json"
require "stringio"
require "tmpdir"
require_relative "contention_helper"
require "rperf/rack"
require "rperf/job_middleware"

class TestCountersMode < Test::Unit::TestCase
  include ContentionHelper

  STATES = %i[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze

  def teardown
    Rperf.stop if Rperf.running?
  end

  def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  # Two threads that compute until the same deadline: while both live, one
  # holds the GVL and the other waits for it, so each one's wait is the
  # other's running over their common span.
  def two_until_deadline(seconds)
    gate = Queue.new
    threads = 2.times.map do |i|
      Thread.new do
        Thread.current.name = "cpu#{i}"
        deadline = gate.pop
        # The CPU from here on: the thread's start (under ASan over a
        # millisecond) comes before its first GVL acquisition.
        from = ContentionHelper.thread_cpu_ns
        x = 0
        x += 1 while monotonic < deadline
        now = ContentionHelper.thread_cpu_ns # nil without a thread CPU clock (M:N)
        Thread.current[:cpu_ns] = now - from if now && from
        x
      end
    end
    deadline = monotonic + seconds
    2.times { gate << deadline }
    threads.each(&:join).to_h { [_1.name, _1[:cpu_ns]] }
  end

  def test_two_cpu_threads_conserve_time_and_wait_for_each_other
    started = monotonic
    cpu = nil
    report = Rperf.contention(mode: :counters) { cpu = two_until_deadline(0.4) }
    elapsed_ns = (monotonic - started) * 1e9
    assert_conservation(report)
    a, b = by_name(report, "cpu")
    refute_nil b, "both workers are in the report"
    [[a, b], [b, a]].each do |waiter, holder|
      # While one ran, the other waited, bar the start behind the gate: 5%
      # + 15 ms. The wait can be longer than the other's running by the
      # hand-offs, in which the GVL is the waiter's but its thread waits for
      # a CPU (32 ms of 167 with both cores busy), so the bound is one-sided.
      slack = 0.05 * holder.running_ns + 15_000_000
      assert_operator waiter.gvl_wait_ns, :>=, holder.running_ns - slack,
                      "#{waiter.name} waited while #{holder.name} ran: #{waiter.to_h} / #{holder.to_h}"
      assert_operator waiter.waits, :>=, 1
      assert_operator waiter.acquisitions, :>=, waiter.waits
      # What it computed, it computed holding the GVL.
      if (used = cpu.fetch(waiter.name))
        assert_operator waiter.running_ns + waiter.gc_ns, :>=, used - 2_000_000, waiter.to_h.inspect
      end
      # Off the GVL only at the gate: they computed or waited.
      assert_operator waiter.blocked_ns, :<, 0.05 * waiter.lifetime_ns + 15_000_000, waiter.to_h.inspect
    end
    # One GVL: together they held it no longer than the run.
    assert_operator a.running_ns + b.running_ns, :<=, elapsed_ns
  end

  # Each thread reads its own counters just inside and just outside each
  # label. The label switch happens between the outer and the inner read,
  # so the report's label totals lie between the two sums in every state.
  # The bracket is exact: a GVL hand-off or a GC between the two reads
  # (seen under ASan) widens it but cannot put the report outside it.
  def test_label_totals_are_exact_per_label
    inner = Hash.new { |h, k| h[k] = Hash.new(0) }
    outer = Hash.new { |h, k| h[k] = Hash.new(0) }
    lock = Mutex.new
    report = Rperf.contention(mode: :counters) do
      3.times.map do |i|
        Thread.new do
          %w[parse render].each_with_index do |step, j|
            outer_before = Rperf.thread_contention
            inner_before = inner_after = nil
            Rperf.label(step: step) do
              inner_before = Rperf.thread_contention
              burn_work(0.02 * (i + j + 1))
              sleep 0.01 * (j + 1)
              inner_after = Rperf.thread_contention
            end
            outer_after = Rperf.thread_contention
            lock.synchronize do
              STATES.each do |k|
                inner[step][k] += inner_after[k] - inner_before[k]
                outer[step][k] += outer_after[k] - outer_before[k]
              end
            end
          end
        end
      end.each(&:join)
    end
    rows = report.labels.to_h { |row| [row.labels["step"], row] }
    %w[parse render].each do |step|
      row = rows.fetch(step) { flunk "no label totals for step=#{step}: #{report.labels.inspect}" }
      STATES.each do |k|
        # 10 us per read for the clock reads' own rounding.
        assert_operator row.public_send(k), :>=, inner[step][k] - 60_000,
                        "step=#{step} #{k}: report #{row.public_send(k)} below the inner reads' #{inner[step][k]}"
        assert_operator row.public_send(k), :<=, outer[step][k] + 60_000,
                        "step=#{step} #{k}: report #{row.public_send(k)} above the outer reads' #{outer[step][k]}"
      end
      # The bracket is narrow where nothing else can run: the time on the
      # GVL between the reads is a few method calls per label.
      assert_operator outer[step][:running_ns] - inner[step][:running_ns], :<, 3_000_000,
                      "step=#{step}: the reads around the label switches ran for long"
      assert_operator row.running_ns, :>, 0
      # Each of the 3 threads slept at least 10 ms here, off the GVL. A sleeper
      # woken before its deadline (seen under M:N threads) waits for the GVL
      # before it sleeps again, so a little of a sleep can count as GVL wait.
      assert_operator row.blocked_ns + row.gvl_wait_ns, :>=, 30_000_000, "3 threads slept at least 10 ms each in step=#{step}"
      assert_operator row.blocked_ns, :>=, 24_000_000, "the sleeps of step=#{step} counted as blocked"
    end
    # A thread's label rows sum to its totals.
    report.threads.each do |t|
      mine = report.label_totals.select { |r| r.thread == t.seq }
      STATES.each { |k| assert_in_delta t.public_send(k), mine.sum { |r| r.public_send(k) }, 100_000, "#{t.seq} #{k}" }
    end
  end

  def test_thread_contention_between_two_reads_adds_up_to_the_elapsed_time
    Rperf.start(mode: :counters)
    before = Rperf.thread_contention
    burn_work(0.03)
    sleep 0.03
    after = Rperf.thread_contention
    diff = STATES.to_h { |k| [k, after[k] - before[k]] }
    assert_equal after[:monotonic_ns] - before[:monotonic_ns], diff.values.sum, diff.inspect
    assert_operator diff[:running_ns], :>=, 25_000_000
    assert_operator diff[:blocked_ns], :>=, 25_000_000
  end

  def test_the_report_has_no_samples_edges_or_intervals_and_every_view_renders
    report = Rperf.contention(mode: :counters) do
      r, w = IO.pipe
      reader = Thread.new { 3.times { r.read(1) } }
      cpu = cpu_threads(2, 0.05)
      3.times { sleep 0.01; w.write("x") }
      (cpu + [reader]).each(&:join)
      [r, w].each(&:close)
    end
    doc = report.to_h
    %w[samples stacks blame edges].each { |k| assert_equal [], doc[k], k }
    assert_equal 0, report.intervals.size
    assert_equal "counters", report.meta["recording"]
    assert_equal 0, report.meta["frequency"]
    assert_equal 0, report.stats["trigger_count"]
    assert_equal 0, report.stats["sampling_count"]
    assert_operator report.stats["hook_events"], :>, 0
    assert_operator report.threads.size, :>=, 4
    assert_conservation(report)
    assert_operator report.threads.sum(&:gvl_wait_ns), :>, 0, "the two CPU threads waited for each other"

    Rperf::Report::VIEWS.each_key do |view|
      out = report.public_send(view)
      assert_kind_of String, out, view
      refute_empty out, view unless %i[to_collapsed].include?(view)
    end
    assert_match(/cpu0/, report.to_summary)
    Dir.mktmpdir do |dir|
      path = File.join(dir, "counters.json")
      report.save(path)
      again = Rperf::Report.load(path)
      assert_equal report.threads, again.threads
      assert_equal report.label_totals, again.label_totals
      assert_equal "counters", again.meta["recording"]
    end
  end

  def test_a_full_report_says_so
    report = Rperf.contention(frequency: 10) { sleep 0.01 }
    assert_equal "full", report.meta["recording"]
    assert_equal 10, report.meta["frequency"]
  end

  # The sampler's worker is a native thread: counters mode starts none.
  def test_counters_mode_starts_no_native_thread
    omit "needs /proc/self/task" unless File.directory?("/proc/self/task")
    tasks = -> { Dir.children("/proc/self/task").size }
    before = tasks.()
    Rperf.start(mode: :counters)
    assert_equal before, tasks.(), "counters mode added a native thread"
    Rperf.stop
    Rperf.start(mode: :wall)
    assert_operator tasks.(), :>, before, "the sampler's worker is seen when there is one"
  end

  def test_sampling_and_timeline_keywords_are_refused_with_counters
    { frequency: 100, aggregate: false, signal: false, timeline: true, max_intervals: 10,
      min_interval_ns: 0, max_edges: 10 }.each do |key, value|
      err = assert_raise(ArgumentError, key.to_s) { Rperf.start(mode: :counters, key => value) }
      assert_match(/\A#{key}: .* mode: :counters/, err.message)
      refute Rperf.running?
    end
    assert_raise_message(/expected :cpu, :wall or :counters/) { Rperf.start(mode: :count) }
    assert Rperf.start(mode: "counters", timeline: false, max_threads: 64)
  end

  # One list of modes: the extension's, which each report names.
  def test_modes_come_from_the_extension_and_it_refuses_others
    assert_equal %i[cpu wall counters], Rperf::MODES.keys
    assert Rperf::MODES.frozen?
    Rperf::MODES.each_key do |mode|
      report = Rperf.contention(mode: mode) { 1 }
      assert_equal [mode == :cpu ? "cpu" : "wall", mode == :counters ? "counters" : "full"],
                   [report.meta["mode"], report.meta.fetch("recording", "full")], mode.to_s
    end
    [{}, { mode: Rperf::MODES.size }, { mode: -1 }].each do |config|
      assert_raise(ArgumentError, config.inspect) { Rperf.__send__(:_c_start, config, []) }
      refute Rperf.running?
    end
  end

  def test_a_deferred_counters_profile_records_only_inside_profile_blocks
    Rperf.start(mode: :counters, defer: true)
    sleep 0.05 # paused: not recorded
    Rperf.profile { sleep 0.02 }
    report = Rperf.stop
    caller = report.threads.find { |t| t.seq == 1 } # the thread that started the profile
    assert_operator caller.blocked_ns, :>=, 19_000_000, caller.to_h.inspect
    assert_operator caller.blocked_ns, :<, 45_000_000, "the paused sleep is not counted: #{caller.to_h}"
    assert_operator report.stats["paused_ns"], :>=, 49_000_000
    # Resumed in counters mode, not in full attribution.
    assert_equal [], report.to_h["edges"]
    assert_equal 0, report.intervals.size
  end

  # The documented setup of the log middlewares (docs/logging.md).
  def test_log_middlewares_in_their_documented_setup
    Rperf.start(mode: :counters, defer: true)
    io = StringIO.new
    log = Rperf::ContentionLog.new(async: false, output: io, format: :json, units: :ns)
    app = lambda do |env|
      burn_work(env["PATH_INFO"] == "/cpu" ? 0.04 : 0.005)
      sleep 0.01
      [200, {}, ["ok"]]
    end
    rack = Rperf::Rack::Middleware.new(app, log: log)
    jobs = Rperf::JobMiddleware.new(log: log)
    threads = %w[/cpu /cpu /users/1 /users/2].map do |path|
      Thread.new { rack.call({ "REQUEST_METHOD" => "GET", "PATH_INFO" => path, "SCRIPT_NAME" => "" }) }
    end
    threads << Thread.new { jobs.call(Object.new, { "class" => "Resize", "jid" => "j1" }, "media") { burn_work(0.02) } }
    threads.each(&:join)
    interval = Rperf::ContentionLog.new(async: false, output: io, format: :json, units: :ns)
    interval.log_report(Rperf.snapshot)
    lines = io.string.lines.map { |l| JSON.parse(l) }
    units = lines.reject { |l| l["kind"] == "interval" }
    assert_equal 5, units.size
    units.each do |l|
      states = STATES.sum { |k| l[k.to_s] }
      assert_in_delta l["wall_ns"], states, 0.02 * l["wall_ns"] + 200_000, l.inspect
      assert_operator l["running_ns"], :>, 0, l.inspect
    end
    assert_operator units.count { |l| l["label.endpoint"] == "GET /users/:id" }, :==, 2
    cpu = units.select { |l| l["label.endpoint"] == "GET /cpu" }
    assert_operator cpu.sum { |l| l["gvl_wait_ns"] }, :>, 0, "the requests competed for the GVL"
    # The interval line of each label is the sum of that label's unit lines,
    # to the nanosecond: the label switches read the units' counters, so no
    # GVL hand-off or preemption between a read and a switch (common on a
    # busy machine) can fall into one and not the other.
    by_label = lines.select { |l| l["kind"] == "interval" }.to_h { |l| [l["label.endpoint"] || l["label.job"], l] }
    { "GET /cpu" => cpu, "Resize" => units.select { |l| l["label.job"] == "Resize" } }.each do |name, rows|
      line = by_label.fetch(name) { flunk "no interval line for #{name}: #{by_label.keys}" }
      STATES.each do |k|
        assert_equal rows.sum { |l| l[k.to_s] }, line[k.to_s], "#{name} #{k}"
      end
    end
    # and a unit's states add up to its wall time exactly: both come from
    # the same two clock readings.
    units.each { |l| assert_equal l["wall_ns"], STATES.sum { |k| l[k.to_s] }, l.inspect }
  end
end
