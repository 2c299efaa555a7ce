# frozen_string_literal: true

# A real Prometheus (Debian's package) scrapes a Puma cluster of two
# workers running the test app under wrk, through Rperf::Rack::Metrics:
# once as it negotiates (OpenMetrics) and once as text 0.0.4. Its HTTP API
# then has to show what the request lines say. What is checked holds
# however busy the machine is: each endpoint's counter at the end equals
# its lines' whole GVL wait, its histogram count equals its number of
# lines, rate() of the wait and of the requests over the load equals the
# load's lines added up (per second of the scrapes' span), and no sample
# of a counter is below the one before, across a worker restarted mid-load.
require "test/unit"
require "json"
require "net/http"
require "open3"
require "tmpdir"
require_relative "components"
require_relative "server_process"

class TestPrometheus < Test::Unit::TestCase
  APP = File.expand_path("app.ru", __dir__)
  SCRAPE = 1 # seconds
  ENDPOINTS = ["GET /cpu", "GET /hog"].freeze

  def setup
    missing = Servers::Components.missing
    %w[prometheus promtool].each do |cmd|
      missing ||= "#{cmd} not found (Debian package prometheus)" unless system("command -v #{cmd} >/dev/null 2>&1")
    end
    omit(missing) if missing && !ENV["CI"]
    flunk(missing) if missing
    @dir = Dir.mktmpdir("rperf-prometheus")
    @log = File.join(@dir, "lines.jsonl")
    @metrics = File.join(@dir, "metrics")
  end

  def teardown
    @prometheus&.stop
    @puma&.stop
    FileUtils.rm_rf(@dir) if @dir
  end

  def start_puma
    port = Servers::ServerProcess.free_port
    config = File.join(@dir, "puma.rb")
    File.write(config, <<~RUBY)
      workers 2
      preload_app!
      threads 4, 4
      worker_check_interval 1
      bind "tcp://127.0.0.1:#{port}"
    RUBY
    argv = [RbConfig.ruby, *Servers::Components.ruby_args, "-e", 'require "puma/cli"; Puma::CLI.new(ARGV).run', "--",
            "-C", config, APP]
    env = Servers::Components.env.merge("RPERF_TEST_LOG" => @log, "RPERF_TEST_METRICS_DIR" => @metrics)
    @puma = Servers::ServerProcess.new(argv, env: env, log: File.join(@dir, "puma.log"), port: port, chdir: @dir)
    @puma.wait_ready
  end

  def start_prometheus
    port = Servers::ServerProcess.free_port
    target = "127.0.0.1:#{@puma.port}"
    File.write(File.join(@dir, "prometheus.yml"), <<~YAML)
      global:
        scrape_interval: #{SCRAPE}s
        scrape_timeout: #{SCRAPE}s
      scrape_configs:
        - job_name: app
          static_configs: [{ targets: ["#{target}"] }]
        - job_name: app_text
          params: { format: [text] }
          static_configs: [{ targets: ["#{target}"] }]
    YAML
    argv = ["prometheus", "--config.file=#{File.join(@dir, 'prometheus.yml')}",
            "--storage.tsdb.path=#{File.join(@dir, 'tsdb')}", "--web.listen-address=127.0.0.1:#{port}"]
    @prometheus = Servers::ServerProcess.new(argv, log: File.join(@dir, "prometheus.log"), port: port, chdir: @dir)
    @prometheus.wait_ready
    # The port opens before the storage: queries answer 503 until /-/ready does.
    wait_for("Prometheus ready") { prometheus_ready? }
    wait_for("both scrape jobs up") { query('sum(up{job=~"app|app_text"})').first&.dig("value", 1) == "2" }
  rescue Test::Unit::AssertionFailedError
    targets = Net::HTTP.get(URI("http://127.0.0.1:#{@prometheus.port}/api/v1/targets"))
    flunk("scrape targets: #{JSON.parse(targets)['data']['activeTargets'].map { |t| t.slice('scrapeUrl', 'health', 'lastError') }}")
  end

  def wait_for(what, timeout: 30)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    until yield
      flunk("#{what}: not within #{timeout} s; #{File.read(File.join(@dir, 'prometheus.log'))[-2000..]}") if
        Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.2
    end
  end

  def prometheus_ready?
    Net::HTTP.get_response(URI("http://127.0.0.1:#{@prometheus.port}/-/ready")).code == "200"
  rescue SystemCallError, EOFError
    false
  end

  # The result of an instant query (at `time`, default now).
  def query(promql, time: nil)
    params = { query: promql }
    params[:time] = format("%.3f", time) if time
    uri = URI("http://127.0.0.1:#{@prometheus.port}/api/v1/query")
    uri.query = URI.encode_www_form(params)
    body = JSON.parse(Net::HTTP.get(uri))
    assert_equal "success", body["status"], body.inspect
    body["data"]["result"]
  end

  def by_endpoint(promql, time:)
    query(promql, time: time).to_h { |r| [r["metric"]["endpoint"], Float(r["value"][1])] }
  end

  def wrk(path, connections:, seconds:)
    IO.popen(["wrk", "-t1", "-c#{connections}", "-d#{seconds}s", "http://127.0.0.1:#{@puma.port}#{path}"], &:read)
  end

  # The CPU endpoint beside the GVL hog, for `seconds`.
  def load(seconds)
    hog = Thread.new { wrk("/hog", connections: 2, seconds: seconds) }
    wrk("/cpu", connections: 6, seconds: seconds)
    hog.join
  end

  def lines
    File.readlines(@log).map { |l| JSON.parse(l) }.select { |l| ENDPOINTS.include?(l["label.endpoint"]) }
  end

  def whole_wait(line) = line["before_gvl_wait_ns"].to_i + line["gvl_wait_ns"] + line["after_gvl_wait_ns"].to_i
  def whole_wall(line) = line["before_wall_ns"].to_i + line["wall_ns"] + line["after_wall_ns"].to_i

  def workers
    Dir["/proc/[0-9]*/stat"].filter_map do |stat|
      fields = File.read(stat).split(") ").last.split
      File.basename(File.dirname(stat)).to_i if fields[1].to_i == @puma.pid
    rescue SystemCallError
      nil
    end
  end

  def now = Time.now.to_f

  def test_prometheus_sees_every_worker_and_counters_never_go_back
    start_puma
    start_prometheus
    load(1) # a first part of the same mix: the series exist before the window
    sleep SCRAPE * 3
    before = lines
    t0 = now
    sleep SCRAPE * 1.5 # a sample of the flat counters inside the window

    old_workers = workers
    assert_equal 2, old_workers.size, "the cluster's workers"
    restart = Thread.new do
      sleep 1.5
      Process.kill(:TERM, old_workers.first) # the master starts another in its place
    end
    load(5)
    restart.join
    wait_for("a new worker") { (workers - old_workers).size == 1 }
    # The new worker boots in its own time (a busy machine may take the
    # whole load for it): more load until it has served.
    new_worker = (workers - old_workers).first
    10.times { lines.any? { |l| l["pid"] == new_worker } ? break : load(1) }
    sleep SCRAPE * 4 # every process's file written, then scraped
    t1 = now
    all = lines
    window = all[before.size..]
    refute_empty window
    assert_equal 3, all.map { |l| l["pid"] }.uniq.size, "the lines of both first workers and the new one"
    assert File.exist?(File.join(@metrics, "rperf-dead.json")), "the restarted worker's file folded"

    # The window for rate(): from the first scrape after t0 (the counters
    # still flat: the load began 1.5 s later) to the last, evaluated at the
    # last with a range 1 ms longer. rate() then extrapolates by that 1 ms
    # alone, so it is the counters' increase over the scrapes' span.
    stamps = query(%(rperf_unit_gvl_wait_seconds_count{job="app",kind="request"}[#{(t1 - t0).ceil + 5}s]), time: t1)
             .first["values"].map { |t, _| Float(t) }
    first = stamps.find { |t| t >= t0 }
    last = stamps.last
    span = last - first
    range = "#{(span * 1000).round + 1}ms"
    ENDPOINTS.each do |endpoint|
      ls = all.select { |l| l["label.endpoint"] == endpoint }
      wl = window.select { |l| l["label.endpoint"] == endpoint }
      sel = %({job="app",kind="request",endpoint="#{endpoint}"})
      total = Float(query("rperf_gvl_wait_seconds_total#{sel}", time: t1).first["value"][1])
      in_lines = ls.sum { |l| whole_wait(l) } / 1e9
      assert_in_delta in_lines, total, in_lines * 0.02, "#{endpoint}: the counter against its lines"
      count = query("rperf_unit_gvl_wait_seconds_count#{sel}", time: t1).first["value"][1]
      assert_equal ls.size, Integer(count), "#{endpoint}: one histogram count per line"

      # rate() over the load against the lines of the load: GVL wait,
      # requests, and the wait's share of wall time.
      rate = lambda do |name|
        Float(query("rate(#{name}#{sel}[#{range}])", time: last).first["value"][1])
      end
      wait = wl.sum { |l| whole_wait(l) } / 1e9
      assert_in_delta wait / span, rate.("rperf_gvl_wait_seconds_total"), wait / span * 0.02,
                      "#{endpoint}: rate() of the GVL wait over #{span.round(3)} s, #{wl.size} lines"
      assert_in_delta wl.size / span, rate.("rperf_unit_gvl_wait_seconds_count"), wl.size / span * 0.02,
                      "#{endpoint}: rate() of the requests"
      share = wl.sum { |l| whole_wait(l) }.fdiv(wl.sum { |l| whole_wall(l) })
      measured = rate.("rperf_gvl_wait_seconds_total") / rate.("rperf_wall_seconds_total")
      assert_in_delta share, measured, share * 0.02, "#{endpoint}: rate() of the wait per wall second"
      warn format("%s: counter %.4f s, lines %.4f s; rate %.6f s/s, lines %.6f s/s over %.3f s",
                  endpoint, total, in_lines, rate.("rperf_gvl_wait_seconds_total"), wait / span, span) if
        ENV["RPERF_TEST_VERBOSE"]
    end

    # No sample of any counter series is below the one before.
    wide = "#{(t1 - t0).ceil + 30}s"
    %w[rperf_gvl_wait_seconds_total rperf_unit_gvl_wait_seconds_count rperf_wall_seconds_total
       rperf_process_running_seconds_total rperf_process_gvl_wait_seconds_total].each do |name|
      series = query(%(#{name}{job="app"}[#{wide}]), time: t1)
      refute_empty series, name
      series.each do |s|
        values = s["values"].map { |_, v| Float(v) }
        assert_operator values.size, :>=, 5, "#{name}: samples"
        values.each_cons(2) { |a, b| assert_operator b, :>=, a, "#{name}#{s['metric']}: went back from #{a} to #{b}" }
      end
      resets = query(%(sum(resets(#{name}{job="app"}[#{wide}]))), time: t1)
      assert_equal "0", resets.first["value"][1], "#{name}: resets()"
    end

    # The text scrape sees the same series as the OpenMetrics one.
    om = by_endpoint(%(rperf_unit_gvl_wait_seconds_count{job="app",kind="request"}), time: t1)
    text = by_endpoint(%(rperf_unit_gvl_wait_seconds_count{job="app_text",kind="request"}), time: t1)
    ENDPOINTS.each { |e| assert_equal om[e], text[e], "#{e} in both scrapes" }

    # promtool takes the text as the endpoint serves it.
    body = Net::HTTP.get(URI("http://127.0.0.1:#{@puma.port}/metrics?format=text"))
    out, status = Open3.capture2e("promtool", "check", "metrics", stdin_data: body)
    assert status.success?, "promtool: #{out}"
  end
end
