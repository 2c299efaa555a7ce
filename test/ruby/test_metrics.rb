# frozen_string_literal: true

# Contention metrics (Rperf::Metrics, Rperf::Rack::Metrics, rperf-gvl
# metrics) with the profiler recording for real. What is checked holds
# whatever the scheduler does: the exposition's counters are the request
# lines' fields added up exactly (the whole request: before_*, main and
# after_* windows), its histograms hold one count per line in the bucket
# the line's numbers select, promtool reads the text, hostile label values
# come back unchanged, the CLI prints the same bytes, a forked child's
# units join the parent's when it has exited, and nothing raises into the
# program when the directory is unusable.
require "json"
require "stringio"
require "tmpdir"
require "open3"
require "rperf/rack"
require "rperf/job_middleware"
require_relative "contention_helper"

class TestMetrics < Test::Unit::TestCase
  include ContentionHelper

  STATES = %w[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze
  FORMAT = Rperf::METRICS_FORMAT
  CLI = $LOAD_PATH.map { |d| File.expand_path("../bin/rperf-gvl", d) }.find { |f| File.executable?(f) }

  def setup
    @dir = Dir.mktmpdir("rperf-metrics")
    @metrics = File.join(@dir, "metrics")
    Rperf.start(mode: :counters)
  end

  def teardown
    Rperf::Metrics.close(@metrics)
    Rperf.stop if Rperf.running?
    FileUtils.rm_rf(@dir)
  end

  # [[name, {label => value}, value String], ...] of a text exposition,
  # label values unescaped.
  def samples(text)
    text.lines.reject { |l| l.start_with?("#") }.map do |line|
      m = line.match(/\A([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)\n\z/)
      assert m, "a sample line: #{line.inspect}"
      labels = {}
      m[2]&.scan(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/) do |k, v|
        labels[k] = v.gsub(/\\(.)/) { ::Regexp.last_match(1) == "n" ? "\n" : ::Regexp.last_match(1) }
      end
      [m[1], labels, m[3]]
    end
  end

  def value(all, name, labels)
    found = all.select { |n, l, _| n == name && l == labels }
    assert_equal 1, found.size, "one #{name}#{labels}: #{found}"
    found[0][2]
  end

  def ns(text) = (Rational(text) * 1_000_000_000).to_i

  def env(path, hooks = nil)
    e = { "REQUEST_METHOD" => "GET", "PATH_INFO" => path, "SCRIPT_NAME" => "" }
    e["rack.after_reply"] = hooks if hooks
    e
  end

  # Requests served as Puma serves them: a thread woken by the request's
  # bytes (a pipe), the app, the response written, then the after-reply
  # hooks; a CPU hog holds the GVL meanwhile.
  def serve_requests(mw, paths)
    r, w = IO.pipe
    server = Thread.new do
      paths.each do |path|
        r.read(1)
        hooks = []
        mw.call(env(path, hooks))
        sleep 0.0003 # the response's write blocks, then waits for the GVL again
        burn_work(0.0002)
        hooks.each(&:call)
      end
    end
    stop = false
    hog = Thread.new do
      until stop
        burn_work(0.001)
        Thread.pass
      end
    end
    paths.size.times do
      sleep 0.005
      w.write("x")
    end
    server.join
    stop = true
    hog.join
  end

  def whole(line, key) = line["before_#{key}"].to_i + line[key] + line["after_#{key}"].to_i

  def test_counters_and_histograms_are_the_lines_added_up
    io = StringIO.new
    log = Rperf::ContentionLog.new(output: io, format: :json, units: :ns, async: false, metrics: @metrics)
    app = lambda do |e|
      e["PATH_INFO"] == "/io" ? sleep(0.002) : burn_work(0.001)
      [200, {}, ["ok"]]
    end
    mw = Rperf::Rack::Middleware.new(app, log: log)
    serve_requests(mw, %w[/cpu /io] * 12)
    assert Rperf::Metrics.flush(@metrics)
    all = samples(Rperf::Metrics.text(@metrics))
    lines = io.string.lines.map { |l| JSON.parse(l) }
    assert_equal 24, lines.size
    lines.group_by { |l| l["label.endpoint"] }.each do |endpoint, ls|
      labels = { "kind" => "request", "endpoint" => endpoint }
      assert ls.all? { |l| l.key?("after_wall_ns") && l.key?("before_wall_ns") }, "whole requests: #{ls}"
      assert_operator ls.sum { |l| l["after_gvl_wait_ns"] }, :>, 0, "waits in the after window: #{ls}"
      assert_equal ls.sum { |l| whole(l, "wall_ns") }, ns(value(all, "rperf_wall_seconds_total", labels))
      %w[running gvl_wait].each do |state|
        assert_equal ls.sum { |l| whole(l, "#{state}_ns") }, ns(value(all, "rperf_#{state}_seconds_total", labels)),
                     state
      end
      gc = ls.sum { |l| %w[gc_mark_ns gc_sweep_ns].sum { |k| whole(l, k) } }
      assert_equal gc, ns(value(all, "rperf_gc_seconds_total", labels))
      blocked = all.select { |n, l, _| n == "rperf_blocked_seconds_total" && l.reject { |k, _| k == "cause" } == labels }
      assert_equal ls.sum { |l| whole(l, "blocked_ns") }, blocked.sum { |_, _, v| ns(v) }
      # The lines name the causes of the app window; the series add the
      # response's write (its sleep here) to them.
      by_cause = blocked.to_h { |_, l, v| [l["cause"], ns(v)] }
      FORMAT[:causes].each do |cause|
        next if cause == :unknown

        assert_operator by_cause.fetch(cause.to_s, 0), :>=, ls.sum { |l| l["blocked_#{cause}_ns"].to_i }, cause
      end
      assert_operator by_cause.fetch("sleep", 0), :>, ls.sum { |l| l["blocked_sleep_ns"].to_i }, "the write's sleep"

      # One count per line, in the bucket its whole GVL wait selects.
      waits = ls.map { |l| whole(l, "gvl_wait_ns") }
      shares = ls.map { |l| [whole(l, "gvl_wait_ns"), STATES.sum { |k| whole(l, k) }] }
      assert_equal ls.size, Integer(value(all, "rperf_unit_gvl_wait_seconds_count", labels))
      assert_equal waits.sum, ns(value(all, "rperf_unit_gvl_wait_seconds_sum", labels))
      FORMAT[:wait_bounds_ns].each do |bound|
        le = (Rational(bound, 1_000_000_000)).to_f.to_s.sub(/\.0\z/, "")
        assert_equal waits.count { |w| w <= bound },
                     Integer(value(all, "rperf_unit_gvl_wait_seconds_bucket", labels.merge("le" => le))), "le #{le}"
      end
      assert_equal ls.size, Integer(value(all, "rperf_unit_gvl_wait_seconds_bucket", labels.merge("le" => "+Inf")))
      FORMAT[:ratio_bounds_permille].each do |bound|
        le = (bound / 1000.0).to_s
        assert_equal shares.count { |w, t| w * 1000 <= bound * t },
                     Integer(value(all, "rperf_unit_gvl_wait_ratio_bucket", labels.merge("le" => le))), "le #{le}"
      end
      ppm = shares.sum { |w, t| t.zero? ? 0 : w * 1_000_000 / t }
      assert_equal Rational(ppm, 1_000_000), Rational(value(all, "rperf_unit_gvl_wait_ratio_sum", labels))
    end
    # The process's own totals hold at least its requests' numbers.
    assert_operator ns(value(all, "rperf_process_gvl_wait_seconds_total", {})), :>=,
                    lines.sum { |l| whole(l, "gvl_wait_ns") }
    assert_operator Integer(value(all, "rperf_threads", {})), :>=, 2, "main and the metrics writer"
    assert_equal "1", value(all, "rperf_metrics_files", { "state" => "live" })
  end

  def hostile_app_text(openmetrics: false)
    io = StringIO.new
    labeller = lambda do |e|
      { endpoint: e["PATH_INFO"], "we\"ird-key\\": "x\ny", le: "1", "9to5": "\\", __name__: "z\u0000" }
    end
    mw = Rperf::Rack::Middleware.new(->(_e) { [200, {}, ["ok"]] }, output: io, format: :json, async: false,
                                                                    labeller: labeller, metrics_dir: @metrics)
    paths = ["/a\"b\\c\nd", "/caf\xE9".b, "/x\"}\\n y=\"1", "/\u202e"]
    paths.each { |p| mw.call(env(p)) }
    mw.log.metrics.flush
    [io.string.lines.map { |l| JSON.parse(l) }, Rperf::Metrics.text(@metrics, openmetrics: openmetrics)]
  end

  # Label values come from request paths: every byte is escaped so that
  # the series reads back as it was logged, and Prometheus' own checker
  # takes the text.
  def test_hostile_label_values_read_back_and_promtool_takes_the_text
    lines, text = hostile_app_text
    all = samples(text)
    counts = all.select { |n, _, _| n == "rperf_unit_gvl_wait_seconds_count" }
    assert_equal lines.size, counts.size, text
    lines.each do |line|
      series = counts.find { |_, l, _| l["endpoint"] == line["label.endpoint"] }
      assert series, "the series of #{line['label.endpoint'].inspect} in\n#{text}"
      l = series[1]
      assert_equal "x\ny", l["we_ird_key_"]
      assert_equal "1", l["label_le"]
      assert_equal "\\", l["_9to5"]
      assert_equal "z\uFFFD", l["label___name__"]
    end
    omit("promtool not installed (Debian package prometheus)") unless system("command -v promtool >/dev/null")
    out, status = Open3.capture2e("promtool", "check", "metrics", stdin_data: text)
    assert status.success?, "promtool: #{out}\n#{text}"
  end

  def test_rack_endpoint_negotiates_openmetrics_and_the_cli_prints_the_same_bytes
    lines, = hostile_app_text
    refute_empty lines
    ep = Rperf::Rack::Metrics.new(->(_e) { [404, {}, []] }, dir: @metrics)
    status, headers, body = ep.call(env("/metrics").merge("HTTP_ACCEPT" => "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"))
    assert_equal 200, status
    assert_equal Rperf::Rack::Metrics::OPENMETRICS, headers["content-type"]
    assert_equal "# EOF\n", body.join.lines.last
    status, headers, body = ep.call(env("/metrics").merge("QUERY_STRING" => "format=text",
                                                          "HTTP_ACCEPT" => "application/openmetrics-text"))
    assert_equal [200, Rperf::Rack::Metrics::TEXT], [status, headers["content-type"]]
    text = body.join
    refute_match(/# EOF/, text)
    assert_equal 404, ep.call(env("/other"))[0], "other paths go to the app"
    fresh = File.join(@dir, "fresh")
    status, _, body = Rperf::Rack::Metrics.new(dir: fresh).call(env("/"))
    assert_equal 200, status, "a directory no process has written yet"
    assert_equal "0", value(samples(body.join), "rperf_metrics_files", { "state" => "live" })
    assert_equal 405, ep.call(env("/metrics").merge("REQUEST_METHOD" => "POST"))[0]
    omit("no rperf-gvl binary next to the extension") unless CLI
    out, err, st = Open3.capture3(CLI, "metrics", @metrics)
    assert st.success?, err
    assert_equal text, out, "the CLI and the Rack endpoint print the same text"
  end

  # A child forked from a process that counts keeps its own file; once it
  # has exited (its file written at exit), its units add to the parent's.
  def test_a_forked_childs_units_join_the_parents_after_it_exits
    source = <<~RUBY
      require "rperf"
      require "rperf/job_middleware"
      Rperf.start(mode: :counters)
      mw = Rperf::JobMiddleware.new(output: File.open(File::NULL, "w"), metrics_dir: #{@metrics.dump})
      run = ->(n) { n.times { |i| mw.call(Object.new, { "class" => "Mail", "jid" => i.to_s }, "default") { 100.times { } } } }
      run.(3)
      # The writer thread has run (its lines are out) before the fork: GCC 12's
      # ASan runtime hangs a child forked while a new thread sets itself up.
      mw.log.flush
      pid = fork { run.(2) }
      Process.wait(pid)
      raise "child failed" unless $?.success?
      File.write(#{File.join(@dir, 'child').dump}, pid.to_s)
      mw.log.flush
    RUBY
    run_ruby_child(@dir, source)
    child = Integer(File.read(File.join(@dir, "child")))
    files = Dir.children(@metrics).grep(/\Arperf-\d+-\d+\.json\z/)
    assert_equal 2, files.size, "the parent's and the child's: #{files}"
    assert(files.any? { |f| f.start_with?("rperf-#{child}-") })
    by_pid = files.to_h { |f| [f[/\d+/].to_i, JSON.parse(File.read(File.join(@metrics, f)))] }
    assert_equal [2, 3], by_pid.values.map { |d| d["units"].sum { |u| u["count"] } }.sort, "each its own units"
    all = samples(Rperf::Metrics.text(@metrics, fold: false))
    labels = { "kind" => "job", "label_job" => "Mail", "queue" => "default" }
    assert_equal "5", value(all, "rperf_unit_gvl_wait_seconds_count", labels)
    assert_equal "2", value(all, "rperf_metrics_files", { "state" => "dead" }) # both exited
    assert_equal "0", value(all, "rperf_threads", {})
    all = samples(Rperf::Metrics.text(@metrics))
    assert_equal [], Dir.children(@metrics).grep(/\Arperf-\d+-\d+\.json\z/), "folded as they were read"
    assert_equal "5", value(all, "rperf_unit_gvl_wait_seconds_count", labels)
    assert_equal "0", value(all, "rperf_metrics_files", { "state" => "dead" })
  end

  def test_label_sets_are_capped_and_folds_counted
    log = Rperf::ContentionLog.new(output: StringIO.new, async: false, max_label_sets: 2, metrics: @metrics)
    5.times { |i| log.measure(endpoint: "e#{i}") { nil } }
    log.metrics.flush
    all = samples(Rperf::Metrics.text(@metrics))
    counts = all.select { |n, _, _| n == "rperf_unit_gvl_wait_seconds_count" }.to_h { |_, l, v| [l["endpoint"], v] }
    assert_equal({ "e0" => "1", "e1" => "1", "other" => "3" }, counts)
    assert_equal "3", value(all, "rperf_label_sets_folded_total", {})

    # The store's own cap, for logs with a bigger one.
    store = Rperf::Metrics::Store.new(File.join(@dir, "small"), max_label_sets: 1)
    log = Rperf::ContentionLog.new(output: StringIO.new, async: false, metrics: store)
    3.times { |i| log.measure(endpoint: "e#{i}") { nil } }
    store.close
    all = samples(Rperf::Metrics.text(File.join(@dir, "small")))
    assert_equal "2", value(all, "rperf_unit_gvl_wait_seconds_count", { "kind" => "block", "endpoint" => "other" })
    assert_equal "2", value(all, "rperf_label_sets_folded_total", {})
  end

  def test_an_unusable_directory_never_fails_the_app
    blocker = File.join(@dir, "file")
    File.write(blocker, "")
    bad = File.join(blocker, "metrics")
    err = StringIO.new
    old = $stderr
    $stderr = err
    begin
      mw = Rperf::Rack::Middleware.new(->(_e) { [200, {}, ["ok"]] }, output: StringIO.new, metrics_dir: bad)
      3.times { assert_equal 200, mw.call(env("/x"))[0] }
      refute mw.log.metrics.flush
      refute mw.log.metrics.flush
    ensure
      $stderr = old
      Rperf::Metrics.close(bad)
    end
    assert_operator mw.log.metrics.stats[:errors], :>=, 2
    assert_equal 1, err.string.scan("rperf: metrics:").size, err.string
    status, _, body = Rperf::Rack::Metrics.new(dir: bad).call(env("/metrics"))
    assert_equal 503, status
    assert_match(/metrics: cannot read the metrics directory: Not a directory/, body.join)

    # A file that cannot be read is skipped and counted by the endpoint.
    FileUtils.mkdir_p(@metrics)
    File.write(File.join(@metrics, "rperf-#{Process.pid}-1.json"), "{\"format\":")
    status, _, body = Rperf::Rack::Metrics.new(dir: @metrics).call(env("/metrics"))
    assert_equal 200, status
    assert_equal "1", value(samples(body.join), "rperf_metrics_files", { "state" => "skipped" })
    assert_raise(Rperf::ReportError) { Rperf::Metrics.text(@metrics) }
  end

  def test_the_environment_names_the_directory_and_restarts_never_lower_a_counter
    old = ENV.fetch(Rperf::Metrics::ENV_DIR, nil)
    ENV[Rperf::Metrics::ENV_DIR] = @metrics
    mw = Rperf::JobMiddleware.new(output: StringIO.new)
    ENV[Rperf::Metrics::ENV_DIR] = old
    assert_equal File.expand_path(@metrics), mw.log.metrics.dir
    job = ->(n) { n.times { mw.call(Object.new, { "class" => "Work" }, "q") { burn_work(0.002) } } }
    job.(2)
    mw.log.metrics.flush
    first = samples(Rperf::Metrics.text(@metrics))
    Rperf.stop
    job.(1) # the profiler is not running: counted, without numbers
    Rperf.start(mode: :counters)
    job.(1)
    mw.log.metrics.flush
    second = samples(Rperf::Metrics.text(@metrics))
    %w[rperf_process_running_seconds_total rperf_process_gvl_wait_seconds_total].each do |name|
      assert_operator Rational(value(second, name, {})), :>=, Rational(value(first, name, {})), name
    end
    labels = { "kind" => "job", "label_job" => "Work", "queue" => "q" }
    assert_equal "3", value(second, "rperf_unit_gvl_wait_seconds_count", labels)
    assert_equal "1", value(second, "rperf_units_unmeasured_total", {})
    assert_operator ns(value(second, "rperf_running_seconds_total", labels)), :>=, 3 * 1_000_000
  end
end
