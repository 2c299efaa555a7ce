# frozen_string_literal: true

# Blocked causes and release edges (report minor 1) as Ruby sees them, on the
# hand-written report test/fixtures/causes_report.json (known numbers, the
# conservation laws hold): the rows Report gains, the views' options
# (to_dot(edges:)), and the log's blocked_<cause>_ms keys in interval lines
# and in unit lines (logfmt and JSON, through the Rack and job middlewares),
# with reports and counters that have no causes logging as before.
require "test/unit"
require "json"
require "stringio"
require "rperf"
require "rperf/contention_log"
require "rperf/rack"
require "rperf/job_middleware"

class TestReportCauses < Test::Unit::TestCase
  FIXTURE = File.expand_path("../fixtures/causes_report.json", __dir__)
  MS = 1_000_000

  def report = @report ||= Rperf::Report.load(FIXTURE)

  # The fixture without any minor-1 key: what an older writer produced.
  def minor0_report
    doc = JSON.parse(File.read(FIXTURE))
    %w[causes interval_causes blocked_edges blocked_methods].each { |k| doc.delete(k) }
    doc["minor"] = 0
    (doc["threads"] + doc["label_totals"]).each do |row|
      row.delete("blocked_by_cause")
      row.delete("release_unknown_ns")
    end
    Rperf::Report.from_json(JSON.generate(doc))
  end

  def test_thread_and_label_rows_carry_blocked_by_cause
    waiter = report.thread("waiter")
    assert_equal({ "mutex" => 200 * MS, "queue" => 300 * MS }, waiter.blocked_by_cause)
    assert_equal 300 * MS, waiter.release_unknown_ns
    report.threads.each { |t| assert_equal t.blocked_ns, t.blocked_by_cause.values.sum, t.name }
    import = report.labels.find { |l| l.labels == { "job" => "Import" } }
    assert_equal({ "mutex" => 200 * MS, "queue" => 300 * MS }, import.blocked_by_cause)
    unlabelled = report.labels.find { |l| l.labels.empty? }
    assert_equal unlabelled.blocked_ns, unlabelled.blocked_by_cause.values.sum
    assert_equal({ "join" => 800 * MS }, report.label_totals.first.blocked_by_cause)
  end

  def test_release_edges_and_blocked_methods_are_frozen_data
    doc = report.to_h
    { blocked_edges: Rperf::Report::BlockedEdgeRow, blocked_methods: Rperf::Report::BlockedMethodRow }
      .each do |table, klass|
      rows = report.public_send(table)
      assert_equal doc[table.to_s].size, rows.size
      rows.zip(doc[table.to_s]).each do |row, hash|
        assert_instance_of klass, row
        assert row.frozen?
        assert_equal klass.members.to_h { |m| [m, hash[m.name]] }, row.to_h
      end
    end
    mutex = report.blocked_edges.find { |e| e.cause == "mutex" }
    assert_equal [3, 2, 200 * MS, 0], [mutex.waiter, mutex.releaser, mutex.blocked_ns, mutex.releaser_stack]
    assert_nil report.blocked_edges.find { |e| e.cause == "join" }.releaser_stack
    assert_equal "PG::Connection#exec", report.blocked_methods.find { |m| m.cause == "other" }.method
  end

  def test_minor0_rows_have_no_causes
    old = minor0_report
    assert_nil old.threads.first.blocked_by_cause
    assert_nil old.labels.first.blocked_by_cause
    assert_empty old.blocked_edges
    assert_empty old.blocked_methods
    refute_match(/Blocked by cause|releasers/, old.to_summary)
  end

  def test_views_take_edges_and_show_causes
    all = report.to_dot(edges: :all, min_share: 0)
    assert_match(/t1 -> t2\s+\[key=6,\s+blocked_ns=800000000,\s+cause=join/, all)
    assert_equal 2, all.scan("style=dashed]").size
    refute_match(/cause=/, report.to_dot)
    assert_equal report.to_dot, report.to_dot(edges: "gvl")
    assert_match(/join 800ms/, report.to_svg(edges: :blocked))
    error = assert_raise(ArgumentError) { report.to_dot(edges: :holders) }
    assert_match(/edges: :holders is invalid; expected one of gvl, blocked, all/, error.message)
    assert_match(/^Top releasers \(who woke blocked threads\)$/, report.to_summary)
    assert_match(/^waiter #3 +\|#+m+#+q+W+#+\|$/, report.to_timeline(width: 50, ascii: true))
    events = JSON.parse(report.to_perfetto)["traceEvents"]
    join = events.find { |e| e["name"] == "blocked: join" }
    assert_equal({ "cause" => "join", "releaser" => "holder #2", "releaser_seq" => 2 }, join["args"])
  end

  def log_lines(format, units: :ms, &block)
    io = StringIO.new
    log = Rperf::ContentionLog.new(async: false, output: io, format: format, units: units, label: false, profile: false,
                                   counters: block)
    [log, io]
  end

  def test_interval_lines_split_blocked_by_cause
    log, io = log_lines(:logfmt)
    log.log_report(report)
    import = io.string.lines.grep(/label\.job=Import/).first
    assert_match(/ blocked_ms=500 blocked_mutex_ms=200 blocked_queue_ms=300 gc_ms=0 /, import)
    unlabelled = io.string.lines.grep_v(/label\.job/).first
    assert_match(/ blocked_ms=2000 blocked_io_ms=300 blocked_sleep_ms=500 blocked_join_ms=800 blocked_other_ms=400 /,
                 unlabelled)
    log, io = log_lines(:json, units: :ns)
    log.log_report(report)
    line = JSON.parse(io.string.lines.grep(/Import/).first)
    assert_equal [200 * MS, 300 * MS], line.values_at("blocked_mutex_ns", "blocked_queue_ns")
    refute line.key?("blocked_io_ns"), "only the scope's nonzero causes"
    log, io = log_lines(:logfmt)
    log.log_report(minor0_report)
    refute_match(/blocked_\w+_ms/, io.string)
  end

  # Counters as Rperf.thread_contention gives them: cumulative, blocked_by_cause Symbol => ns.
  def counter_reads(*causes)
    reads = causes.map do |by_cause|
      blocked = by_cause ? by_cause.values.sum : 0
      { running_ns: 0, gvl_wait_ns: 0, blocked_ns: blocked, gc_mark_ns: 0, gc_sweep_ns: 0,
        blocked_by_cause: by_cause }.compact
    end
    -> { reads.shift }
  end

  def test_unit_lines_in_both_formats_and_through_the_middlewares
    counters = counter_reads({ io: 1 * MS, mutex: 2 * MS }, { io: 1 * MS, mutex: 7 * MS, sleep: 3 * MS })
    log, io = log_lines(:logfmt, &counters)
    log.measure(kind: "block") { nil }
    assert_match(/ blocked_ms=8 blocked_sleep_ms=3 blocked_mutex_ms=5 gc_ms=0 /, io.string)
    refute_match(/blocked_io_ms/, io.string)

    counters = counter_reads({ "mutex" => 0 }, { "mutex" => 2_500_000, "fiber_wait" => 500_000 })
    log, io = log_lines(:json, &counters)
    app = ->(_env) { [200, {}, ["ok"]] }
    Rperf::Rack::Middleware.new(app, log: log).call({ "REQUEST_METHOD" => "GET", "PATH_INFO" => "/a" })
    line = JSON.parse(io.string)
    assert_equal [3.0, 2.5, 0.5], line.values_at("blocked_ms", "blocked_mutex_ms", "blocked_other_ms")
    assert_equal line.keys.index("blocked_ms") + 1, line.keys.index("blocked_mutex_ms")

    counters = counter_reads({ queue: 0 }, { queue: 4 * MS })
    log, io = log_lines(:logfmt, units: :ns, &counters)
    Rperf::JobMiddleware.new(log: log).call(Object.new, { "class" => "Import" }, "default") { nil }
    assert_match(/ blocked_ns=4000000 blocked_queue_ns=4000000 gc_mark_ns=0 /, io.string)

    # Counters without causes (an older extension): the line of before.
    log, io = log_lines(:logfmt, &counter_reads(nil, nil))
    log.measure { nil }
    assert_match(/ blocked_ms=0 gc_ms=0 /, io.string)
  end

  def test_unit_line_matches_the_generic_fields
    counters = counter_reads({ condvar: 0, join: 1 * MS }, { condvar: 6 * MS, join: 1 * MS })
    log, = log_lines(:logfmt, &counters)
    unit = log.start_unit(kind: "block")
    log.finish_unit(unit)
    fields = log.send(:unit_fields, unit)
    assert_equal 6.0, fields[:blocked_condvar_ms]
    assert_equal log.send(:format_line, fields), log.send(:unit_line, unit)
  end
end
