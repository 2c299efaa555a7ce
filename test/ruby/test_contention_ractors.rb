# frozen_string_literal: true

# Ractors: each has its own GVL, so CPU-bound Ractors do not wait for each
# other; threads only wait on holders of their own Ractor.
#
# Each workload runs in a child process with a deadline: Ruby 3.3's M:N
# Ractor scheduler can hang on its own (threads of a non-main Ractor that
# sleep reproduce it without the profiler), and a hang must fail one test,
# not stop the suite.
require "tmpdir"
require "rbconfig"
require_relative "contention_helper"

class TestContentionRactors < Test::Unit::TestCase
  include ContentionHelper

  CHILD_PRELUDE = RACTOR_CHILD_PRELUDE

  # Runs `body` (Ruby source, the block of Rperf.contention) `rounds` times
  # in a child and returns the reports.
  def ractor_reports(body, rounds: 1, timeout: 120)
    Dir.mktmpdir do |dir|
      run_child(dir, <<~RUBY, timeout: timeout)
        #{rounds}.times do |i|
          Rperf.contention { #{body} }.save(File.join(#{dir.inspect}, "r\#{i}.json"))
        end
      RUBY
      rounds.times.map { |i| Rperf::Report.load(File.join(dir, "r#{i}.json")) }
    end
  end

  # Runs CHILD_PRELUDE + `script` in a child (output in dir/log) and fails
  # unless it exits successfully within `timeout` seconds.
  def run_child(dir, script, timeout: 120) = run_ruby_child(dir, CHILD_PRELUDE + script, timeout: timeout)

  def test_parallel_ractors_barely_wait
    report = ractor_reports("2.times.map { Ractor.new(0.2, 1, &BURN) }.each(&:take)").first
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
    report = ractor_reports("2.times.map { Ractor.new(0.15, 3, &BURN) }.each(&:take)").first
    seq_ractor = report.threads.to_h { |t| [t.seq, t.ractor] }
    refute_empty report.edges, "threads of one Ractor wait on each other"
    report.edges.each do |e|
      assert_equal seq_ractor[e.waiter], e.ractor, e.to_h.inspect
      assert_equal e.ractor, seq_ractor[e.holder], e.to_h.inspect if e.holder_kind == "thread"
    end
    busy = report.threads.select { |t| t.ractor != 1 && t.running_ns > 50_000_000 }
    assert_operator busy.size, :>=, 4
    assert_operator busy.sum(&:gvl_wait_ns), :>, 0.2e9, "threads of one Ractor wait on each other"
    report.ractors.each do |r|
      assert_operator r.running_ns, :<=, report.duration_ns * 1.01
    end
    assert_conservation(report)
    assert_edges_sum(report)
    assert_intervals_disjoint(report)
  end

  # GC run by a thread of a non-main Ractor is that thread's gc time, not
  # its running time (the GC hook is per Ractor; each Ractor gets its own).
  # One Ractor lives across two profiles: the hook it got in the first (it
  # cannot be removed from the main Ractor) must serve the second.
  # GC that a non-main Ractor's thread runs is not seen (Ruby 3.3 and 3.4
  # let a GC hook see its own Ractor's GC only, and a hook added in that
  # Ractor would switch off the main Ractor's TracePoints): it counts as the
  # allocator's running time, and the accounting still adds up.
  def test_gc_in_a_non_main_ractor_counts_as_running
    body = <<~'RUBY'
      $allocator ||= Ractor.new do
        loop do
          seconds = Ractor.receive
          started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          kept = nil
          kept = Array.new(1000) { |i| "s#{i}" } while Process.clock_gettime(Process::CLOCK_MONOTONIC) - started < seconds
          Ractor.yield kept.size
        end
      end
      $allocator.send(0.3)
      $allocator.take
    RUBY
    reports = ractor_reports(body, rounds: 2)
    reports.each do |report|
      allocator = report.threads.select { |t| t.ractor != 1 && t.lifetime_ns > 100_000_000 }
      assert_equal 1, allocator.size, report.threads.map(&:to_h).inspect
      t = allocator.first
      assert_equal 0, t.gc_mark_ns + t.gc_sweep_ns, t.to_h.inspect
      assert_operator t.running_ns, :>, t.lifetime_ns * 0.5, t.to_h.inspect
      assert_conservation(report)
      assert_edges_sum(report)
    end
  end

  # A TracePoint enabled before a Ractor starts keeps its line events in
  # every mode: the profiler adds no event hook outside the main Ractor
  # (in Ruby 3.3 and 3.4 one would reset the VM-wide event flags to that
  # Ractor's hooks alone).
  def test_tracepoints_keep_their_line_events_when_a_ractor_starts
    starts = {
      "none" => "",
      "counters" => "Rperf.start(mode: :counters)",
      "wall" => "Rperf.start(mode: :wall)",
      "contention" => "Rperf.contention",
    }
    Dir.mktmpdir do |dir|
      out = File.join(dir, "lines")
      run_child(dir, <<~RUBY)
        File.open(#{out.inspect}, "w") do |f|
          #{starts.to_a.inspect}.each do |name, start|
            eval(start)
            lines = []
            tp = TracePoint.new(:line) { |t| lines << t.lineno if t.path == "traced" }
            tp.enable
            eval(<<~TRACED, binding, "traced", 1)
              Ractor.new { 1 }.take
              a = 1
              b = a + 1
            TRACED
            tp.disable
            Rperf.stop if Rperf.running?
            f.puts [name, *lines].join(" ")
          end
        end
      RUBY
      got = File.readlines(out, chomp: true).to_h { |l| [l.split.first, l.split.drop(1)] }
      assert_equal %w[1 2 3], got["none"]
      starts.each_key { |name| assert_equal got["none"], got[name], "line events under #{name}" }
    end
  end

  # Threads of a program with no Ractor that wait for their first GVL turn
  # at a snapshot belong to the main Ractor: no second Ractor appears.
  def test_threads_waiting_for_their_first_turn_are_the_main_ractors
    Dir.mktmpdir do |dir|
      out = File.join(dir, "rows")
      run_child(dir, <<~RUBY)
        Rperf.contention
        rows = nil
        # Until a snapshot finds a new thread that has not run yet (the
        # threads are made while the main thread keeps the GVL).
        50.times do
          threads = 4.times.map { Thread.new { 300_000.times {} } }
          report = Rperf.snapshot(clear: true)
          fresh = report.threads.select { |t| t.seq != 1 && t.running_ns == 0 && !t.exited }
          rows = [report.ractors.map(&:to_h), report.threads.map(&:ractor), fresh.size]
          threads.each(&:join)
          break if fresh.any?
        end
        final = Rperf.stop
        File.write(#{out.inspect}, Marshal.dump([rows, final.ractors.map(&:to_h), final.threads.map(&:ractor)]))
      RUBY
      (snap_ractors, snap_thread_ractors, fresh), final_ractors, final_thread_ractors = Marshal.load(File.binread(out))
      assert_operator fresh, :>, 0, "no snapshot caught a thread before its first turn"
      assert_equal [1], snap_ractors.map { |r| r[:id] }, snap_ractors.inspect
      assert snap_ractors.first[:identified]
      assert_equal [1], snap_thread_ractors.uniq
      assert_equal [1], final_ractors.map { |r| r[:id] }
      assert_equal [1], final_thread_ractors.uniq
    end
  end

  # Every Ractor is found by its own thread, also those that end before any
  # job could run in them: one Ractor row per Ractor, none holding another's
  # threads, and no interval counted as dropped that was kept.
  def test_many_short_ractors_get_a_row_each
    [10, 200].each do |n|
      report = ractor_reports("#{n}.times.map { Ractor.new { 2000.times { } ; 1 } }.each(&:take)").first
      h = report.to_h
      assert_equal n + 1, report.ractors.size, "#{n} Ractors and the main one"
      assert_equal n + 1, report.threads.size
      report.ractors.each do |r|
        assert_equal 1, r.threads, r.to_h.inspect
        assert_operator r.running_ns, :<=, report.duration_ns, r.to_h.inspect
      end
      unidentified = report.ractors.reject(&:identified)
      # A Ractor can be left unidentified only when no prepared slot was
      # ready at its one GVL turn; its intervals are then the only ones
      # dropped.
      assert_equal 0, unidentified.size, "#{n} Ractors: unidentified #{unidentified.map(&:to_h)}" if n <= 10
      assert_equal 0, h["stats"]["dropped_intervals"] if unidentified.empty?
      assert_conservation(report)
      assert_intervals_disjoint(report)
      assert_match(/\b#{report.ractors.count(&:identified)} Ractors\b/, report.to_summary)
    end
  end

  # A snapshot taken while another Ractor's threads contend splits their
  # open waits over that Ractor's holders (its ring is read under its
  # lock), so the waits end up on threads, not on `unknown` (which once
  # took the open part of every such wait). The report checked is the
  # second of two clearing snapshots: the Ractor's first waits, before it
  # was identified, are `unknown` by design and lie in the first one.
  def test_snapshot_names_holders_of_another_ractor
    Dir.mktmpdir do |dir|
      path = File.join(dir, "snap.json")
      run_child(dir, <<~RUBY)
        session = Rperf.contention
        worker = Ractor.new(0.6, 2, &BURN)
        sleep 0.15
        session.snapshot(clear: true)
        sleep 0.25
        session.snapshot(clear: true).save(#{path.inspect})
        worker.take
        session.stop
      RUBY
      report = Rperf::Report.load(path)
      waiters = report.threads.select { |t| t.ractor != 1 && t.gvl_wait_ns > 20_000_000 }
      assert_operator waiters.size, :>=, 1, report.threads.map(&:to_h).inspect
      waiters.each do |t|
        unknown = report.edges.select { |e| e.waiter == t.seq && e.holder_kind == "unknown" }.sum(&:wait_ns)
        assert_operator unknown, :<, t.gvl_wait_ns * 0.01, "thread #{t.seq}: #{unknown} of #{t.gvl_wait_ns} ns unknown"
      end
      assert_edges_sum(report)
    end
  end

  # A clearing snapshot every millisecond while four Ractors of two threads
  # each contend: in every report each waiter's edges still sum to its
  # wait (a wait spanning a cut, or a thread born during one, once landed
  # in both reports or neither: hundreds of rows off the law per run).
  def test_clearing_snapshot_series_with_ractors_conserves_edges
    Dir.mktmpdir do |dir|
      out = File.join(dir, "rows.json")
      run_child(dir, ractor_clearing_series(out))
      rows = JSON.parse(File.read(out))
      assert_operator rows.size, :>, 100
      off = rows.reject { |_, wait, sum| (sum - wait).abs <= wait * 0.02 + 100_000 }
      assert_empty off.first(5), "#{off.size} of #{rows.size} rows [seq, gvl_wait, edge sum] off the law"
    end
  end

  # Several rounds of Ractors with threads while profiling.
  def test_repeated_ractor_rounds
    reports = ractor_reports("4.times.map { Ractor.new(0.03, 2, &BURN) }.each(&:take)", rounds: 4)
    assert_equal 4, reports.size
    reports.each do |report|
      assert_operator report.ractors.size, :>=, 2, "the main Ractor and the workers"
      assert_conservation(report)
      assert_edges_sum(report)
      assert_intervals_disjoint(report)
      report.ractors.each { |r| assert_operator r.running_ns, :<=, report.duration_ns * 1.01 }
    end
  end
end
