# frozen_string_literal: true

# Hostile bytes through the middlewares: a request path or a job name that
# is not valid UTF-8 still gives one valid JSON line and one valid logfmt
# line per unit, and the profile it was recorded in stays writable (saved,
# loaded, rendered, Marshal-dumped).
require "tmpdir"
require "stringio"
require_relative "contention_helper"
require "rperf/rack"
require "rperf/job_middleware"

class TestLogUtf8 < Test::Unit::TestCase
  include ContentionHelper

  BAD_PATH = "/caf\xE9".b

  def teardown
    Rperf.stop if Rperf.running?
  end

  def rack_env(path)
    { "REQUEST_METHOD" => "GET", "PATH_INFO" => path, "SCRIPT_NAME" => "", "QUERY_STRING" => "" }
  end

  def request_lines(format)
    io = StringIO.new
    mw = Rperf::Rack::Middleware.new(->(_env) { sleep 0.002; [200, {}, []] }, async: false, output: io, format: format)
    status, = mw.call(rack_env(BAD_PATH))
    assert_equal 200, status
    lines = io.string.lines
    assert_equal 1, lines.size, io.string
    lines.first
  end

  def test_a_non_utf8_path_gives_valid_log_lines_and_a_writable_report
    Rperf.start(mode: :wall, defer: true)
    json = request_lines(:json)
    logfmt = request_lines(:logfmt)
    [json, logfmt].each { |line| assert line.force_encoding(Encoding::UTF_8).valid_encoding?, line.inspect }
    assert_equal "GET /caf\uFFFD", JSON.parse(json)["label.endpoint"]
    assert_match(/ label\.endpoint="GET \/caf\uFFFD" .*status=200/, logfmt)

    report = Rperf.stop
    endpoint = report.label_sets.map { |s| s.labels["endpoint"] }.compact
    assert_equal ["GET /caf\uFFFD"], endpoint.uniq
    assert_equal report.to_h, JSON.parse(report.to_json)
    assert_equal report.to_json, Marshal.load(Marshal.dump(report)).to_json
    Dir.mktmpdir do |dir|
      loaded = Rperf::Report.load(report.save(File.join(dir, "r.json.gz")))
      assert_equal report.to_h["label_sets"], loaded.to_h["label_sets"]
    end
    assert_match(/endpoint=GET \/caf\uFFFD/, report.to_summary) if Rperf::HAVE_ANALYSIS
  end

  def test_non_utf8_job_names_and_fields_are_scrubbed
    io = StringIO.new
    jobs = Rperf::JobMiddleware.new(async: false, output: io, format: :json,
                                    counters: -> { { running_ns: 0, gvl_wait_ns: 0, blocked_ns: 0,
                                                     gc_mark_ns: 0, gc_sweep_ns: 0 } })
    jobs.call(Object.new, { "class" => "R\xE9sum\xE9Job".b, "jid" => "id\xFF".b }, "q\xE9".b) { :done }
    line = JSON.parse(io.string)
    assert_equal "R\uFFFDsum\uFFFDJob", line["label.job"]
    assert_equal "q\uFFFD", line["label.queue"]
    assert_equal "id\uFFFD", line["job_id"]
  end
end
