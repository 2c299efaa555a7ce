# frozen_string_literal: true

# rperf/autorecord through RUBYOPT, as `rperf-gvl record` uses it.
require "tmpdir"
require "rbconfig"
require_relative "contention_helper"

class TestApiAutorecord < Test::Unit::TestCase
  PROGRAM = <<~RUBY
    t = 3.times.map { |i| Thread.new { Thread.current.name = "job\#{i}"; x = 0; 3_000_000.times { x += 1 }; x } }
    t.each(&:join)
    pid = fork { exit!(0) }
    Process.wait(pid)
    system(RbConfig.ruby, "-e", "exit 0") # inherits RUBYOPT, must not overwrite the report
  RUBY

  # From Ruby's own test_thread.rb (test_main_thread_status_at_exit): at exit
  # Ruby ends the other threads before one of them can see the main thread
  # stopped, so the thread below never reaches `p :mth_stopped`.
  EXIT_RACE = <<~RUBY
    q = Thread::Queue.new
    Thread.new(Thread.current) do |mth|
      q.push nil
      mth.run
      Thread.pass until mth.stop?
      p :mth_stopped
    ensure
      puts "\#{mth.alive?} \#{mth.status} \#{Thread.current.status}"
    end
    q.pop
  RUBY

  def run_program(env, program = PROGRAM)
    includes = $LOAD_PATH.select { |d| File.exist?(File.join(d, "rperf.rb")) || Dir.exist?(File.join(d, "rperf")) }
    rubyopt = (includes.map { |d| "-I#{File.expand_path(d)}" } + ["-rrperf/autorecord"]).join(" ")
    out = IO.popen(env.merge("RUBYOPT" => rubyopt), [RbConfig.ruby, "-e", program], err: %i[child out], &:read)
    [out, $?]
  end

  def test_writes_the_report_at_exit
    Dir.mktmpdir do |dir|
      path = File.join(dir, "auto.json.gz")
      out, status = run_program("RPERF_GVL_OUTPUT" => path, "RPERF_GVL_FREQUENCY" => "250")
      assert status.success?, out
      report = Rperf::Report.load(path)
      assert_equal 250, report.meta["frequency"]
      jobs = report.threads.select { |t| t.name.start_with?("job") }
      assert_equal 3, jobs.size
      jobs.each { |t| assert_operator t.gvl_wait_ns, :>, 0 }
    end
  end

  # The report used to be written in an at_exit, before Ruby ends the other
  # threads: while the write released the GVL they ran on and saw the main
  # thread stopped. Written after they are ended, the output stays Ruby's.
  def test_other_threads_do_not_run_on_while_the_report_is_written
    plain = IO.popen([RbConfig.ruby, "-e", EXIT_RACE], err: %i[child out], &:read)
    assert_equal "false false aborting\n", plain
    Dir.mktmpdir do |dir|
      3.times do |i|
        path = File.join(dir, "race#{i}.json")
        out, status = run_program({ "RPERF_GVL_OUTPUT" => path }, EXIT_RACE)
        assert status.success?, out
        assert_equal plain, out, "run #{i}"
        assert_equal 2, Rperf::Report.load(path).threads.size
      end
    end
  end

  def test_bad_frequency_is_a_clear_error
    Dir.mktmpdir do |dir|
      path = File.join(dir, "auto.json")
      out, status = run_program("RPERF_GVL_OUTPUT" => path, "RPERF_GVL_FREQUENCY" => "fast")
      assert_equal 2, status.exitstatus
      assert_match(/rperf-gvl: RPERF_GVL_FREQUENCY="fast" is invalid/, out)
      refute File.exist?(path)
    end
  end

  def test_nothing_happens_without_output
    out, status = run_program({})
    assert status.success?, out
    assert_empty out
  end
end
