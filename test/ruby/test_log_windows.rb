# frozen_string_literal: true

# A request line's before_* and after_* windows and the log's background
# writer, with the profiler recording for real (counters mode).
#
# The server here is a thread that blocks reading a pipe, as a Puma thread
# blocks on its socket, and calls the Rack middleware when a byte arrives;
# a CPU hog holds the GVL meanwhile, so the request thread's wait comes
# when its data arrives, before the app is called. The laws checked hold
# whatever the scheduler does: each window's states add up to its wall
# time, and a thread's lines, with the time between them, add up to its
# counters.
require "json"
require "stringio"
require "rperf/rack"
require_relative "contention_helper"

class TestLogWindows < Test::Unit::TestCase
  include ContentionHelper

  STATES = %w[running gvl_wait blocked gc].freeze

  def setup
    Rperf.start(mode: :counters)
  end

  def teardown
    Rperf.stop if Rperf.running?
  end

  def json_lines(io)
    io.string.lines.map { |l| JSON.parse(l) }
  end

  # One request: the app burns `app` seconds; after its return the "server"
  # writes the response (`write` seconds of work) and runs the after-reply
  # hooks, as Puma does.
  def serve(mw, app_env, write:)
    hooks = []
    mw.call(app_env.merge("rack.after_reply" => hooks))
    burn_work(write)
    hooks.each(&:call)
  end

  def test_the_wait_before_the_app_is_in_the_line_and_the_lines_add_up
    io = StringIO.new
    log = Rperf::ContentionLog.new(output: io, format: :json, units: :ns, async: false)
    mw = Rperf::Rack::Middleware.new(->(_env) { burn_work(0.002) && [200, {}, ["ok"]] }, log: log)
    env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/cpu", "SCRIPT_NAME" => "" }
    r, w = IO.pipe
    requests = 6
    server = Thread.new do
      first = Rperf.thread_contention
      requests.times do
        r.read(1) # blocks: the request's bytes arrive with the pipe's
        serve(mw, env, write: 0.001)
      end
      [first, Rperf.thread_contention]
    end
    stop = false
    hog = Thread.new { burn_work(0.001) until stop }
    requests.times do
      sleep 0.03
      w.write("x") # the server thread becomes runnable while the hog holds the GVL
    end
    first, last = server.value
    stop = true
    hog.join

    lines = json_lines(io)
    assert_equal requests, lines.size, io.string
    lines.each do |l|
      %w[before after].each do |window|
        keys = %w[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].map { |k| "#{window}_#{k}" }
        assert keys.all? { |k| l.key?(k) }, "#{window} window in #{l}"
        assert_equal l["#{window}_wall_ns"], keys.sum { |k| l[k] }, "#{window} window states sum to its wall: #{l}"
      end
      assert_equal 0, l["before_blocked_ns"], "nothing blocks between the data arriving and the app: #{l}"
      assert_equal l["wall_ns"], %w[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].sum { |k| l[k] }
    end
    # The server thread waited for the GVL when its data arrived, behind
    # the hog: before the app ran. The lines hold that wait.
    before = lines.sum { |l| l["before_gvl_wait_ns"] }
    assert_operator before, :>, 0, "no line saw the wait before its app: #{lines}"
    # Its lines (before + app + after) and the time between them (blocked in
    # read) add up to the thread's counters over the run.
    total = last[:gvl_wait_ns] - first[:gvl_wait_ns]
    in_lines = lines.sum { |l| l["before_gvl_wait_ns"] + l["gvl_wait_ns"] + l["after_gvl_wait_ns"] }
    assert_operator in_lines, :<=, total
    # Between two lines the thread only finishes the hooks and blocks in
    # read: a GVL wait there is a preemption in a few microseconds of Ruby.
    # Under M:N threads a read waits for data, then blocks again in read(2),
    # and only the wait after that second block is "before" (logging.md).
    unless ENV["RUBY_MN_THREADS"] == "1"
      assert_operator total - in_lines, :<=, total * 0.05 + 2_000_000,
                      "GVL wait outside the lines: #{total - in_lines} of #{total} ns"
    end
    blocked = last[:blocked_ns] - first[:blocked_ns]
    lines_blocked = lines.sum { |l| l["blocked_ns"] + l["after_blocked_ns"] }
    assert_operator lines_blocked, :<, blocked, "the thread's idle time is outside its lines"
  ensure
    stop = true
  end

  # A server that never runs the after-reply hooks: the line is written,
  # without after_* fields, when the thread's next request starts, and by
  # flush for its last one.
  def test_a_line_whose_hook_never_runs_is_still_written
    io = StringIO.new
    log = Rperf::ContentionLog.new(output: io, format: :json, async: false)
    mw = Rperf::Rack::Middleware.new(->(_env) { [200, {}, []] }, log: log)
    env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/a", "SCRIPT_NAME" => "", "rack.after_reply" => [] }
    mw.call(env.dup.merge("rack.after_reply" => []))
    assert_empty io.string, "the line waits for the hook"
    mw.call(env.dup.merge("rack.after_reply" => []))
    assert_equal 1, json_lines(io).size, "the first line, when the next request started"
    log.flush
    lines = json_lines(io)
    assert_equal 2, lines.size
    lines.each { |l| refute l.key?("after_ms"), l.inspect }
    # The second request's window begins where the first one's line ended
    # (the thread did not block in between).
    assert lines.last.key?("before_ms"), lines.last.inspect
  end

  # The default writer: the request's thread hands the line over and goes
  # on, also when the output blocks; lines beyond the queue are dropped and
  # counted, never waited for.
  def test_a_blocked_output_never_blocks_the_request
    r, w = IO.pipe
    nil until w.write_nonblock("x" * 4096, exception: false) == :wait_writable # the pipe is full
    log = Rperf::ContentionLog.new(output: w, max_queued: 10)
    mw = Rperf::Rack::Middleware.new(->(_env) { [200, {}, []] }, log: log)
    env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/a", "SCRIPT_NAME" => "" }
    done = Thread.new { 50.times { mw.call(env.dup) } }
    assert done.join(10), "requests waited for a full pipe"
    stats = log.stats
    assert_equal 50, stats[:lines] + stats[:dropped_lines]
    assert_operator stats[:dropped_lines], :>=, 50 - 10 - 1
    refute log.flush(0.05), "the writer is still stuck on the full pipe"
    r.read_nonblock(1 << 20) while r.wait_readable(0.2) && !log.flush(0.01)
    assert log.flush(2)
  ensure
    r&.close
    w&.close
  end

  def test_lines_of_a_forked_child_carry_its_pid
    io_r, io_w = IO.pipe
    log = Rperf::ContentionLog.new(output: io_w, format: :json)
    mw = Rperf::Rack::Middleware.new(->(_env) { burn_work(0.002) && [200, {}, []] }, log: log)
    env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/w", "SCRIPT_NAME" => "" }
    mw.call(env.dup)
    log.flush
    pid = fork do
      io_r.close
      mw.call(env.dup)
      log.flush
      exit!(Rperf.running? ? 0 : 3)
    end
    _, status = Process.wait2(pid)
    assert status.success?, "the profile restarted in the child"
    io_w.close
    lines = io_r.read.lines.map { |l| JSON.parse(l) }
    assert_equal [Process.pid, pid], lines.map { |l| l["pid"] }
    child = lines.last
    assert_operator child["running_ms"], :>, 0, "the child's line has its counters: #{child}"
  end
end
