# frozen_string_literal: true

# Labels split each thread's totals exactly.
require "tmpdir"
require "stringio"
require "rperf/rack"
require "rperf/contention_log"
require_relative "contention_helper"

class TestContentionLabels < Test::Unit::TestCase
  include ContentionHelper

  def teardown
    Rperf.stop if Rperf.running?
  end

  STATES = %w[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze

  def test_label_rows_sum_to_thread_totals
    report = Rperf.contention do
      threads = 3.times.map do |i|
        Thread.new do
          Rperf.label(phase: "cpu") { burn_work(0.05) }
          Rperf.label(phase: "sleep", worker: i.to_s) { sleep 0.03 }
          burn_work(0.01)
        end
      end
      threads.each(&:join)
    end
    rows = report.label_totals.group_by(&:thread)
    assert_operator report.threads.size, :>=, 4, "three workers and the caller"
    report.threads.each do |t|
      STATES.each do |k|
        sum = rows.fetch(t.seq, []).sum { |r| r.public_send(k) }
        assert_in_delta t.public_send(k), sum, 1_000, "thread #{t.seq} #{k}"
      end
    end
    sets = report.label_sets.to_h { |s| [s.id, s.labels] }
    cpu = report.labels.find { |l| l.labels == { "phase" => "cpu" } }
    assert cpu, report.labels.inspect
    # 3 × ~0.05 s of work under phase=cpu (half of it asserted: the work is
    # calibrated in iterations; running is wall time holding the GVL).
    assert_operator cpu.running_ns, :>=, 3 * 0.05e9 * 0.5
    sleeps = report.labels.select { |l| l.labels["phase"] == "sleep" }
    assert_equal 3, sleeps.size
    sleeps.each do |l|
      assert_operator l.blocked_ns, :>=, 0.025e9
      assert_operator l.running_ns, :<, cpu.running_ns
    end
    assert_equal({}, sets[0])
  end

  def test_edges_carry_label_sets
    report = Rperf.contention do
      a = Thread.new { Thread.current.name = "a"; Rperf.label(role: "a") { burn_work(0.3) } }
      b = Thread.new { Thread.current.name = "b"; Rperf.label(role: "b") { burn_work(0.3) } }
      [a, b].each(&:join)
    end
    ids = report.label_sets.to_h { |s| [s.labels["role"], s.id] }
    workers = [report.thread("a").seq, report.thread("b").seq]
    labelled = report.edges.select do |e|
      e.holder_kind == "thread" && workers.include?(e.waiter) && e.waiter_label_set != 0
    end
    # Once both carry their label, each waits on the other's label.
    assert_operator labelled.sum(&:wait_ns), :>, 50_000_000, report.edges.map(&:to_h).inspect
    labelled.each { |e| assert_includes [ids["a"], ids["b"]], e.waiter_label_set }
    on_workers = labelled.select { |e| workers.include?(e.holder) }
    on_other_label = on_workers.select do |e|
      [ids["a"], ids["b"]].include?(e.holder_label_set) && e.holder_label_set != e.waiter_label_set
    end
    # Outside their label blocks the holders run for microseconds only.
    assert_operator on_other_label.sum(&:wait_ns), :>, on_workers.sum(&:wait_ns) * 0.9
  end

  # A NUL byte: refused in a key (a report's label set is a JSON object,
  # and no reader takes a NUL in an object key), carried in a value and
  # shown as \x00 by the views, so "a\0b", "a\0c" and "a" stay three label
  # sets everywhere (they once all printed, and filtered, as k=a).
  def test_nul_in_labels
    report = Rperf.contention do
      ["a\0b", "a\0c", "a"].each { |v| Rperf.label(k: v) { burn_work(0.01) } }
      assert_raise_with_message(ArgumentError, /label key :"x\\x00y" is invalid; it contains a NUL byte/) do
        Rperf.label("x\0y": "1") { flunk "the block must not run" }
      end
      assert_raise(ArgumentError) { Rperf.label(:"k\0" => "v") }
      assert_equal({}, Rperf.labels)
    end
    values = report.label_sets.map { |s| s.labels["k"] }.compact
    assert_equal ["a\0b", "a\0c", "a"].sort, values.sort
    Dir.mktmpdir do |dir|
      path = File.join(dir, "nul.json")
      report.save(path)
      loaded = Rperf::Report.load(path)
      # The rows of the "Label sets" table (other tables name label sets too).
      rows = ->(summary) { summary[/^Label sets\n.*?(?=\n\n)/m].lines.grep(/^\s+k=/).map { |l| l.split.first } }
      [report, loaded].each do |r|
        assert_equal %w[k=a k=a\x00b k=a\x00c], rows.call(r.to_summary).sort
        assert_equal 1, rows.call(r.to_summary(labels: { k: "a" })).size
        assert_equal ["k=a\\x00b"], rows.call(r.to_summary(labels: { k: "a\0b" }))
      end
    end
  end

  # A request path becomes a label through the Rack middleware; in a wait
  # graph by label it is a node's label. Written as DOT and read back by
  # Graphviz, it stays text: no node, attribute or link of its own.
  def test_a_request_path_stays_text_in_dot
    mw = Rperf::Rack::Middleware.new(lambda { |_env|
      burn_work(0.02)
      [200, {}, ["ok"]]
    }, log: Rperf::ContentionLog.new(async: false, output: StringIO.new))
    path = "/x\\\"];I[URL=<javascript:alert(1)>];z[\n#"
    env = { "REQUEST_METHOD" => "GET", "SCRIPT_NAME" => "", "PATH_INFO" => path }
    report = Rperf.contention do
      3.times.map { Thread.new { mw.call(env.dup) } }.each(&:join)
    end
    assert report.label_sets.any? { |s| s.labels["endpoint"]&.include?("javascript") }, report.label_sets.inspect
    dot = report.to_dot(by: "label", min_share: 0)
    svg = IO.popen(%w[dot -Tsvg], "r+") do |io|
      io.write(dot)
      io.close_write
      io.read
    end
    assert_predicate $?, :success?, dot
    refute_match(/<a |href=/, svg)
    assert_include svg, "javascript:alert(1)"
  end

  def test_label_api
    assert_equal({}, Rperf.labels)
    Rperf.start(mode: :wall)
    Rperf.label(a: 1) do
      assert_equal({ a: "1" }, Rperf.labels)
      Rperf.label(b: "x") { assert_equal({ a: "1", b: "x" }, Rperf.labels) }
      Rperf.label(a: nil) { assert_equal({}, Rperf.labels) }
    end
    assert_equal({}, Rperf.labels)
  ensure
    Rperf.stop
  end
end
