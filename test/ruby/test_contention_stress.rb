# frozen_string_literal: true

# Lifecycle stress: many start/stop cycles, thread churn beyond and within
# the slot pool, fork while profiling (Ractor rounds are in
# test_contention_ractors.rb). Each must leave a consistent report and no
# crash or hang.
require_relative "contention_helper"

class TestContentionStress < Test::Unit::TestCase
  include ContentionHelper

  def teardown
    Rperf.stop if Rperf.running?
  end

  def test_thousand_start_stop_cycles
    helper = Thread.new { loop { sleep 0.0005 } }
    1000.times do |i|
      Rperf.start(mode: :wall, frequency: 1000, timeline: i.even?)
      result = Rperf.stop
      assert_kind_of Rperf::Report, result
    end
    refute Rperf.running?
    report = Rperf.contention { sleep 0.01 }
    assert_conservation(report)
  ensure
    helper&.kill&.join
  end

  def test_five_hundred_thread_churn
    report = Rperf.contention do
      50.times do
        10.times.map { |i| Thread.new { i.even? ? sleep(0.0005) : burn_work(0.0005) } }.each(&:join)
      end
    end
    assert_operator report.threads.size, :>=, 501
    assert_equal 500, report.threads.count(&:exited)
    assert_equal 0, report.stats["dropped_threads"]
    assert_conservation(report)
    assert_edges_sum(report)
    assert_intervals_disjoint(report)
  end

  def test_churn_beyond_the_pool
    report = Rperf.contention(max_threads: 64) do
      20.times { 10.times.map { Thread.new { sleep 0.0002 } }.each(&:join) }
    end
    assert_equal 64, report.threads.size
    assert_operator report.stats["dropped_threads"], :>=, 200 - 64
    assert_conservation(report)
  end

  def test_fork_while_profiling
    Rperf.start(mode: :wall)
    busy = cpu_threads(2, 0.1)
    read, write = IO.pipe
    pid = fork do
      read.close
      # The profile follows the fork: the child's own, of its own threads.
      ok = Rperf.running?
      inherited = Rperf.stop
      ok &&= inherited.to_h["meta"]["pid"] == Process.pid && inherited.threads.size == 1
      # The child can profile on its own.
      report = Rperf.contention { Thread.new { sleep 0.01 }.join }
      ok &&= report.threads.size >= 2
      ok &&= Rperf.stop.nil?
      write.write(ok ? "ok" : "bad")
      write.close
      exit!(ok ? 0 : 1)
    end
    write.close
    _, status = Process.wait2(pid)
    assert_equal "ok", read.read
    assert status.success?
    busy.each(&:join)
    report = Rperf.stop
    assert_conservation(report)
    assert_edges_sum(report)
  ensure
    read&.close
  end
end
