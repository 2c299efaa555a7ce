# frozen_string_literal: true

# The fidelity suite's own parts (test/fidelity): outcomes read and compared,
# Ruby's runner recording each test's outcome, the silent profile_at_load.rb,
# the record_ruby wrapper, and the whole suite failing when a profiled run
# changes a test's outcome. Parts that need Ruby's test sources (bin/setup
# keeps them beside the Rubies it builds) are omitted without them.
require "fileutils"
require "open3"
require "rbconfig"
require "tmpdir"
require_relative "contention_helper"
require_relative "../fidelity/outcomes"
require_relative "../fidelity/ruby_tests"

class TestFidelity < Test::Unit::TestCase
  FIDELITY = File.expand_path("../fidelity", __dir__)
  ROOT = File.expand_path("../..", __dir__)
  EXT = $LOAD_PATH.map { |d| File.expand_path(d) }.find { |d| File.exist?(File.join(d, "rperf", "rperf_ext.so")) }
  SOURCES = Fidelity::RubyTests.default_sources
  CLI = EXT && File.expand_path("../bin/rperf-gvl", EXT)

  # A test-unit file whose outcomes are known: one each, and one that fails
  # only when the profiler is loaded.
  UNIT_FILE = <<~RUBY
    require "test/unit"
    class TestKnown < Test::Unit::TestCase
      def test_passes = assert(Thread.new { :ran }.value)
      def test_fails = assert_equal(1, 2)
      def test_raises = raise("boom")
      def test_skips = omit("not here")
      def test_unprofiled = assert(!defined?(Rperf), "the profiler is loaded")
    end
    class TestTeardown < Test::Unit::TestCase
      def test_teardown_fails = assert(true)
      def teardown = raise("teardown")
    end
  RUBY

  def needs_sources
    omit "no Ruby test sources at #{SOURCES} (bin/setup keeps them beside the Rubies it builds)" unless
      File.exist?(File.join(SOURCES, "tool/test/runner.rb"))
  end

  def test_recorded_outcomes_keep_each_tests_worst
    text = "A#t1\tpass\nA#t2\tpass\nA#t2\tfail\nA#t3\tskip\nbroken line\nA#t4\tmaybe\n"
    assert_equal({ "A#t1" => :pass, "A#t2" => :fail, "A#t3" => :skip }, Fidelity::Outcomes.read_recorded(text))
  end

  def test_bootstrap_outcomes_from_the_runners_verbose_lines
    text = "test_ractor.rb   \n#1 test_ractor.rb:2 . 0.320\n#2 test_ractor.rb:7 F 0.455\n" \
           "#3 test_ractor.rb:12 E\n#4 test_ractor.rb:30 . 0.4\n#2 test_ractor.rb:7: expected 1\n"
    assert_equal({ "test_ractor.rb:2" => :pass, "test_ractor.rb:7" => :fail, "test_ractor.rb:12" => :fail,
                   "test_ractor.rb:30" => :pass }, Fidelity::Outcomes.read_bootstrap(text))
  end

  def test_differing_counts_a_missing_test
    left = { "a" => :pass, "b" => :fail, "c" => :pass }
    right = { "a" => :pass, "b" => :pass }
    assert_equal %w[b c], Fidelity::Outcomes.differing(left, right)
    assert_empty Fidelity::Outcomes.differing(left, left.dup)
  end

  def test_usual_is_the_most_frequent_outcome_ties_to_the_worse
    assert_equal :pass, Fidelity::Outcomes.usual(%i[pass fail pass])
    assert_equal :fail, Fidelity::Outcomes.usual(%i[pass fail])
    assert_nil Fidelity::Outcomes.usual([])
    assert_equal [2, 1, 1], Fidelity::Outcomes.counts("a" => :pass, "b" => :pass, "c" => :fail, "d" => :skip)
  end

  # Ruby's own runner, with outcome_recorder.rb loaded, records every test.
  def test_the_recorder_inside_rubys_runner
    needs_sources
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "test_known.rb"), UNIT_FILE)
      outcomes = File.join(dir, "outcomes.txt")
      _, status = Open3.capture2e({ "RPERF_FIDELITY_OUTCOMES" => outcomes, "RUBYOPT" => nil, "RUBYLIB" => nil },
                                  RbConfig.ruby, "-I", File.join(SOURCES, "tool/lib"), "-r",
                                  File.join(FIDELITY, "outcome_recorder.rb"), File.join(SOURCES, "tool/test/runner.rb"),
                                  File.join(dir, "test_known.rb"))
      refute status.success?
      assert_equal({ "TestKnown#test_passes" => :pass, "TestKnown#test_fails" => :fail, "TestKnown#test_raises" => :fail,
                     "TestKnown#test_skips" => :skip, "TestTeardown#test_teardown_fails" => :fail,
                     "TestKnown#test_unprofiled" => :pass }, Fidelity::Outcomes.read_recorded(File.read(outcomes)))
    end
  end

  # profile_at_load.rb: the program's output is its own, the child it
  # starts is profiled too, each process writes its report.
  def test_profile_at_load_is_silent_and_writes_each_processs_report
    omit "no extension on the load path" unless EXT
    program = <<~RUBY
      2.times.map { Thread.new { sleep 0.01 } }.each(&:join)
      $stderr.print "err"
      print "out", IO.popen([RbConfig.ruby, "-e", "print defined?(Rperf)"], &:read)
    RUBY
    plain, plain_err, = Open3.capture3({ "RUBYOPT" => nil, "RUBYLIB" => nil }, RbConfig.ruby, "-e", program)
    assert_equal ["outnil", "err"], [plain, plain_err].map { |s| s.sub(/\A(out)\z/, "\\1nil") }
    %w[wall counters].each do |mode|
      Dir.mktmpdir do |dir|
        env = { "RUBYLIB" => [File.join(ROOT, "lib"), EXT, FIDELITY].join(":"), "RUBYOPT" => "-rprofile_at_load",
                "RPERF_FIDELITY_MODE" => mode, "RPERF_FIDELITY_DIR" => dir }
        out, err, status = Open3.capture3(env, RbConfig.ruby, "-e", program)
        assert status.success?, err
        assert_equal ["outconstant", "err"], [out, err], mode
        reports = Dir[File.join(dir, "#{mode}-*.json")]
        assert_equal 2, reports.size, Dir.children(dir).inspect
        assert_equal 3, reports.map { |r| Rperf::Report.load(r).threads.size }.max, mode
        assert_empty Dir[File.join(dir, "error-*")]
      end
    end
  end

  # record_ruby: the program's stdout and stderr stay its caller's, record's
  # go to the log, and a program killed by a signal looks killed by it.
  def test_record_ruby_keeps_the_programs_output_and_its_signal
    omit "no rperf-gvl next to the extension" unless CLI && File.executable?(CLI)
    Dir.mktmpdir do |dir|
      env = { "RPERF_FIDELITY_CLI" => CLI, "RPERF_FIDELITY_RUBY" => RbConfig.ruby, "RPERF_FIDELITY_DIR" => dir,
              "RUBYOPT" => nil, "RUBYLIB" => nil }
      wrapper = File.join(FIDELITY, "record_ruby")
      out, err, status = Open3.capture3(env, wrapper, "-e", "Thread.new {}.join; print :out; $stderr.print :err; exit 3")
      assert_equal ["out", "err", 3], [out, err, status.exitstatus]
      assert_match(/report written to/, File.read(File.join(dir, "record.log")))
      assert_equal 1, Dir[File.join(dir, "record-*.json")].size
      _, _, status = Open3.capture3(env, wrapper, "-e", "Process.kill(:KILL, $$)")
      assert_equal Signal.list["KILL"], status.termsig, status.inspect
    end
  end

  # The whole suite on a test file that fails only under the profiler: the
  # reruns confirm it, the table marks it, the exit status is 1.
  def test_the_suite_fails_on_a_difference
    needs_sources
    omit "no rperf-gvl next to the extension" unless CLI && File.executable?(CLI)
    Dir.mktmpdir do |dir|
      sources = File.join(dir, "sources")
      FileUtils.mkdir_p(File.join(sources, "test/ruby"))
      FileUtils.cp_r(%w[tool bootstraptest].map { |d| File.join(SOURCES, d) }, sources)
      File.write(File.join(sources, "test/ruby/test_thread_cv.rb"), UNIT_FILE)
      out, status = Open3.capture2e({ "RUBYOPT" => nil, "RUBYLIB" => nil }, RbConfig.ruby, "-I", File.join(ROOT, "lib"),
                                    "-I", EXT, File.join(FIDELITY, "run.rb"), "--build", File.dirname(EXT),
                                    "--sources", sources, "--only", "test_thread_cv.rb", "--conditions", "counters",
                                    "--work", dir)
      assert_equal 1, status.exitstatus, out
      assert_match(%r{^test_thread_cv\.rb +2/3/1 +1/4/1 \*$}, out)
      assert_match(/^DIFFERS \(counters\): test_thread_cv\.rb TestKnown#test_unprofiled: plain pass pass pass, counters fail fail fail$/, out)
      assert_match(/^1 compared, 1 differ$/, out)
      assert_equal 1, out.scan(/^DIFFERS/).size, out
    end
  end
end
