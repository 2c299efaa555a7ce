# frozen_string_literal: true

# Debian's Sidekiq 6.4 for real, with a local redis-server on a loopback
# port: the job middleware writes one line per job, labelled by job class
# and queue, its windows adding up, and the job threads' wait before each
# job (fetched, then waiting for the GVL) in the line.
require "test/unit"
require "json"
require "tmpdir"
require_relative "components"
require_relative "server_process"

class TestSidekiq < Test::Unit::TestCase
  JOBS = 40 # of each of the three classes

  def setup
    missing = Servers::Components.missing
    omit(missing) if missing && !ENV["CI"]
    flunk(missing) if missing
    @dir = Dir.mktmpdir("rperf-sidekiq")
    @log = File.join(@dir, "lines.jsonl")
    port = Servers::ServerProcess.free_port
    @redis = Servers::ServerProcess.new(
      ["redis-server", "--port", port.to_s, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
       "--dir", @dir], log: File.join(@dir, "redis.log"), port: port
    ).wait_ready
  end

  def teardown
    @sidekiq&.stop
    @redis&.stop
    FileUtils.rm_rf(@dir) if @dir
  end

  STATES = %w[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze

  def test_one_line_per_job_with_its_windows
    argv = [RbConfig.ruby, *Servers::Components.ruby_args, "-e",
            'require "sidekiq/cli"; cli = Sidekiq::CLI.instance; cli.parse(ARGV); cli.run', "--",
            "-r", File.expand_path("sidekiq_jobs.rb", __dir__), "-c", "5", "-q", "default", "-q", "io"]
    env = Servers::Components.env.merge("RPERF_TEST_LOG" => @log, "RPERF_TEST_JOBS" => JOBS.to_s,
                                        "REDIS_URL" => "redis://127.0.0.1:#{@redis.port}/0")
    @sidekiq = Servers::ServerProcess.new(argv, env: env, log: File.join(@dir, "sidekiq.log"), chdir: @dir)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 120
    until (File.exist?(@log) && File.foreach(@log).count >= 3 * JOBS) ||
          Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      flunk("sidekiq exited: #{File.read(File.join(@dir, 'sidekiq.log'))[-3000..]}") if @sidekiq.exited?
      sleep 0.2
    end
    @sidekiq.stop
    lines = File.readlines(@log).map { |l| JSON.parse(l) }
    by = lines.group_by { |l| [l["label.job"], l["label.queue"]] }
    assert_equal({ %w[CpuJob default] => JOBS, %w[IoJob io] => JOBS, %w[HogJob default] => JOBS },
                 by.transform_values(&:size))
    lines.each do |l|
      assert_equal "job", l["kind"]
      assert_match(/\A\h{24}\z/, l["job_id"])
      assert_equal l["wall_ns"], STATES.sum { |k| l[k] }, l.inspect
      next unless l.key?("before_wall_ns")

      assert_equal l["before_wall_ns"], STATES.sum { |k| l["before_#{k}"] }, l.inspect
      assert_equal 0, l["before_blocked_ns"]
    end
    assert_operator lines.count { |l| l.key?("before_wall_ns") }, :>=, lines.size * 0.9,
                    "a job's thread became runnable when its job was fetched"
    io = by[%w[IoJob io]]
    assert_operator io.sum { |l| l["blocked_io_ns"].to_i + l["blocked_sleep_ns"].to_i }, :>=, JOBS * 4_000_000,
                    "the IO jobs slept"
    # The hog keeps the GVL: jobs fetched meanwhile waited before they ran.
    assert_operator lines.sum { |l| l["before_gvl_wait_ns"].to_i }, :>, 0
    refute_match(/not running|could not restart/, File.read(File.join(@dir, "sidekiq.log")))
  end
end
