# frozen_string_literal: true

# Interval lines: Rperf::ContentionLog#start_interval writes one line per
# label set per Rperf.snapshot(clear: true) interval. Summed over the
# series, each label's state totals equal the exact whole-run totals of the
# thread that carried it (Rperf.thread_contention read just inside and just
# outside the label bracket them), within 2%; folding label sets beyond max_interval_lines keeps the sums.
require "test/unit"
require "json"
require "rperf"
require "rperf/contention_log"

class TestLogInterval < Test::Unit::TestCase
  STATES = %w[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze

  def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)

  # CPU, pipe IO, sleep and garbage: every state shows up.
  def work(i)
    r, w = IO.pipe
    16.times do
      fib(22 + (i % 2))
      w.write("x")
      r.read(1)
      sleep 0.01
      Array.new(2000) { |k| "s#{k}" }
    end
  ensure
    r&.close
    w&.close
  end

  def diff(before, after)
    STATES.to_h { |k| [k, after[k.to_sym] - before[k.to_sym]] }
  end

  def run_series
    lines = []
    reports = []
    log = Rperf::ContentionLog.new(async: false, format: :json, units: :ns) { |l| lines << JSON.parse(l) }
    whole = {}
    Rperf.start(mode: :wall, frequency: 100) # not deferred: the whole run is recorded
    begin
      log.start_interval(every: 0.05, snapshot: -> { Rperf.snapshot(clear: true).tap { |r| reports << r } })
      workers = 4.times.map do |i|
        Thread.new do
          # Reads just outside and just inside the label bracket its totals:
          # a GVL hand-off between two reads widens the bracket, no more.
          outer_before = Rperf.thread_contention
          inner = nil
          Rperf.label(worker: "w#{i}") do
            before = Rperf.thread_contention
            work(i)
            inner = diff(before, Rperf.thread_contention)
          end
          whole["w#{i}"] = [inner, diff(outer_before, Rperf.thread_contention)]
        end
      end
      workers.each(&:join)
      log.stop_interval # writes the tail since the last tick
    ensure
      Rperf.stop if Rperf.running?
    end
    [lines, reports, whole]
  end

  def test_interval_series_sums_equal_the_whole_run
    lines, reports, whole = run_series
    assert_operator(reports.size, :>=, 3, "a series of several intervals")
    seqs = lines.map { |l| l["seq"] }
    assert_equal(seqs.sort, seqs)
    assert_equal(lines.size, lines.uniq { |l| [l["seq"], l.select { |k, _| k.start_with?("label.") }] }.size,
                 "one line per label set per interval")

    assert_equal(%w[w0 w1 w2 w3], whole.keys.sort, "every worker measured its own totals")
    whole.each do |worker, (inner, outer)|
      rows = lines.select { |l| l["label.worker"] == worker }
      assert_operator(rows.size, :>=, 2, "#{worker} spans several intervals")
      slack = 0.02 * inner.values.sum + 1_000_000
      STATES.each do |k|
        logged = rows.sum { |l| l[k] }
        assert_operator(logged, :>=, inner[k] - slack, "#{worker} #{k}: #{logged} below the reads inside the label")
        assert_operator(logged, :<=, outer[k] + slack, "#{worker} #{k}: #{logged} above the reads around the label")
      end
      total = rows.sum { |l| l["total_ns"] }
      assert_operator(total, :>=, inner.values.sum - slack)
      assert_operator(total, :<=, outer.values.sum + slack)
      rows.each { |l| assert_equal(1, l["threads"]) }
    end
    # the workers slept and read pipes, and fought for the GVL while computing
    assert_operator(whole.values.sum { |inner, _| inner["blocked_ns"] }, :>, 0)
  end

  # Overlapping units on threads of one Ractor, with a profiler started as
  # docs/logging.md tells servers to (mode: :counters, defer: true): each
  # unit counts only its own thread, so the units' running times add up to
  # no more than the elapsed time (one GVL: one thread runs at a time),
  # while their wall times overlap.
  def test_overlapping_units_are_not_double_counted
    lines = []
    log = Rperf::ContentionLog.new(async: false, format: :json, units: :ns) { |l| lines << JSON.parse(l) }
    Rperf.start(mode: :counters, defer: true)
    begin
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
      # short sleeps hand the GVL over, as a request's IO does, so the units interleave
      work = -> { 4.times { fib(24) && sleep(0.002) } }
      6.times.map { |i| Thread.new { log.measure(endpoint: "e#{i % 2}", &work) } }.each(&:join)
      elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
    ensure
      Rperf.stop if Rperf.running?
    end
    assert_equal(6, lines.size)
    lines.each do |l|
      states = STATES.sum { |k| l[k] }
      assert_in_delta(l["wall_ns"], states, 0.02 * l["wall_ns"] + 200_000, l.inspect)
    end
    running = lines.sum { |l| l["running_ns"] }
    assert_operator(running, :<=, elapsed * 1.02 + 1_000_000, "one GVL: the units cannot run more than the elapsed time")
    assert_operator(lines.sum { |l| l["wall_ns"] }, :>, 2 * elapsed, "the units overlapped")
    assert_operator(lines.sum { |l| l["gvl_wait_ns"] }, :>, running, "and so mostly waited for each other")
  end

  def test_folding_label_sets_keeps_the_interval_sums
    _lines, reports, = run_series
    assert_operator(reports.size, :>=, 3, "a series of several intervals")
    wide = Rperf::ContentionLog.new(async: false, output: File.open(File::NULL, "w"), units: :ns)
    narrow = Rperf::ContentionLog.new(async: false, output: File.open(File::NULL, "w"), units: :ns, max_interval_lines: 2)
    reports.each do |report|
      all = wide.interval_fields(report)
      few = narrow.interval_fields(report)
      assert_operator(few.size, :<=, 3)
      STATES.each { |k| assert_equal(all.sum { |f| f[k.to_sym] }, few.sum { |f| f[k.to_sym] }, k) }
      next unless all.size > 2

      other = few.last
      assert_equal("true", other[:"label.other"])
      assert_equal(all.size - 2, other[:label_sets])
    end
  end
end
