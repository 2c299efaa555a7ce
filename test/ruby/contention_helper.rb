# frozen_string_literal: true

# Shared workloads and checks for the contention tests. Workloads are
# defined by what they do (burn CPU with the GVL, sleep, read a pipe), not
# by expected numbers; the tests check conservation laws and known
# contention shapes with stated tolerances.
require "json"
require "tmpdir"
require "test/unit"
require "rperf"

module ContentionHelper
  # Loop iterations per second of one thread running alone, measured once.
  # Work is counted in iterations, not thread CPU time: with M:N threads
  # (RUBY_MN_THREADS=1) a native thread's CPU clock also counts the other
  # Ruby threads it carried.
  def self.iterations_per_second
    # The fastest of a few runs: the least disturbed by other processes.
    @iterations_per_second ||= 5.times.map do
      n = 500_000
      t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      spin(n)
      n / (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t)
    end.max
  end

  # This thread's CPU time in ns, or nil under M:N threads, where the
  # clock is the native thread's and counts every Ruby thread it carried.
  def self.thread_cpu_ns
    return nil if ENV["RUBY_MN_THREADS"] == "1"

    Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
  end

  # The unit of work that burn_work counts.
  def self.spin(n)
    x = 0
    i = 0
    while i < n
      x += i
      i += 1
    end
    x
  end

  # About `seconds` of single-thread CPU work: the calibrated iteration
  # count, then more until `seconds` of wall time have passed. This
  # machine's speed drifts by several times, and a burn that finishes early
  # because the machine got faster after calibration would break lower
  # bounds on running time. With other threads in the way the work alone
  # takes longer than `seconds`, so equal work stays equal.
  def burn_work(seconds)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    x = ContentionHelper.spin((ContentionHelper.iterations_per_second * seconds).to_i)
    x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) - started < seconds
    x
  end

  def cpu_threads(n, seconds, prefix: "cpu")
    ContentionHelper.iterations_per_second
    n.times.map do |i|
      Thread.new do
        # The CPU from the block on: the thread's start (under ASan over a
        # millisecond) comes before its first GVL acquisition.
        from = ContentionHelper.thread_cpu_ns
        Thread.current.name = "#{prefix}#{i}"
        burn_work(seconds).tap do
          now = ContentionHelper.thread_cpu_ns # nil without a thread CPU clock (M:N)
          Thread.current[:cpu_ns] = now - from if now && from
        end
      end
    end
  end

  # -I options that find this build's rperf, for child processes.
  def child_includes
    $LOAD_PATH.select { |d| File.exist?(File.join(d, "rperf.rb")) || Dir.exist?(File.join(d, "rperf")) }
              .map { |d| "-I#{File.expand_path(d)}" }
  end

  # Runs the Ruby `source` in a child (output in dir/log) and fails unless
  # it exits successfully within `timeout` seconds (Ractor workloads can
  # hang on their own: the child is killed then).
  def run_ruby_child(dir, source, timeout: 120)
    log = File.join(dir, "log")
    pid = spawn(RbConfig.ruby, *child_includes, "-e", source, %i[out err] => log)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    status = nil
    until (status = Process.wait2(pid, Process::WNOHANG)&.last)
      if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
        Process.kill(:KILL, pid)
        Process.wait(pid)
        flunk("the child workload did not finish within #{timeout} s")
      end
      sleep 0.05
    end
    assert status.success?, File.read(log)
  end

  # The report of `Rperf.contention { body }` run in a child Ruby, loaded
  # (Ractor workloads can hang on their own: run_ruby_child's timeout).
  def contention_in_child(body, timeout: 60)
    Dir.mktmpdir do |dir|
      path = File.join(dir, "r.json")
      run_ruby_child(dir, <<~RUBY, timeout: timeout)
        Warning[:experimental] = false
        require "rperf"
        Rperf.contention do
        #{body}
        end.save(#{path.inspect})
      RUBY
      Rperf::Report.load(path)
    end
  end

  # Per-thread conservation: running + gvl_wait + blocked + gc equals the
  # lifetime within `tolerance` (fraction) plus 200µs of clock granularity.
  # The root-cause laws hold too (assert_root_cause_laws).
  def assert_conservation(report, tolerance: 0.02)
    refute_empty report.threads, "a report has at least the calling thread"
    report.threads.each do |t|
      life = t.lifetime_ns
      diff = (t.accounted_ns - life).abs
      assert_operator diff, :<=, life * tolerance + 200_000,
                      "thread #{t.seq} (#{t.name}): states sum to #{t.accounted_ns} ns, lifetime #{life} ns"
    end
    assert_root_cause_laws(report)
  end

  # The start of a child script with Ractors. Its BURN (a Ractor's block,
  # given seconds and threads) starts `threads` threads that each burn
  # `seconds` of their CPU clock (one native thread each here).
  RACTOR_CHILD_PRELUDE = <<~RUBY
    Warning[:experimental] = false
    require "rperf"
    BURN = proc do |seconds, threads|
      burn = lambda do
        start = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
        x = 0
        x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - start < seconds
        x
      end
      Array.new(threads) { Thread.new(&burn) }.each(&:join)
      :done
    end
  RUBY

  # A child script (after RACTOR_CHILD_PRELUDE): four Ractors of two
  # CPU-bound threads each, with `sleepers` threads of the main Ractor that
  # compute a little and sleep 0.3 ms in turn, under a clearing snapshot
  # every millisecond for 0.5 s. It writes to `out` one row per report and
  # thread: [seq, gvl_wait_ns, edge sum, states' sum, lifetime].
  def ractor_clearing_series(out, sleepers: 0)
    <<~RUBY
      require "json"
      session = Rperf.contention
      workers = 4.times.map { Ractor.new(0.8, 2, &BURN) }
      stop = false
      sleepers = #{Integer(sleepers)}.times.map do
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
      File.write(#{out.inspect}, JSON.generate(rows))
    RUBY
  end

  RELEASABLE_CAUSES = %w[mutex condvar queue join].freeze

  # Root causes (docs/guide.md, "Root causes"), exact to the nanosecond
  # whatever the scheduler did: each waiter's roots sum to its waited
  # intervals (GVL waits, and blocked ones on a Mutex, ConditionVariable,
  # Queue or join), each label set's shares to its intervals, and the
  # critical path of the longest-lived thread covers its window. A report
  # without a timeline has none, and says so. (A build without the analysis
  # module has no root causes to check.)
  def assert_root_cause_laws(report)
    return unless Rperf::HAVE_ANALYSIS

    roots = JSON.parse(report.to_summary_json)["root_causes"]
    if report.intervals.empty?
      refute roots["available"]
      assert_match(/need a full recording/, roots["reason"])
      return
    end
    doc = report.to_h
    causes = doc.fetch("causes", [])
    cause_of = doc.fetch("interval_causes", []).to_a.to_h { |t, start, cause, _| [[t, start], causes[cause]] }
    waited = Hash.new(0)
    label_time = Hash.new(0)
    with_intervals = {}
    report.intervals.each do |iv|
      with_intervals[iv.thread] = true
      label_time[iv.label_set] += iv.duration_ns
      wait = iv.state == 1 || (iv.state == 2 && RELEASABLE_CAUSES.include?(cause_of[[iv.thread, iv.start_ns]]))
      waited[iv.thread] += iv.duration_ns if wait
    end
    explained = Hash.new(0)
    roots["waiters"].each { |row| explained[row["waiter"]] += row["ns"] }
    assert_equal waited.reject { |_, ns| ns.zero? }, explained.reject { |_, ns| ns.zero? },
                 "each waiter's root causes sum to its waited intervals"
    assert_equal explained.values.sum, roots["waited_ns"]
    roots["label_sets"].each do |l|
      assert_equal label_time[l["label_set"]], l["time_ns"], "label set #{l['label_set']}: its intervals' time"
      assert_equal l["time_ns"], l["shares"].sum { |s| s["ns"] }, "label set #{l['label_set']}: shares sum to it"
    end
    longest = report.threads.select { |t| with_intervals[t.seq] }.max_by(&:lifetime_ns)
    return unless longest

    path = report.critical_path(thread: longest.seq)
    assert_equal path["to_ns"] - path["from_ns"], path["covered_ns"], "the path covers its window"
    assert_equal path["covered_ns"], path["segments"].sum { |s| s["end_ns"] - s["start_ns"] }
    assert_equal path["covered_ns"], path["shares"].sum { |s| s["ns"] }
  end

  # A waiter's edges sum to its gvl_wait.
  def assert_edges_sum(report, tolerance: 0.02)
    sums = report.edge_sums
    refute_empty report.threads, "a report has at least the calling thread"
    report.threads.each do |t|
      got = sums[t.seq]
      assert_operator (got - t.gvl_wait_ns).abs, :<=, t.gvl_wait_ns * tolerance + 100_000,
                      "thread #{t.seq} (#{t.name}): edges sum to #{got} ns, gvl_wait #{t.gvl_wait_ns} ns"
    end
  end

  # Intervals of one thread never overlap and are well-formed.
  def assert_intervals_disjoint(report)
    refute_empty report.intervals, "a report with a timeline has intervals"
    report.intervals.group_by(&:thread).each do |seq, ivs|
      last_end = -1
      ivs.sort_by(&:start_ns).each do |iv|
        assert_operator iv.start_ns, :<=, iv.end_ns
        assert_includes 0..4, iv.state
        assert_operator iv.start_ns, :>=, last_end,
                        "thread #{seq}: interval starting at #{iv.start_ns} overlaps one ending at #{last_end}"
        last_end = iv.end_ns
      end
    end
  end

  def by_name(report, prefix)
    report.threads.select { |t| t.name.start_with?(prefix) }
  end
end
