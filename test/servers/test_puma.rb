# frozen_string_literal: true

# Debian's Puma 5.6 for real, single and cluster, under wrk, with the Rack
# middleware's JSON lines. What is checked holds however busy the machine
# is: one line per request, every window's states adding up to its wall
# time, the request threads' GVL wait found in their lines (before the
# app, in it, and while the response is written), and in a cluster every
# worker logging complete lines with its own pid.
require "test/unit"
require "json"
require "net/http"
require "tmpdir"
require_relative "components"
require_relative "server_process"

class TestPuma < Test::Unit::TestCase
  APP = File.expand_path("app.ru", __dir__)

  def setup
    missing = Servers::Components.missing
    omit(missing) if missing && !ENV["CI"]
    flunk(missing) if missing
    @dir = Dir.mktmpdir("rperf-puma")
    @log = File.join(@dir, "lines.jsonl")
  end

  def teardown
    @server&.stop
    FileUtils.rm_rf(@dir) if @dir
  end

  CLI = $LOAD_PATH.map { |d| File.expand_path("../bin/rperf-gvl", d) }.find { |f| File.executable?(f) }

  def start_puma(*args, config: nil, record: nil)
    port = Servers::ServerProcess.free_port
    argv = [RbConfig.ruby, *Servers::Components.ruby_args, "-e", 'require "puma/cli"; Puma::CLI.new(ARGV).run', "--"]
    argv = [CLI, "record", "-o", record, "--", *argv] if record
    if config
      path = File.join(@dir, "puma.rb")
      File.write(path, config.gsub("PORT", port.to_s))
      argv += ["-C", path]
    else
      argv += ["--no-config", "-b", "tcp://127.0.0.1:#{port}"]
    end
    argv += [*args, APP]
    env = Servers::Components.env.merge("RPERF_TEST_LOG" => @log)
    @server = Servers::ServerProcess.new(argv, env: env, log: File.join(@dir, "puma.log"), port: port, chdir: @dir)
    @server.wait_ready
  end

  # wrk for `seconds` on path with c connections; its request count.
  def wrk(path, connections:, seconds: 3, threads: 1)
    out = IO.popen(["wrk", "-t#{threads}", "-c#{connections}", "-d#{seconds}s",
                    "http://127.0.0.1:#{@server.port}#{path}"], &:read)
    assert_predicate $?, :success?, out
    Integer(out[/(\d+) requests in/, 1])
  end

  def get(path)
    Net::HTTP.get(URI("http://127.0.0.1:#{@server.port}#{path}"))
  end

  def lines
    File.readlines(@log).map { |l| JSON.parse(l) }.reject { |l| l["label.endpoint"] == "GET /__threads" }
  end

  STATES = %w[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze

  def assert_windows_add_up(line)
    assert_equal line["wall_ns"], STATES.sum { |k| line[k] }, line.inspect
    %w[before after].each do |w|
      next unless line.key?("#{w}_wall_ns")

      assert_equal line["#{w}_wall_ns"], STATES.sum { |k| line["#{w}_#{k}"] }, line.inspect
    end
  end

  def total_gvl_wait(line)
    line["before_gvl_wait_ns"].to_i + line["gvl_wait_ns"] + line["after_gvl_wait_ns"].to_i
  end

  def test_single_mode_lines_hold_the_wait_next_to_a_hog
    start_puma("-t", "8:8")
    hog = Thread.new { wrk("/hog", connections: 2) }
    cpu = wrk("/cpu", connections: 6)
    hogged = hog.value
    # Puma 5.6 names its pool's threads "puma srv tp 001", ...
    threads = JSON.parse(get("/__threads"))["threads"].select { |t| t["name"].to_s.match?(/\btp \d+\z/) }
    assert_equal 8, threads.size, "the pool's threads"
    @server.stop # its log writer writes what it holds at exit
    all = lines

    by = all.group_by { |l| l["label.endpoint"] }
    # One line per request (wrk counts the responses it saw; requests in
    # flight when it stopped were served and logged too).
    assert_operator by["GET /cpu"].size, :>=, cpu
    assert_operator by["GET /cpu"].size, :<=, cpu + 6
    assert_operator by["GET /hog"].size, :>=, hogged
    assert_operator by["GET /hog"].size, :<=, hogged + 2
    all.each { |l| assert_windows_add_up(l) }
    with_before = all.count { |l| l.key?("before_wall_ns") }
    with_after = all.count { |l| l.key?("after_wall_ns") }
    assert_operator with_before, :>=, all.size * 0.9, "lines with a before window"
    assert_equal all.size, with_after, "Puma runs rack.after_reply for every request"
    assert all.all? { |l| l["before_blocked_ns"].to_i.zero? }

    # The request threads' GVL wait is in their lines: before the app (the
    # thread woken for the request waits behind the hog), in it, and while
    # the response is written. The app window alone once held a third.
    pool_wait = threads.sum { |t| t["gvl_wait_ns"] }
    in_lines = all.sum { |l| total_gvl_wait(l) }
    in_apps = all.sum { |l| l["gvl_wait_ns"] }
    assert_operator pool_wait, :>, 0
    assert_operator in_lines, :<=, pool_wait
    assert_operator in_lines, :>=, pool_wait * 0.85,
                    "lines hold #{in_lines} of the pool's #{pool_wait} ns GVL wait (apps alone #{in_apps})"
    warn "pool GVL wait #{pool_wait} ns: lines #{in_lines}, apps alone #{in_apps}" if ENV["RPERF_TEST_VERBOSE"]
    cpu_wait = by["GET /cpu"].sum { |l| total_gvl_wait(l) }
    assert_operator cpu_wait, :>, by["GET /cpu"].sum { |l| l["gvl_wait_ns"] }, "the CPU endpoint waited outside its app too"
  end

  # `rperf-gvl record` of a cluster: the master's report and one per
  # worker, where every request ran. Ruby 3.3 and 3.4 sometimes wedge a
  # Puma 5.6 worker in its shutdown (IO#close waits for a blocking call no
  # thread makes; seen without the profiler too), and Puma kills it after
  # worker_shutdown_timeout: a killed worker writes no report, and record
  # must name it. The run is tried again until every worker ended on its
  # own; each run's reports are checked.
  def test_record_of_a_cluster_reports_every_worker
    omit("no rperf-gvl binary next to the extension") unless CLI
    checked = 0
    4.times do |attempt|
      reported, lost = record_cluster
      checked += reported
      break if lost.empty?

      warn "puma cluster, attempt #{attempt + 1}: worker #{lost.join(', ')} killed in its shutdown; again"
      @server = nil
      Dir.children(@dir).each { |f| FileUtils.rm_rf(File.join(@dir, f)) }
    end
    assert_operator checked, :>, 0, "no worker ended on its own in four runs"
  end

  # One recorded cluster run: checks the workers' reports and that record
  # names each worker killed before its end; their counts.
  def record_cluster
    out = File.join(@dir, "r.json")
    start_puma(config: <<~RUBY, record: out)
      workers 2
      preload_app!
      threads 4, 4
      worker_shutdown_timeout 5
      bind "tcp://127.0.0.1:PORT"
    RUBY
    wrk("/cpu", connections: 8, seconds: 2, threads: 2)
    @server.stop(timeout: 60)
    log = File.read(File.join(@dir, "puma.log"))
    booted = log.scan(/Worker \d+ \(PID: (\d+)\) booted/).flatten.map(&:to_i)
    assert_equal 2, booted.size, log[-3000..]
    workers = Dir[File.join(@dir, "r.*.json")]
    reported = workers.map { |w| Integer(File.basename(w)[/\Ar\.(\d+)\.json\z/, 1]) }
    lost = log.scan(/forked process (\d+) ended without writing its report/).flatten.map(&:to_i)
    assert_equal booted.sort, (reported + lost).sort, "each worker reported or named as lost: #{log[-3000..]}"

    served = lines.group_by { |l| l["pid"] }
    workers.each do |path|
      report = JSON.parse(File.read(path))
      pid = report["meta"]["pid"]
      assert_equal "r.#{pid}.json", File.basename(path)
      assert_match(/report of forked process #{pid} written to/, log)
      pool = report["threads"].select { |t| t["name"].to_s.match?(/\btp \d+\z/) }
      assert_equal 4, pool.size, "the worker's pool threads"
      running = pool.sum { |t| t["running_ns"] }
      in_lines = served.fetch(pid).sum { |l| l["running_ns"] }
      assert_operator running, :>=, in_lines, "the worker's report holds the running time of its requests"
    end
    refute_includes reported, JSON.parse(File.read(out))["meta"]["pid"]
    [reported.size, lost]
  end

  def test_cluster_workers_log_complete_lines_with_their_pids
    start_puma(config: <<~RUBY)
      workers 2
      preload_app!
      threads 4, 4
      bind "tcp://127.0.0.1:PORT"
    RUBY
    master = @server.pid
    wrk("/cpu", connections: 8, seconds: 3, threads: 2)
    @server.stop
    all = lines
    pids = all.map { |l| l["pid"] }.uniq
    assert_equal 2, pids.size, "both workers served: #{pids}"
    refute_includes pids, master
    all.each do |l|
      assert l.key?("running_ns"), "a worker's line without its counters: #{l}"
      assert_windows_add_up(l)
    end
    assert all.all? { |l| l.key?("after_wall_ns") }
    log = File.read(File.join(@dir, "puma.log"))
    refute_match(/not running|could not restart/, log)
  end
end
