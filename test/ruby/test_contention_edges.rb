# frozen_string_literal: true

# Who waits on whom: edges name the holder that kept the GVL.
require_relative "contention_helper"

class TestContentionEdges < Test::Unit::TestCase
  include ContentionHelper

  def teardown
    Rperf.stop if Rperf.running?
  end

  # A hog in a long C call that never releases the GVL (sorting a large
  # array) while short sleepers keep wanting it back: most of their wait
  # is charged to the hog.
  def test_edges_point_at_the_gvl_hog
    data = Array.new(1_500_000) { rand }
    report = Rperf.contention do
      sleepers = 3.times.map do |i|
        Thread.new { Thread.current.name = "sleeper#{i}"; 40.times { sleep 0.002 } }
      end
      sleep 0.01
      hog = Thread.new { Thread.current.name = "hog"; 3.times { data.sort } }
      (sleepers + [hog]).each(&:join)
    end
    hog = report.thread("hog")
    assert_operator by_name(report, "sleeper").size, :>=, 2
    by_name(report, "sleeper").each do |s|
      mine = report.edges.select { |e| e.waiter == s.seq }
      on_hog = mine.select { |e| e.holder_kind == "thread" && e.holder == hog.seq }.sum(&:wait_ns)
      assert_operator s.gvl_wait_ns, :>, 20_000_000, "#{s.name} should wait for the hog: #{s.to_h}"
      assert_operator on_hog, :>, s.gvl_wait_ns * 0.6, "#{s.name}: #{on_hog} of #{s.gvl_wait_ns} ns on the hog; #{mine.map(&:to_h)}"
    end
    assert_edges_sum(report)
  end

  # CPU threads wait on each other, never on themselves; hand-off shows up
  # as its own holder; every edge stays in its Ractor.
  def test_cpu_threads_wait_on_each_other
    report = Rperf.contention { cpu_threads(3, 0.2).each(&:join) }
    seqs = by_name(report, "cpu").map(&:seq)
    assert_equal 3, seqs.size
    refute_empty report.edges, "three CPU threads wait on each other"
    report.edges.each do |e|
      refute_equal e.waiter, e.holder, "self edge #{e.to_h}" if e.holder_kind == "thread"
      assert_includes %w[thread gc handoff unknown], e.holder_kind
      assert_equal 1, e.ractor
      assert_operator e.count, :>=, 1
    end
    seqs.each do |seq|
      on_cpu = report.edges.select { |e| e.waiter == seq && e.holder_kind == "thread" && seqs.include?(e.holder) }
      thread = report.threads.find { |t| t.seq == seq }
      assert_operator on_cpu.sum(&:wait_ns), :>, thread.gvl_wait_ns * 0.8
    end
    assert_edges_sum(report)
    # Blame (holder samples × waiters at that moment, from the sampler):
    # the CPU threads made the others wait, so they carry the blame.
    blame = report.to_h["blame"]
    if Rperf::HAVE_SAMPLER
      total = blame.sum { |b| b[3] }
      assert_operator total, :>, 0, "blame is recorded when threads wait"
      assert_operator blame.select { |b| seqs.include?(b[1]) }.sum { |b| b[3] }, :>, total * 0.8
    end
  end

  def test_gc_is_its_own_holder
    report = Rperf.contention do
      done = false
      gc = Thread.new do
        Thread.current.name = "gc"
        keep = Array.new(300_000) { |i| "s#{i}" } # makes each full GC take milliseconds
        GC.start until done
        keep.size
      end
      waiter = Thread.new { Thread.current.name = "waiter"; 200.times { sleep 0.0005 } }
      waiter.join
      done = true
      gc.join
    end
    gc_wait = report.edges.select { |e| e.holder_kind == "gc" }.sum(&:wait_ns)
    assert_operator gc_wait, :>, 0, report.edges.map(&:to_h).inspect
    assert_edges_sum(report)
  end

  def test_edge_table_overflow_keeps_sums
    report = Rperf.contention(max_edges: 1) { cpu_threads(3, 0.15).each(&:join) }
    assert_operator report.stats["dropped_edges"], :>, 0
    assert_edges_sum(report)
  end
end
