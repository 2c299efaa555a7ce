# frozen_string_literal: true

require "fileutils"
require "rbconfig"
require_relative "outcomes"

module Fidelity
  # Ruby's own tests that the suite runs, from the files bin/setup keeps
  # beside each Ruby it builds (<prefix>/test-sources): four test-unit files
  # run by Ruby's tool/test/runner.rb, and bootstraptest/test_ractor.rb run
  # by bootstraptest/runner.rb (each of its tests in a child Ruby). It makes
  # a file's command (the whole file, or only some of its tests) and reads
  # its outcomes; it neither runs nor compares them.
  class RubyTests
    class Missing < StandardError; end

    TestFile = Struct.new(:label, :kind, :path)
    UNIT = %w[test_thread.rb test_thread_queue.rb test_thread_cv.rb test_fiber.rb].freeze
    BOOTSTRAP = %w[test_ractor.rb].freeze
    # Ruby's tests give their child processes time limits, scaled by this in
    # every condition (Ruby's own knob for slow machines): a profiled child
    # takes longer to start and to end (it writes its report), and the suite
    # judges outcomes, not speed. Unscaled, a child that starts thousands of
    # threads got 1 s from SIGTERM to SIGABRT, less than its report took on a
    # loaded machine.
    TIMEOUT_SCALE = 3
    RECORDER = File.join(__dir__, "outcome_recorder.rb")
    SELECT = File.join(__dir__, "bootstrap_select.rb")

    def self.default_sources
      File.join(RbConfig::CONFIG["prefix"], "test-sources")
    end

    attr_reader :files

    # only: the labels of the files to run (nil: all).
    def initialize(sources, ruby:, only: nil)
      @sources = sources
      @ruby = ruby
      @files = UNIT.map { |f| TestFile.new(f, :unit, path("test/ruby/#{f}")) } +
               BOOTSTRAP.map { |f| TestFile.new(f, :bootstrap, path("bootstraptest/#{f}")) }
      unknown = (only || []) - @files.map(&:label)
      raise ArgumentError, "unknown test file #{unknown.join(', ')}" unless unknown.empty?

      @files.select! { |f| only.include?(f.label) } if only
      needed = [path("tool/lib/test/unit.rb"), path("tool/test/runner.rb"), path("bootstraptest/runner.rb"),
                *@files.map(&:path)]
      missing = needed.reject { |f| File.exist?(f) }
      return if missing.empty?

      raise Missing, "#{sources} lacks #{missing.map { |f| f.delete_prefix("#{sources}/") }.join(', ')} " \
                     "(bin/setup keeps these files beside each Ruby it builds)"
    end

    # [argv, env] of one run of file in condition, in dir: every test, or
    # only those named.
    def command(file, condition, dir:, seed:, excludes:, only: nil)
      if file.kind == :unit
        argv = [@ruby, "-I", path("tool/lib"), "-r", RECORDER, path("tool/test/runner.rb"), "-v", "--tty=no",
                "--color=never", "--seed=#{seed}", "--timeout-scale=#{TIMEOUT_SCALE}", "-X", excludes_dir(dir, excludes)]
        (only || []).each { |name| argv.push("-n", name) }
        [condition.wrap(argv << file.path, dir), { "RPERF_FIDELITY_OUTCOMES" => outcomes_path(dir) }]
      else
        argv = [@ruby, path("bootstraptest/runner.rb"), "--ruby=#{condition.child_ruby}", "-v", "--tty=no",
                "--color=never", "--dir=#{File.join(dir, 'bootstrap')}", file.path]
        return [argv, {}] unless only

        [argv << SELECT, { "RPERF_FIDELITY_LINES" => only.map { |name| name[/\d+\z/] }.join(",") }]
      end
    end

    # The outcomes of a run made by command (log: its output).
    def outcomes(file, dir:, log:)
      if file.kind == :unit
        File.exist?(outcomes_path(dir)) ? Outcomes.read_recorded(File.read(outcomes_path(dir))) : {}
      else
        Outcomes.read_bootstrap(File.read(log))
      end
    end

    private

    def path(relative)
      File.join(@sources, relative)
    end

    def outcomes_path(dir)
      File.join(dir, "outcomes.txt")
    end

    # Ruby's runner leaves out the methods that <dir>/<Class>.rb excludes.
    def excludes_dir(dir, excludes)
      root = File.join(dir, "excludes")
      FileUtils.mkdir_p(root)
      excludes.group_by { |name, _| name.split("#").first }.each do |klass, tests|
        file = File.join(root, "#{klass.gsub('::', '/')}.rb")
        FileUtils.mkdir_p(File.dirname(file))
        File.write(file, tests.map { |name, reason| "exclude(#{name.split('#').last.to_sym.inspect}, #{reason.inspect})\n" }.join)
      end
      root
    end
  end
end
