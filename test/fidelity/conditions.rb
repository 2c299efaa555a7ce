# frozen_string_literal: true

module Fidelity
  # The four conditions the suite runs Ruby's tests in: plain (no profiler),
  # record (`rperf-gvl record`), wall (Rperf.start(mode: :wall) with the
  # timeline) and counters (Rperf.start(mode: :counters)); the last two
  # through profile_at_load.rb in RUBYOPT, so child processes are profiled
  # too. A condition makes a run's environment and command, and afterwards
  # checks that the profiler did run: its reports are there and load, and it
  # noted no error. It does not read test outcomes.
  class Condition
    NAMES = %w[plain record wall counters].freeze
    HERE = __dir__

    attr_reader :name

    def initialize(name, ruby:, cli:, lib:, ext:)
      raise ArgumentError, "unknown condition #{name} (expected one of #{NAMES.join(', ')})" unless NAMES.include?(name)

      @name = name
      @ruby = ruby
      @cli = cli
      @lib = lib
      @ext = ext
    end

    def profiled?
      name != "plain"
    end

    # The environment of a run whose reports go to dir. Nothing of the
    # caller's Ruby settings leaks in; RUBY is what Ruby's tests run as a
    # child Ruby.
    def env(dir)
      base = { "RUBYOPT" => nil, "RUBYLIB" => nil, "RPERF_GVL_OUTPUT" => nil, "MAKEFLAGS" => nil,
               "MFLAGS" => nil, "RUBY" => @ruby }
      case name
      when "wall", "counters"
        base.merge("RUBYLIB" => [@lib, @ext, HERE].join(File::PATH_SEPARATOR), "RUBYOPT" => "-rprofile_at_load",
                   "RPERF_FIDELITY_MODE" => name, "RPERF_FIDELITY_DIR" => dir)
      when "record"
        base.merge("RPERF_FIDELITY_CLI" => @cli, "RPERF_FIDELITY_RUBY" => @ruby, "RPERF_FIDELITY_DIR" => dir)
      else base
      end
    end

    # The command of a process that runs the tests itself.
    def wrap(argv, dir)
      name == "record" ? [@cli, "record", "-o", File.join(dir, "record-main.json"), "--", *argv] : argv
    end

    # The command a runner starts once per test (bootstraptest's --ruby).
    def child_ruby
      name == "record" ? File.join(HERE, "record_ruby") : @ruby
    end

    # What shows the profiler did not run as it should, as sentences: the
    # main process's report (main_pid: the process that ran the tests
    # itself, nil when each test ran in a child) is missing or has fewer
    # than two threads (every test file starts threads), fewer reports than
    # tests ran in children (min_reports), a report that does not load, an
    # error profile_at_load.rb noted.
    def problems(dir, main_pid:, min_reports: 0)
      return [] unless profiled?

      found = []
      reports = Dir[File.join(dir, "#{name}-*.json")]
      main = main_pid && File.join(dir, name == "record" ? "record-main.json" : "#{name}-#{main_pid}.json")
      Dir[File.join(dir, "error-*.txt")].first(3).each { |f| found << "#{File.basename(f)}: #{File.read(f).strip}" }
      found << "#{reports.size} reports for #{min_reports} tests run in child processes" if reports.size < min_reports
      found << "no report of the test process" if main && !File.exist?(main)
      reports.each do |path|
        threads = Rperf::Report.load(path).threads.size
        found << "#{File.basename(path)} has #{threads} thread(s)" if main && path == main && threads < 2
      rescue StandardError => e
        found << "#{File.basename(path)} does not load: #{e.message}"
      end
      found
    end
  end
end
