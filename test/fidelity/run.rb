# frozen_string_literal: true

# The fidelity suite: Ruby's own thread, queue, condition variable, fiber
# and Ractor tests give the same per-test outcomes (pass, fail, skip)
# without the profiler and under it, in three ways: `rperf-gvl record`, wall
# mode with the timeline and counters mode. A test whose outcome differs is
# rerun alone a few times in both conditions before it counts: it differs
# when the outcome each condition gives most often is not the same. A
# profiled run must also leave its reports. It prints a table (file by
# condition: passed/failed/skipped), then "N compared, N differ" (one
# comparison per file and profiled condition), and exits 1 when any
# differs. It measures no overhead and checks no report's numbers
# (test/ruby does both).
#
#   ruby -I lib -I build/ext test/fidelity/run.rb [--build DIR] [--sources DIR]
#        [--only FILE,...] [--conditions record,wall,counters] [--seed N]
#        [--work DIR] [--keep]
#
# The runs' directories go in a new directory under --work (default: the
# temporary directory), removed at the end unless --keep or a difference.
#
# Exit status: 0 all the same, 1 a difference, 2 bad usage, 3 no test
# sources for this Ruby (bin/setup keeps them beside each Ruby it builds).
require "optparse"
require "rbconfig"
require "tmpdir"
require "rperf"
require_relative "conditions"
require_relative "excludes"
require_relative "outcomes"
require_relative "ruby_tests"
require_relative "timed_run"

module Fidelity
  # One run of one file in one condition.
  Run = Struct.new(:outcomes, :problems, :seconds, :log, keyword_init: true)
  # A file's runs, by condition name, and what the reruns found.
  Row = Struct.new(:file, :runs, :differences, :agreed, keyword_init: true)

  class Suite
    RERUNS = 3 # per condition, for each test whose outcome differed
    MAX_RERUN_TESTS = 12 # more differing tests than this: the whole file again first
    TIMEOUT = { unit: 900, bootstrap: 1200 }.freeze # seconds, per run

    def initialize(tests, conditions, work:, seed:)
      @tests = tests
      @plain, *@profiled = conditions
      @work = work
      @seed = seed
      @serial = 0
    end

    def rows
      @tests.files.map do |file|
        plain = run(file, @plain)
        row = Row.new(file: file, runs: { "plain" => plain }, differences: [], agreed: [])
        row.differences << [@plain.name, "no outcomes (see #{plain.log})"] if plain.outcomes.empty?
        @profiled.each do |condition|
          got = row.runs[condition.name] = run(file, condition)
          got.problems.each { |p| row.differences << [condition.name, p] }
          judge(file, condition, Outcomes.differing(plain.outcomes, got.outcomes), row)
        end
        row
      end
    end

    private

    def excluded(file)
      EXCLUDED.fetch(file.label, {})
    end

    # Runs file in condition (only: some of its tests) in a directory of its own.
    def run(file, condition, only: nil)
      dir = File.join(@work, format("%03d-%s-%s", @serial += 1, file.label.delete_suffix(".rb"), condition.name))
      Dir.mkdir(dir)
      argv, env = @tests.command(file, condition, dir: dir, seed: @seed, excludes: excluded(file), only: only)
      log = File.join(dir, "log.txt")
      result = TimedRun.call(argv, env: condition.env(dir).merge(env), chdir: dir, log: log,
                                   timeout: TIMEOUT.fetch(file.kind))
      outcomes = @tests.outcomes(file, dir: dir, log: log)
      problems = []
      problems << "killed after #{TIMEOUT.fetch(file.kind)} s" if result.timed_out
      unless only
        problems.concat(condition.problems(dir, main_pid: file.kind == :unit ? result.pid : nil,
                                                min_reports: file.kind == :unit ? 0 : outcomes.size))
        say(format("%-20s %-9s %6.1f s  %d tests", file.label, condition.name, result.seconds, outcomes.size))
      end
      Run.new(outcomes: outcomes, problems: problems, seconds: result.seconds, log: log)
    end

    # Tests that differed once are rerun alone, RERUNS times in each
    # condition; those whose usual outcome still differs are differences.
    def judge(file, condition, names, row)
      return if names.empty?

      if names.size > MAX_RERUN_TESTS
        again = Outcomes.differing(run(file, @plain, only: nil).outcomes, run(file, condition, only: nil).outcomes)
        names &= again
        if names.size > MAX_RERUN_TESTS
          names.each { |n| row.differences << [condition.name, "#{n}: differs in two whole-file runs"] }
          return
        end
      end
      series = { @plain => Hash.new { |h, k| h[k] = [] }, condition => Hash.new { |h, k| h[k] = [] } }
      RERUNS.times do
        series.each do |cond, outcomes|
          got = run(file, cond, only: names).outcomes
          names.each { |n| outcomes[n] << got.fetch(n, :fail) }
        end
      end
      names.each do |n|
        plain_runs = series[@plain][n]
        runs = series[condition][n]
        note = "#{n}: plain #{plain_runs.join(' ')}, #{condition.name} #{runs.join(' ')}"
        if Outcomes.usual(plain_runs) == Outcomes.usual(runs)
          row.agreed << [condition.name, note]
        else
          row.differences << [condition.name, note]
        end
      end
    end

    def say(line)
      puts "fidelity: #{line}"
      $stdout.flush
    end
  end

  # The table and the closing line.
  module Table
    module_function

    def print(rows, conditions, seed)
      names = conditions.map(&:name)
      puts
      puts "#{RUBY_DESCRIPTION[/\A\S+ \S+/]}: passed/failed/skipped per file and condition " \
           "(* differs; seed #{seed})"
      puts (format("%-20s", "file") + names.map { |n| format(" %-14s", n) }.join).rstrip
      rows.each do |row|
        cells = names.map do |n|
          run = row.runs[n]
          mark = row.differences.any? { |c, _| c == n } ? " *" : ""
          format(" %-14s", run ? Outcomes.counts(run.outcomes).join("/") + mark : "-")
        end
        puts (format("%-20s", row.file.label) + cells.join).rstrip
      end
      puts (format("%-20s", "seconds") +
            names.map { |n| format(" %-14.0f", rows.sum { |r| r.runs[n]&.seconds.to_f }) }.join).rstrip
      rows.each do |row|
        EXCLUDED.fetch(row.file.label, {}).each do |name, reason|
          puts "excluded everywhere: #{row.file.label} #{name}: #{reason}"
        end
      end
      rows.each { |row| row.agreed.each { |c, note| puts "rerun, then the same (#{c}): #{row.file.label} #{note}" } }
      rows.each { |row| row.differences.each { |c, note| puts "DIFFERS (#{c}): #{row.file.label} #{note}" } }
      compared = rows.size * (names.size - 1)
      differ = rows.sum { |row| row.differences.map(&:first).uniq.size }
      puts "#{compared} compared, #{differ} differ"
      differ
    end
  end
end

options = { build: "build", sources: Fidelity::RubyTests.default_sources, only: nil,
            conditions: %w[record wall counters], seed: rand(1..99_999), work: Dir.tmpdir, keep: false }
begin
  OptionParser.new do |o|
    o.on("--build DIR") { |v| options[:build] = v }
    o.on("--sources DIR") { |v| options[:sources] = v }
    o.on("--only FILES", Array) { |v| options[:only] = v }
    o.on("--conditions LIST", Array) { |v| options[:conditions] = v }
    o.on("--seed N", Integer) { |v| options[:seed] = v }
    o.on("--work DIR") { |v| options[:work] = v }
    o.on("--keep") { options[:keep] = true }
  end.parse!(ARGV)
  raise OptionParser::InvalidArgument, ARGV.join(" ") unless ARGV.empty?

  build = File.expand_path(options[:build])
  cli = File.join(build, "bin", "rperf-gvl")
  raise OptionParser::InvalidArgument, "--build #{build}: no bin/rperf-gvl in it" unless File.executable?(cli)

  root = File.expand_path("../..", __dir__)
  conditions = ["plain", *options[:conditions]].uniq.map do |name|
    Fidelity::Condition.new(name, ruby: RbConfig.ruby, cli: cli, lib: File.join(root, "lib"), ext: File.join(build, "ext"))
  end
  tests = Fidelity::RubyTests.new(options[:sources], ruby: RbConfig.ruby, only: options[:only])
rescue OptionParser::ParseError, ArgumentError => e
  warn "fidelity: #{e.message}"
  exit 2
rescue Fidelity::RubyTests::Missing => e
  warn "fidelity: #{e.message}"
  exit 3
end

work = Dir.mktmpdir("rperf-fidelity-", options[:work])
differ = 1
begin
  rows = Fidelity::Suite.new(tests, conditions, work: work, seed: options[:seed]).rows
  differ = Fidelity::Table.print(rows, conditions, options[:seed])
ensure
  if options[:keep] || differ.positive?
    puts "fidelity: runs kept in #{work}"
  else
    FileUtils.rm_rf(work)
  end
end
exit(differ.zero? ? 0 : 1)
