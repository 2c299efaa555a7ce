# frozen_string_literal: true

module Fidelity
  # Per-test outcomes (test name => :pass, :fail or :skip) read from what
  # Ruby's runners leave, and the rules that compare two runs. It reads and
  # compares only: running the tests is Fidelity::RubyTests' job, choosing
  # what to rerun the suite's (run.rb).
  module Outcomes
    RANK = { pass: 0, skip: 1, fail: 2 }.freeze

    module_function

    # The lines outcome_recorder.rb wrote ("Class#method\tpass"). A test
    # reported twice (its teardown failed after the test) keeps its worst.
    def read_recorded(text)
      text.each_line.with_object({}) do |line, outcomes|
        name, outcome = line.chomp.split("\t", 2)
        next unless name && RANK.key?(outcome&.to_sym)

        outcome = outcome.to_sym
        outcomes[name] = [outcomes[name], outcome].compact.max_by { |o| RANK[o] }
      end
    end

    # bootstraptest/runner.rb -v writes "#ID FILE:LINE " before each test and
    # then "." (passed), "F" (failed) or "E" (raised); a test that prints
    # its skip message passes. Names are "FILE:LINE".
    BOOTSTRAP_LINE = /^#\d+ (\S+:\d+) ([.FE])/

    def read_bootstrap(text)
      text.scan(BOOTSTRAP_LINE).to_h { |name, mark| [name, mark == "." ? :pass : :fail] }
    end

    # The tests two runs do not agree on: a test missing from one run (it
    # ended early) counts as not agreeing.
    def differing(left, right)
      (left.keys | right.keys).reject { |name| left[name] == right[name] }.sort
    end

    # The outcome a series of runs of one test gave most often (ties go to
    # the worse outcome); nil for no runs.
    def usual(runs)
      return nil if runs.empty?

      runs.tally.max_by { |outcome, count| [count, RANK.fetch(outcome, 3)] }.first
    end

    # [passed, failed, skipped]
    def counts(outcomes)
      %i[pass fail skip].map { |o| outcomes.count { |_, v| v == o } }
    end
  end
end
