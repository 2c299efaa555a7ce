# frozen_string_literal: true

# The contention log's plumbing without the extension: outputs (Logger, IO,
# block), broken outputs, the Rack and job middlewares, exceptions and the
# cardinality cap as seen in the log. The counter source here is the
# thread's CPU clock (a real per-thread counter), passed as `counters:`;
# test_log_http.rb and test_log_interval.rb use the profiler's own.
require "test/unit"
require "logger"
require "json"
require "stringio"
require "rperf/contention_log"
require "rperf/rack"
require "rperf/job_middleware"

class TestLogPlumbing < Test::Unit::TestCase
  CPU_COUNTERS = lambda do
    { running_ns: Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond),
      gvl_wait_ns: 0, blocked_ns: 0, gc_mark_ns: 0, gc_sweep_ns: 0 }
  end

  def burn(seconds)
    t = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
    x = 0
    x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t < seconds
    x
  end

  def json_log(io = StringIO.new, **opts)
    [io, Rperf::ContentionLog.new(async: false, output: io, format: :json, counters: CPU_COUNTERS, label: false, **opts)]
  end

  def lines(io)
    io.string.lines.map { |l| JSON.parse(l) }
  end

  # Captures what the code under test writes to $stderr.
  def capture_stderr
    old = $stderr
    $stderr = StringIO.new
    yield
    $stderr.string
  ensure
    $stderr = old
  end

  def test_measure_writes_one_line_with_labels_and_returns_the_value
    io, log = json_log
    value = log.measure({ task: "import" }, kind: "job") { burn(0.02) && :done }
    assert_equal(:done, value)
    (line,) = lines(io)
    assert_equal("rperf.contention", line["msg"])
    assert_equal("job", line["kind"])
    assert_equal("import", line["label.task"])
    # the counter source measured CPU burned by this thread only
    assert_operator(line["running_ms"], :>=, 15.0)
    assert_operator(line["wall_ms"], :>=, line["running_ms"] * 0.9)
    assert_equal(1, line["threads"])
    assert_in_delta(0.0, line["gvl_wait_share"], 1e-9)
  end

  def test_logfmt_line_and_ns_units_use_report_json_names
    io = StringIO.new
    log = Rperf::ContentionLog.new(async: false, output: io, units: :ns, counters: CPU_COUNTERS, label: false)
    log.measure(endpoint: "GET /a b") { burn(0.005) }
    line = io.string.chomp
    assert(line.start_with?("rperf.contention pid=#{Process.pid} kind=block label.endpoint=\"GET /a b\" wall_ns="), line)
    %w[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].each { |k| assert_match(/ #{k}=\d+ /, line) }
  end

  def test_logger_and_block_outputs
    io = StringIO.new
    logger = Logger.new(io)
    log = Rperf::ContentionLog.new(async: false, output: logger, counters: CPU_COUNTERS, label: false, level: :warn)
    log.measure(k: "v") { nil }
    assert_match(/\AW, .* rperf\.contention pid=#{Process.pid} kind=block label\.k=v /, io.string)

    got = []
    log = Rperf::ContentionLog.new(async: false, counters: CPU_COUNTERS, label: false) { |line| got << line }
    log.measure(k: "v") { nil }
    assert_equal(1, got.size)
    assert_equal(1, log.stats[:lines])
  end

  def test_exceptions_of_the_work_propagate_and_are_logged
    io, log = json_log
    assert_raise(ZeroDivisionError) { log.measure(k: "boom") { 1 / 0 } }
    assert_equal("ZeroDivisionError", lines(io).first["error"])
  end

  def test_a_broken_io_is_reported_once_and_the_program_continues
    r, w = IO.pipe
    r.close # writes now raise Errno::EPIPE
    log = Rperf::ContentionLog.new(async: false, output: w, counters: CPU_COUNTERS, label: false)
    results = nil
    err = capture_stderr { results = 5.times.map { |i| log.measure(i: i.to_s) { i * 2 } } }
    assert_equal([0, 2, 4, 6, 8], results)
    assert_equal(1, err.lines.size, err)
    assert_match(/rperf: contention log: writing to the log output failed: Errno::EPIPE/, err)
    assert_equal(5, log.stats[:errors])
    assert_equal(0, log.stats[:lines])
  ensure
    w&.close rescue nil # rubocop:disable Style/RescueModifier
  end

  def test_a_raising_logger_or_block_never_reaches_the_app
    closed = StringIO.new
    closed.close
    logger = Logger.new(StringIO.new)
    def logger.add(*) = raise(IOError, "disk full")
    [Rperf::ContentionLog.new(async: false, output: closed, counters: CPU_COUNTERS),
     Rperf::ContentionLog.new(async: false, output: logger, counters: CPU_COUNTERS),
     Rperf::ContentionLog.new(async: false, counters: CPU_COUNTERS) { raise "sink down" }].each do |log|
      err = capture_stderr { assert_equal(42, log.measure(a: "1") { 42 }) }
      assert_match(/contention log: writing to the log output failed/, err)
      assert_equal(1, log.stats[:errors])
    end
  end

  def test_a_failing_counter_source_still_logs_wall_time
    io = StringIO.new
    log = Rperf::ContentionLog.new(async: false, output: io, format: :json, counters: -> { raise "no profiler" })
    err = capture_stderr { 3.times { log.measure(a: "1") { nil } } }
    assert_equal(1, err.lines.size)
    assert_match(/reading thread counters failed/, err)
    rows = lines(io)
    assert_equal(3, rows.size)
    assert(rows.all? { |r| r.key?("wall_ms") && !r.key?("running_ms") })
    assert_equal(6, log.stats[:counter_failures]) # two reads per unit
  end

  def test_cardinality_cap_folds_label_sets_into_other_in_the_log
    io, log = json_log(max_label_sets: 5)
    30.times { |i| log.measure(endpoint: "GET /raw/#{i}") { nil } }
    rows = lines(io)
    assert_equal(30, rows.size)
    assert_equal(5, rows.map { |r| r["label.endpoint"] }.uniq.size - 1)
    assert_equal(25, rows.count { |r| r["label.endpoint"] == "other" && r["label_capped"] })
    assert_equal(25, log.stats[:label_overflow])
  end

  def rack_env(method, path)
    { "REQUEST_METHOD" => method, "PATH_INFO" => path, "SCRIPT_NAME" => "", "QUERY_STRING" => "" }
  end

  def test_rack_middleware_labels_logs_and_exposes_the_numbers
    io, log = json_log
    seen = nil
    app = lambda do |env|
      burn(0.01)
      seen = env["rperf.contention"].so_far
      [201, { "content-type" => "text/plain" }, ["ok"]]
    end
    mw = Rperf::Rack::Middleware.new(app, log: log)
    env = rack_env("GET", "/users/123")
    status, _headers, body = mw.call(env)
    assert_equal([201, ["ok"]], [status, body])
    (line,) = lines(io)
    assert_equal("GET /users/:id", line["label.endpoint"])
    assert_equal("request", line["kind"])
    assert_equal(201, line["status"])
    # the app saw its numbers so far, and the final ones are there after the call
    assert_operator(seen.running_ns, :>=, 5_000_000)
    final = env["rperf.contention"].result
    assert_operator(final.running_ns, :>=, seen.running_ns)
    assert_equal(final.running_ns / 1e6, line["running_ms"].to_f.round(3)) if final.running_ns % 1000 == 0
    assert_in_delta(final.running_ns / 1e6, line["running_ms"], 0.001)
  end

  # Application fields cannot replace or repeat the line's own fields: in
  # both formats each key appears once, the status is the response's, and
  # the application's fields keep their values under app.<name>.
  def test_application_fields_cannot_forge_the_line
    %i[logfmt json].each do |format|
      io = StringIO.new
      log = Rperf::ContentionLog.new(async: false, output: io, format: format, counters: CPU_COUNTERS, label: false)
      app = lambda do |env|
        env["rperf.contention"].add_fields(status: "forged", "status" => "again", wall_ms: 9,
                                           "label.endpoint" => "evil", "kind" => "job", user: 1)
        env["rperf.contention"].add_field("user", 2)
        [200, {}, ["ok"]]
      end
      Rperf::Rack::Middleware.new(app, log: log).call(rack_env("GET", "/a"))
      text = io.string.chomp
      pairs = if format == :json
                text.scan(/"([^"]+)":("(?:[^"\\]|\\.)*"|[^,}]*)/)
              else
                text.scan(/(\S+?)=("(?:[^"\\]|\\.)*"|\S*)/)
              end
      keys = pairs.map(&:first)
      assert_equal keys.uniq, keys, text
      fields = pairs.to_h
      assert_equal "200", fields["status"].to_s
      assert_equal "again", fields["app.status"].to_s.delete('"')
      assert_equal "9", fields["app.wall_ms"].to_s
      assert_equal "evil", fields["app.label.endpoint"].to_s.delete('"')
      assert_equal "job", fields["app.kind"].to_s.delete('"')
      assert_equal "request", fields["kind"].to_s.delete('"')
      assert_equal "2", fields["user"].to_s
      assert_match(/\A\d/, fields["wall_ms"].to_s)
    end
  end

  def test_rack_middleware_survives_a_bad_labeller_and_passes_app_errors
    io, log = json_log
    mw = Rperf::Rack::Middleware.new(->(_env) { raise ArgumentError, "app bug" }, log: log,
                                     labeller: ->(_env) { raise "labeller bug" })
    err = capture_stderr { assert_raise_message("app bug") { mw.call(rack_env("POST", "/x")) } }
    assert_match(/the request labeller failed/, err)
    (line,) = lines(io)
    assert_equal("unlabelled", line["label.endpoint"])
    assert_equal("ArgumentError", line["error"])
  end

  def test_overlapping_requests_on_threads_are_counted_by_their_own_thread
    io, log = json_log
    app = lambda do |env|
      burn(env["PATH_INFO"] == "/slow" ? 0.06 : 0.01)
      [200, {}, []]
    end
    mw = Rperf::Rack::Middleware.new(app, log: log)
    threads = %w[/slow /fast /fast /fast].map { |p| Thread.new { mw.call(rack_env("GET", p)) } }
    threads.each(&:join)
    rows = lines(io)
    slow = rows.find { |r| r["label.endpoint"] == "GET /slow" }
    fast = rows.select { |r| r["label.endpoint"] == "GET /fast" }
    assert_equal(3, fast.size)
    assert_operator(slow["running_ms"], :>=, 50.0)
    # each fast request saw only its own CPU time, not the slow one's
    fast.each { |r| assert_operator(r["running_ms"], :<, 40.0, r.inspect) }
  end

  class ResizeImage; end

  def test_job_middleware_labels_by_job_class_and_queue
    io, log = json_log
    mw = Rperf::JobMiddleware.new(log: log)
    out = mw.call(ResizeImage.new, { "class" => "ResizeImage", "jid" => "abc123" }, "media") { :performed }
    assert_equal(:performed, out)
    wrapped = { "class" => "Sidekiq::ActiveJob::Wrapper", "wrapped" => "SendEmail", "jid" => "j2" }
    mw.call(Object.new, wrapped, "mail") { nil }
    a, b = lines(io)
    assert_equal(%w[job ResizeImage media abc123], a.values_at("kind", "label.job", "label.queue", "job_id"))
    assert_equal(%w[SendEmail mail j2], b.values_at("label.job", "label.queue", "job_id"))
    # Sidekiq passes chain.add's arguments positionally
    assert_same(log, Rperf::JobMiddleware.new({ log: log }).log)
  end

  Job = Struct.new(:queue_name, :job_id)

  def test_around_perform_and_log_contention_use_the_default_log
    io = StringIO.new
    old = Rperf::ContentionLog.default
    Rperf::ContentionLog.default = Rperf::ContentionLog.new(async: false, output: io, format: :json, counters: CPU_COUNTERS,
                                                            label: false)
    Rperf::JobMiddleware.around_perform(Job.new("low", "id-1")) { nil }
    assert_equal(7, Rperf.log_contention(step: "sum") { 3 + 4 })
    a, b = lines(io)
    assert_equal(["TestLogPlumbing::Job", "low", "id-1"], a.values_at("label.job", "label.queue", "job_id"))
    assert_equal(%w[block sum], b.values_at("kind", "label.step"))
  ensure
    Rperf::ContentionLog.default = old
  end

  def test_the_fast_unit_line_equals_the_generic_one
    [%i[logfmt ms], %i[logfmt ns], %i[json ms], %i[json ns]].each do |format, units|
      lines = []
      log = Rperf::ContentionLog.new(async: false, format: format, units: units, counters: CPU_COUNTERS, label: false,
                                     max_label_sets: 1) { |l| lines << l }
      units_seen = []
      log.measure({ endpoint: "GET /a \"b\"" }, kind: "request", fields: { status: 200 }) { |u| units_seen << u && burn(0.002) }
      log.measure({ endpoint: "GET /c" }, kind: "request") { |u| units_seen << u } # folded: label_capped
      assert_raise(KeyError) { log.measure(k: "x") { |u| units_seen << u && {}.fetch(:nope) } }
      assert_equal(3, lines.size)
      units_seen.zip(lines).each do |unit, line|
        generic = log.format_line(log.__send__(:unit_fields, unit))
        if format == :json
          assert_equal(JSON.parse(generic), JSON.parse(line))
        else
          assert_equal(generic, line)
        end
      end
    end
  end

  # The generic line's milliseconds and the C numbers' agree also where a
  # Float of ns / 1e6 would round the other way (ns ending in 500).
  def test_milliseconds_round_as_the_c_numbers_do
    values = [0, 499, 500, 1500, 2_007_500, 2_007_499, 999_999_500, 123_456_789_500] +
             Array.new(2000) { |i| (i * 7919 * 1000) + 500 }
    values.each do |ns|
      c = +""
      Rperf.__send__(:_c_append_numbers, c, true, [" x="], ns)
      assert_equal c, " x=#{Rperf::Log::Format.format_float(Rperf::Log::Measurement.ms(ns))}", ns.to_s
    end
  end

  def test_bad_options_are_refused_with_a_clear_message
    assert_raise_message(/Logger, an IO .* or a block/) { Rperf::ContentionLog.new(async: false, output: 42) }
    assert_raise_message(/units must be/) { Rperf::ContentionLog.new(async: false, output: $stderr, units: :s) }
    assert_raise_message(/unknown log level/) { Rperf::ContentionLog.new(async: false, output: Logger.new(nil), level: :loud) }
  end
end

class TestEndpointLabels < Test::Unit::TestCase
  def env(method, path, script = "")
    { "REQUEST_METHOD" => method, "PATH_INFO" => path, "SCRIPT_NAME" => script }
  end

  # A path seen again gets the same frozen Hash, which the label cap then
  # finds by identity; what it says is the normaliser's answer.
  def test_a_path_seen_again_gets_the_same_frozen_labels
    a = Rperf::Rack.endpoint_label(env("GET", +"/users/12"))
    b = Rperf::Rack.endpoint_label(env("GET", +"/users/12"))
    assert_same a, b
    assert a.frozen? && a[:endpoint].frozen?
    assert_equal({ endpoint: "GET /users/:id" }, a)
    assert_equal({ endpoint: "POST /users/:id" }, Rperf::Rack.endpoint_label(env("POST", "/users/12")))
    assert_equal({ endpoint: "GET /app/users/:id" }, Rperf::Rack.endpoint_label(env("GET", "/users/12", "/app")))
    assert_equal({ endpoint: "OTHER /" }, Rperf::Rack.endpoint_label(env(nil, nil, nil)))
    cap = Rperf::Log::LabelCap.new(max_label_sets: 1)
    assert_same cap.admit(a), cap.admit(b)
    assert_equal({ endpoint: "other" }, cap.admit(Rperf::Rack.endpoint_label(env("GET", "/x"))))
    assert_equal({ endpoint: "other" }, cap.admit(Rperf::Rack.endpoint_label(env("GET", "/x"))))
    assert_equal 2, cap.overflowed, "a folded set is counted each time, not remembered"
  end

  # Paths of one route share one labels Hash, however many ids pass (the
  # label cap and the C request path find a set by identity), and every
  # label is the normaliser's answer, whatever the caches held before.
  def test_paths_of_one_route_share_one_labels_hash
    first = Rperf::Rack.endpoint_label(env("GET", "/shop/1/items/2"))
    (Rperf::Rack::ENDPOINT_CACHE_MAX + 100).times do |i|
      assert_same first, Rperf::Rack.endpoint_label(env("GET", "/shop/#{i}/items/#{i * 7}")), i
    end
    assert_same Rperf::Rack.endpoint_label(env("GET", "/orders/#{"0a1b2c3d" * 2}")),
                Rperf::Rack.endpoint_label(env("GET", "/orders/#{"9f8e7d6c" * 2}")), "two paths, one endpoint"
    rng = Random.new(27)
    parts = ["users", "12", "0", "v2", "a-b", "x" * 70, "1" * 70, "12.json", "", "#", "#1", "deadbeef" * 2,
             "0a1b2c3d-0a1b-0a1b-0a1b-0a1b2c3d4e5f", "%ff", "?q=1", "a.b"]
    3000.times do
      path = "/" + Array.new(rng.rand(1..18)) { parts.sample(random: rng) }.join("/")
      script = ["", "/app", "/v1", "/7/"].sample(random: rng)
      method = %w[GET POST get].sample(random: rng)
      want = "#{method == "get" ? "OTHER" : method} #{Rperf::Log::PathNormalizer.normalize(script + path)}"
      assert_equal want, Rperf::Rack.endpoint_label(env(method, path, script))[:endpoint], [method, script, path].inspect
    end
  end

  # A path the caller changes afterwards does not change what was cached.
  def test_the_cache_is_bounded_and_keeps_its_own_keys
    path = +"/orders/1"
    first = Rperf::Rack.endpoint_label(env("GET", path))
    path.replace("/health")
    assert_equal({ endpoint: "GET /health" }, Rperf::Rack.endpoint_label(env("GET", path)))
    assert_same first, Rperf::Rack.endpoint_label(env("GET", "/orders/1"))
    max = Rperf::Rack::ENDPOINT_CACHE_MAX
    (max + 10).times { |i| Rperf::Rack.endpoint_label(env("GET", "/p/#{i}")) }
    assert_operator Rperf::Rack.instance_variable_get(:@endpoint_cache).size, :<=, max
  end
end
