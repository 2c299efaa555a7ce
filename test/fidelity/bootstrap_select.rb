# frozen_string_literal: true

# Keeps only some of the bootstrap tests: given to bootstraptest/runner.rb
# after the test file, it is loaded once the file's assertions exist and
# before any runs, and keeps those whose line RPERF_FIDELITY_LINES lists
# (comma-separated). It selects only; the runner still numbers and reports
# the tests it keeps as usual.
lines = ENV.fetch("RPERF_FIDELITY_LINES").split(",").map { |l| Integer(l, 10) }
Assertion.all.each_value { |list| list.select! { |assertion| lines.include?(assertion.lineno) } }
