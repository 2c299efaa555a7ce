# frozen_string_literal: true

# Records each test's outcome: loaded into Ruby's own test runner
# (`ruby -I tool/lib -r outcome_recorder tool/test/runner.rb ...`), it appends
# one line per test result to the file RPERF_FIDELITY_OUTCOMES:
# "Class#method<TAB>pass|fail|skip". The runner's own output is left as it is
# (a test's output can end up inside it). It does not judge the outcomes: a
# test reported twice (a teardown failing after the test) is folded by the
# reader (Outcomes.read_recorded).
require "test/unit" # Ruby's own framework, from tool/lib

module OutcomeRecorder
  PATH = ENV.fetch("RPERF_FIDELITY_OUTCOMES")

  def self.outcome(error)
    case error
    when nil then "pass"
    when Test::Unit::PendedError then "skip"
    else "fail"
    end
  end

  # Ruby 3.3 passes five arguments, 3.4 also the test's source location.
  def record(suite, method, assertions, time, error, *rest)
    File.open(PATH, "a") { |f| f.puts "#{suite.name}##{method}\t#{OutcomeRecorder.outcome(error)}" }
    super
  end
end

Test::Unit::Runner.prepend(OutcomeRecorder)
